package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// tinyTask is a one-layer model on a small generated set, quick on the Go backend.
func tinyTask(t *testing.T, values map[string]string) Options {
	t.Helper()
	all := map[string]string{"dim": "16", "heads": "2", "layers": "1", "examples": "48", "batch": "4", "steps": "6",
		"warmup": "1", "eval_every": "3", "eval_batches": "0", "backend": "go", "run": filepath.Join(t.TempDir(), "run")}
	for k, v := range values {
		all[k] = v
	}
	o, err := ParseOptions(all)
	if err != nil {
		t.Fatal(err)
	}
	o.Home = home(t)
	return o
}

// TestClassifierEndToEnd trains a bidirectional classifier on ListOps of at
// most 32 tokens, checks the accuracy it reports against a fresh evaluation of
// its checkpoint, and that an interrupted run resumes exactly.
func TestClassifierEndToEnd(t *testing.T) {
	values := map[string]string{"model": "full", "causal": "false", "data": "listops", "n": "32"}
	whole, err := Run(context.Background(), tinyTask(t, values), nil)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Task != TaskClassify || whole.Config.Get("n") != "32" || whole.ValidAcc == nil {
		t.Fatalf("task %s, n %s, valid acc %v; want classify, 32, an accuracy", whole.Task, whole.Config.Get("n"), whole.ValidAcc)
	}
	if *whole.ValidAcc < 0 || *whole.ValidAcc > 1 || whole.ValidLoss <= 0 || whole.ValidPPL != 0 {
		t.Errorf("valid acc %g, loss %g, ppl %g", *whole.ValidAcc, whole.ValidLoss, whole.ValidPPL)
	}
	e, err := Evaluate(context.Background(), EvalOptions{Checkpoint: whole.Checkpoint, Backend: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Acc != *whole.ValidAcc || e.Loss != whole.ValidLoss || e.Count != 4 {
		t.Errorf("checkpoint evaluation: acc %g loss %g on %d examples; the run reported acc %g loss %g (valid split: 4 examples)",
			e.Acc, e.Loss, e.Count, *whole.ValidAcc, whole.ValidLoss)
	}

	resumed := stoppedAndResumed(t, tinyTask(t, values), 2)
	for i := range whole.Losses {
		if resumed.Losses[i] != whole.Losses[i] {
			t.Errorf("step %d: loss %.9g after resume, %.9g uninterrupted", i+1, resumed.Losses[i], whole.Losses[i])
		}
	}
	if *resumed.ValidAcc != *whole.ValidAcc {
		t.Errorf("valid acc %g after resume, %g uninterrupted", *resumed.ValidAcc, *whole.ValidAcc)
	}
}

// TestClassifierFamilies trains each family that can attend both ways, and
// ECP (causal), for two steps on 8×8 Pathfinder.
func TestClassifierFamilies(t *testing.T) {
	for _, family := range []map[string]string{
		{"model": "local", "causal": "false", "window": "8"},
		{"model": "pi", "causal": "false", "window": "8"},
		{"model": "ecp", "segment": "16"},
	} {
		values := map[string]string{"data": "pathfinder", "n": "64", "examples": "16", "steps": "2", "eval_every": "0", "eval_batches": "1"}
		for k, v := range family {
			values[k] = v
		}
		r, err := Run(context.Background(), tinyTask(t, values), nil)
		if err != nil {
			t.Errorf("%s: %v", family["model"], err)
			continue
		}
		if r.ValidAcc == nil || r.Steps != 2 || r.Config.Get("causal") != family["causal"] && family["causal"] != "" {
			t.Errorf("%s: steps %d, acc %v, config %v", family["model"], r.Steps, r.ValidAcc, r.Config)
		}
	}
}

func TestDataOptionRules(t *testing.T) {
	cases := []struct {
		values map[string]string
		want   string
	}{
		{map[string]string{"model": "full", "data": "pathfinder", "n": "50"}, "must be a square"},
		{map[string]string{"model": "full", "data": "opticks", "n": "32", "examples": "10"}, "examples=10 applies to generated sets only"},
		{map[string]string{"model": "full", "data": "listops", "n": "32", "distance": "4"}, "distance=4 applies to the retrieval sets only"},
		{map[string]string{"model": "full", "data": "opticks", "n": "32", "examples": "0", "causal": "false"}, "classification only"},
		{map[string]string{"model": "full", "data": "assoc", "n": "16", "causal": "false"}, "classification only"},
		{map[string]string{"model": "full", "data": "assoc", "n": "15"}, "n=15 must be even"},
		{map[string]string{"model": "ecp", "data": "listops", "n": "30", "segment": "8"}, "half_segment=8 must divide sequence length n=30"},
	}
	for _, c := range cases {
		_, err := newSession(tinyTask(t, c.values), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got error %v, want one containing %q", c.values, err, c.want)
		}
	}
}
