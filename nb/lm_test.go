package nb

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// TestLMRecipe: the full-mode options every language-model notebook trains with (its runs are cached under them, so a
// change here trains them all again), and quick mode's smoke test at a quarter of the width.
func TestLMRecipe(t *testing.T) {
	lm := LM{Data: "wiki", N: 1024, Batch: 4, Width: 64, Steps: 2000}
	t.Setenv("ECPI_QUICK", "")
	t.Setenv("ECPI_MODE", "full")
	if got, want := lm.Recipe(), "data=wiki n=1024 dim=64 heads=4 layers=3 batch=4 steps=2000 warmup=200 schedule=cosine dropout=0 eval_every=0 eval_batches=64 reuse=true"; got != want {
		t.Errorf("full mode:\n%s\nwant\n%s", got, want)
	}
	t.Setenv("ECPI_QUICK", "1")
	if got, want := lm.Recipe(), "data=opticks n=64 dim=16 heads=2 layers=2 batch=4 steps=6 warmup=2 eval_every=0 eval_batches=2 reuse=true backend=go"; got != want {
		t.Errorf("quick mode:\n%s\nwant\n%s", got, want)
	}
}

// TestLossByPositionBinsAndAveragesOverRuns: each point is the mean over runs
// and over its bin's positions, in bits, at the bin's first window position; a
// short last bin averages what it has.
func TestLossByPositionBinsAndAveragesOverRuns(t *testing.T) {
	run := func(losses ...float64) Trained { // as `train --json` reports it
		var r Trained
		b, _ := json.Marshal(map[string]any{"eval": map[string]any{"by_position": losses, "first_position": 8}})
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	ln2 := math.Ln2
	s := LossByPosition("ECP", []Trained{run(1*ln2, 3*ln2, 5*ln2, 7*ln2, 9*ln2), run(3*ln2, 5*ln2, 7*ln2, 9*ln2, 11*ln2)}, 2)
	if s.Name != "ECP" || !slices.Equal(s.X, []float64{8, 10, 12}) {
		t.Fatalf("series %q at %v, want ECP at [8 10 12]", s.Name, s.X)
	}
	for i, want := range []float64{3, 7, 10} {
		if math.Abs(s.Y[i]-want) > 1e-12 {
			t.Errorf("bin %d: %v bits, want %v", i, s.Y[i], want)
		}
	}
	if empty := LossByPosition("none", nil, 4); len(empty.X) != 0 {
		t.Errorf("no runs: %v", empty.X)
	}
}
