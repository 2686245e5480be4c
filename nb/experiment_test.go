package nb

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ecpi-dev/ecpi/results"
)

// TestSweepTable: a column per rate of the grid, a row per model with the
// figure show writes, "diverged" where the rate diverged, then the rate kept.
func TestSweepTable(t *testing.T) {
	e := &Experiment{File: results.File{Sweeps: []results.Sweep{
		{Model: "dense", LR: []float64{1e-3, 2e-3, 4e-3}, Valid: []float64{0.25, 0.125, 0}, Diverged: []bool{false, false, true}, Chosen: 2e-3},
		{Model: "ECP", LR: []float64{1e-3, 2e-3, 4e-3}, Valid: []float64{0.5, 0.375, 0.0625}, Chosen: 4e-3}, // no Diverged: a sweep saved before it existed
	}}}
	accuracy := func(errorRate float64) string { return fmt.Sprintf("%.1f", 100*(1-errorRate)) }
	got := e.SweepTable("sweep", accuracy)
	if want := []string{"model", "lr = 0.001", "lr = 0.002", "lr = 0.004", "chosen"}; got.Caption != "sweep" || !slices.Equal(got.Header, want) {
		t.Errorf("caption %q, header %q; want %q", got.Caption, got.Header, want)
	}
	want := [][]string{{"dense", "75.0", "87.5", "diverged", "0.002"}, {"ECP", "50.0", "62.5", "93.8", "0.004"}}
	if len(got.Rows) != len(want) {
		t.Fatalf("rows %q, want %q", got.Rows, want)
	}
	for i := range want {
		if !slices.Equal(got.Rows[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, got.Rows[i], want[i])
		}
	}
	if empty := (&Experiment{}).SweepTable("none", accuracy); !slices.Equal(empty.Header, []string{"model", "chosen"}) || len(empty.Rows) != 0 {
		t.Errorf("no sweeps: header %q, rows %q", empty.Header, empty.Rows)
	}
}

// TestUndertrainedModelsGetSeedOneOnly: a model whose best sweep run did not
// beat the floor gets the sweep's seed only; the others every seed.
func TestUndertrainedModelsGetSeedOneOnly(t *testing.T) {
	grid := []float64{2e-3, 4e-3, 8e-3, 1.6e-2}
	e := &Experiment{File: results.File{Sweeps: []results.Sweep{
		{Model: "dense", LR: grid, Valid: []float64{2.2, 2.0, 1.9, 2.0}, Chosen: 8e-3, Floor: 2.386},
		{Model: "PerceiverAR", LR: grid, Valid: []float64{3.48, 3.47, 3.47, 3.52}, Chosen: 4e-3, Floor: 2.386},
		{Model: "ECP", LR: grid, Valid: []float64{3.0, 2.9, 2.8, 2.7}, Chosen: 1.6e-2}, // no floor
	}}}
	seeds := e.seedsOf(5)
	for label, want := range map[string]int{"dense": 5, "PerceiverAR": 1, "ECP": 5, "not swept": 5} {
		if got := seeds(Variant{Label: label}); got != want {
			t.Errorf("%s: %d seeds, want %d", label, got, want)
		}
	}
}

// TestRecordWritesLabelsInSortedOrder: the results file does not depend on
// map order, so a notebook run again leaves it unchanged.
func TestRecordWritesLabelsInSortedOrder(t *testing.T) {
	runs := map[string][]Trained{"π": {{Steps: 1}, {Steps: 2}}, "dense": {{Steps: 3}}, "BigBird": {{Steps: 4}}}
	e := &Experiment{}
	e.Record("lm", runs, "valid_bpc", func(r Trained) float64 { return float64(r.Steps) })
	var got []string
	for _, r := range e.Runs {
		got = append(got, fmt.Sprintf("%s/%d=%g", r.Model, r.Seed, r.Value))
	}
	if want := []string{"BigBird/1=4", "dense/1=3", "π/1=1", "π/2=2"}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
}
