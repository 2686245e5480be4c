package train

import (
	"context"
	"testing"
)

// TestMatchTrainsADualEncoder: data=shapes trains image and caption encoders
// contrastively and measures recall in both directions over a pool of at
// least 500 pairs (here capped by eval_batches).
func TestMatchTrainsADualEncoder(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two encoders over 720-token pairs: about 30 s")
	}
	o := tiny(t, map[string]string{"model": "full", "segment": "", "n": "", "data": "shapes", "examples": "64", "causal": "false",
		"batch": "8", "steps": "30", "lr": "3e-3", "eval_every": "0", "eval_batches": "8"})
	r, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Task != TaskMatch || r.Eval == nil || r.Eval.Count != 64 || len(r.Eval.Recall) != 4 {
		t.Fatalf("task %s, eval %+v: want matching over a pool of 64 with 4 recalls", r.Task, r.Eval)
	}
	if r.Losses[len(r.Losses)-1] >= r.Losses[0] {
		t.Errorf("contrastive loss did not fall: %.3f -> %.3f", r.Losses[0], r.Losses[len(r.Losses)-1])
	}
	for name, v := range r.Eval.Recall {
		if v < 0 || v > 1 {
			t.Errorf("recall %s = %v", name, v)
		}
	}
}
