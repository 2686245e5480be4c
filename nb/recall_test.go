package nb

import (
	"slices"
	"testing"
)

// TestReachTable: a row per model in the models' order, its reach beside its mean ± s.e. over seeds.
func TestReachTable(t *testing.T) {
	models := []ReachModel{{Variant{"local", "model=local window=8"}, "k·L = 16"}, {Variant{"dense", "model=full"}, "all (63)"}}
	table := ReachTable("recall", models, map[string][]float64{"dense": {100, 100}, "local": {4, 8}})
	if !slices.Equal(table.Header, []string{"model", "computed reach", "accuracy"}) || len(table.Rows) != 2 {
		t.Fatalf("header %v, %d rows", table.Header, len(table.Rows))
	}
	if got := table.Rows[0]; !slices.Equal(got, []string{"local", "k·L = 16", "6.0 ± 2.0"}) {
		t.Errorf("local row %v", got)
	}
	if got := table.Rows[1]; !slices.Equal(got, []string{"dense", "all (63)", "100.000 ± 0.000"}) {
		t.Errorf("dense row %v", got)
	}
}
