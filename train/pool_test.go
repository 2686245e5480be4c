package train

import (
	"context"
	"testing"
)

// TestPoolContinuesLiveSessions: a run this pool trained resumes in its live
// session (its graph already compiled: no compiling report), a checkpoint
// opened twice is the same Loaded, and its evaluation and sampling graphs are
// kept from one call to the next.
func TestPoolContinuesLiveSessions(t *testing.T) {
	pool := NewPool()
	o := tiny(t, map[string]string{"steps": "4", "eval_every": "0"})
	first, err := pool.Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	compiled := false
	second, err := pool.Resume(context.Background(), first.Run, map[string]string{"steps": "7"}, func(p Progress) {
		compiled = compiled || p.Compiling
	})
	if err != nil || second.Steps != 7 || compiled || len(second.Losses) != 7 {
		t.Fatalf("resumed in the live session: %d steps, %d losses, compiled again %v (%v); want 7, 7, false", second.Steps, len(second.Losses), compiled, err)
	}
	a, err := pool.Open(second.Checkpoint, "go")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Evaluate(context.Background(), EvalOptions{Batches: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sample(context.Background(), SampleOptions{Prompt: "Light", Tokens: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := pool.Open(second.Run, "go") // the run folder names its newest checkpoint
	if err != nil || b != a || b.evaluator == nil || b.decoder == nil {
		t.Errorf("opening the checkpoint again: same Loaded %v, graphs kept %v %v (%v)", b == a, b.evaluator != nil, b.decoder != nil, err)
	}
}
