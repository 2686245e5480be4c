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
	if lm.Corpus() != "wiki" || lm.WindowLength() != 1024 {
		t.Errorf("full mode trains on %s at n = %d, want wiki at 1024", lm.Corpus(), lm.WindowLength())
	}
	t.Setenv("ECPI_QUICK", "1")
	if got, want := lm.Recipe(), "data=opticks n=64 dim=16 heads=2 layers=2 batch=4 steps=6 warmup=2 eval_every=0 eval_batches=2 reuse=true backend=go"; got != want {
		t.Errorf("quick mode:\n%s\nwant\n%s", got, want)
	}
	if lm.Corpus() != "opticks" || lm.WindowLength() != 64 {
		t.Errorf("quick mode trains on %s at n = %d, want opticks at 64", lm.Corpus(), lm.WindowLength())
	}
}

// TestECPSizes: at notebook 01's n = 1,024, ECP's h = 64 and PerceiverAR's 256 latents, scored from position 768.
func TestECPSizes(t *testing.T) {
	s := ECPSizes{N: 1024}
	if s.HalfSegment() != 64 || s.Latents() != 256 || s.FirstLatent() != 768 {
		t.Errorf("n = 1024: h = %d, l = %d, first latent %d; want 64, 256, 768", s.HalfSegment(), s.Latents(), s.FirstLatent())
	}
}

// trainedFrom is a run as `train --json` reports it with the given fields.
func trainedFrom(t *testing.T, fields map[string]any) Trained {
	t.Helper()
	var r Trained
	b, _ := json.Marshal(fields)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBits: BitsFrom averages the positions from its first on, in bits; AllBits is the run's own bits per byte.
func TestBits(t *testing.T) {
	ln2 := math.Ln2
	r := trainedFrom(t, map[string]any{"valid_bpc": 2.5, "eval": map[string]any{"by_position": []float64{9 * ln2, 2 * ln2, 4 * ln2}, "first_position": 10}})
	if got := BitsFrom(11)(r); math.Abs(got-3) > 1e-12 {
		t.Errorf("bits from position 11: %v, want 3", got)
	}
	if got := BitsFrom(5)(r); !math.IsNaN(got) {
		t.Errorf("bits from position 5, before the first scored: %v, want NaN", got)
	}
	if got := AllBits(r); got != 2.5 {
		t.Errorf("all bits %v, want 2.5", got)
	}
}

// TestLossByPositionBinsAndAveragesOverRuns: each point is the mean over runs
// and over its bin's positions, in bits, at the bin's first window position; a
// short last bin averages what it has.
func TestLossByPositionBinsAndAveragesOverRuns(t *testing.T) {
	run := func(losses ...float64) Trained {
		return trainedFrom(t, map[string]any{"eval": map[string]any{"by_position": losses, "first_position": 8}})
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
