package nb

import (
	"slices"
	"testing"
)

func TestRunsAgainstN(t *testing.T) {
	lengths, ms := RunsAgainstN([]Timed{{N: 512, RunsMS: []float64{1, 2, 3}}, {N: 1024, RunsMS: []float64{4, 5}}})
	if !slices.Equal(lengths, []float64{512, 512, 512, 1024, 1024}) || !slices.Equal(ms, []float64{1, 2, 3, 4, 5}) {
		t.Errorf("runs against n: %v at %v", ms, lengths)
	}
}

// TestLinearFLOPs: per layer 2·n·d²·(4 + 2·ffMult), plus the output layer 2·n·d·vocab.
func TestLinearFLOPs(t *testing.T) {
	if got, want := LinearFLOPs(4, 2, 3, 4, 10), 3*2*4*4*12.0+2*4*2*10; got != want {
		t.Errorf("linear FLOPs %g, want %g", got, want)
	}
}

// TestDevicesTable: a row per variant and device count, a column per n, and the longest n within the budget.
func TestDevicesTable(t *testing.T) {
	split := []DeviceMemory{{Variant: "full", N: 2048, Devices: 1, MiB: 10}, {Variant: "full", N: 4096, Devices: 1, MiB: 40},
		{Variant: "pi", N: 2048, Devices: 1, MiB: 5}, {Variant: "pi", N: 4096, Devices: 1, MiB: 9}}
	summary := DeviceMemory{BudgetMiB: 32, Longest: map[string]map[string]int{"full": {"1": 2048}, "pi": {"1": 4096}}}
	table := DevicesTable(split, summary)
	if !slices.Equal(table.Header, []string{"variant", "devices", "n = 2048", "n = 4096", "longest n within budget"}) || len(table.Rows) != 2 {
		t.Fatalf("header %v, %d rows", table.Header, len(table.Rows))
	}
	if got := table.Rows[0]; !slices.Equal(got, []string{"full", "1", "10.0", "40.0", "2048"}) {
		t.Errorf("dense row %v", got)
	}
	if plot := DevicesPlot(split); len(plot.Series) != 2 || plot.Series[1].Name != "pi on 1" {
		t.Errorf("plot series %+v", plot.Series)
	}
}
