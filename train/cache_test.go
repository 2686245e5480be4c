package train

import (
	"context"
	"slices"
	"testing"
)

// TestRunCacheReusesFinishedRuns: with reuse=true a finished run of the same
// options is returned without training, an interrupted one is resumed, and
// other options (another seed) train anew.
func TestRunCacheReusesFinishedRuns(t *testing.T) {
	o := tiny(t, map[string]string{"steps": "6", "eval_every": "3", "reuse": "true", "run": ""})
	ctx, cancel := context.WithCancel(context.Background())
	interrupted, err := Run(ctx, o, func(p Progress) {
		if p.Step == 3 {
			cancel()
		}
	})
	if err != nil || !interrupted.Interrupted {
		t.Fatalf("interrupted run: %v, %v", interrupted, err)
	}
	steps := 0
	first, err := Run(context.Background(), o, func(p Progress) {
		if !p.Compiling {
			steps++
		}
	})
	if err != nil || first.Steps != 6 || steps != 3 {
		t.Fatalf("resumed run: %d steps in all, %d trained now (%v); want 6 and 3", first.Steps, steps, err)
	}
	trained := false
	again, err := Run(context.Background(), o, func(Progress) { trained = true })
	if err != nil || trained || !slices.Equal(again.Losses, first.Losses) || again.Checkpoint != first.Checkpoint {
		t.Fatalf("the finished run was trained again (%v) or differs: %v", trained, err)
	}
	o.Seed = 2
	other, err := Run(context.Background(), o, nil)
	if err != nil || other.Run == first.Run {
		t.Fatalf("another seed reused the run %s (%v)", other.Run, err)
	}
}

// TestRunCacheMissesOtherCode: a finished cached run is not replayed once
// the code that trains changed (a changed model file changes the code version).
func TestRunCacheMissesOtherCode(t *testing.T) {
	o := tiny(t, map[string]string{"steps": "2", "eval_every": "0", "reuse": "true", "run": "", "seed": "7"})
	first, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func(v func() string) { codeVersion = v }(codeVersion)
	codeVersion = func() string { return "a-changed-model-file" }
	trained := false
	again, err := Run(context.Background(), o, func(p Progress) { trained = trained || !p.Compiling })
	if err != nil {
		t.Fatal(err)
	}
	if !trained || again.Run == first.Run {
		t.Fatalf("a run of other code was replayed from %s (trained again: %v)", first.Run, trained)
	}
}
