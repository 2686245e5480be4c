package train

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

// runKind is one kind of run that a user can start: a task kind, or a
// training option that adds state to a checkpoint.
type runKind struct {
	name   string
	values map[string]string
	xla    bool // needs the XLA CPU plugin (devices=)
	sample bool // a language model: sample from it too
	images bool // reads an image set that make data prepares
}

var runKinds = []runKind{
	{name: "lm", values: map[string]string{}, sample: true},
	{name: "lm-accum", values: map[string]string{"accum": "2"}, sample: true},
	{name: "lm-devices", values: map[string]string{"devices": "2"}, xla: true, sample: true},
	{name: "listops", values: map[string]string{"model": "full", "segment": "", "causal": "false", "data": "listops", "n": "32", "examples": "32"}},
	{name: "pathfinder", values: map[string]string{"model": "full", "segment": "", "data": "pathfinder", "n": "64", "examples": "16"}},
	{name: "passkey", values: map[string]string{"model": "full", "segment": "", "data": "passkey", "n": "128", "examples": "16", "distance": "48"}},
	{name: "assoc", values: map[string]string{"model": "full", "segment": "", "data": "assoc", "n": "16", "examples": "16"}},
	{name: "shapes", values: map[string]string{"model": "full", "segment": "", "n": "", "causal": "false", "data": "shapes", "pool": "2", "examples": "16"}},
	{name: "mnist", values: map[string]string{"model": "local", "segment": "", "window": "14", "n": "", "data": "mnist", "pool": "2"}, images: true},
}

// TestEveryDatasetHasARow: each registered dataset is trained by a row of
// runKinds (one row per dataset, not per name), and a dataset that lacks a
// piece is refused when it registers.
func TestEveryDatasetHasARow(t *testing.T) {
	covered := map[int]bool{}
	for _, kind := range runKinds {
		name := cmp.Or(kind.values["data"], "opticks")
		d, err := datasetOf(name)
		if err != nil {
			t.Fatalf("row %s: %v", kind.name, err)
		}
		covered[slices.IndexFunc(datasets, func(other Dataset) bool { return slices.Equal(other.Names(), d.Names()) })] = true
	}
	for i, d := range datasets {
		if !covered[i] {
			t.Errorf("dataset %v (%s) has no row in runKinds", d.Names(), d.Kind)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a dataset without Build and Show registered")
		}
	}()
	registerDataset(Dataset{Names: func() []string { return []string{"half-done"} }, Kind: TaskLM, Summary: "no Build, no Show"})
}

// TestEveryKindOfRun trains every kind of run for two steps from a fresh
// session, on the Go backend and on XLA, then uses what it wrote as a user
// would: resumes it for a third step, evaluates the checkpoint and, for a
// language model, samples from it. A step declared with the wrong input (the
// match task's hang on XLA) or a checkpoint that its own commands cannot open
// (accum=2) fails here.
func TestEveryKindOfRun(t *testing.T) {
	for _, backend := range testBackends() {
		for _, kind := range runKinds {
			t.Run(backend+"/"+kind.name, func(t *testing.T) {
				if kind.xla && backend == "go" {
					t.Skip("devices= splits batches across the devices of an XLA backend")
				}
				everyKindOfRun(t, backend, kind)
			})
		}
	}
}

func everyKindOfRun(t *testing.T, backend string, kind runKind) {
	values := map[string]string{"backend": backend, "steps": "2", "eval_every": "2", "eval_batches": "1", "layers": "1"}
	maps.Copy(values, kind.values)
	o := tiny(t, values)
	if kind.images {
		if _, err := data.LoadImages(data.Home(), o.Data); err != nil {
			t.Skipf("image set %s is not prepared in %s (make data): %v", o.Data, data.Home(), err)
		}
		o.Home = data.Home() // read only: the run folder is the test's own
	}
	ctx := context.Background()
	first, err := Run(ctx, o, nil)
	if err != nil {
		t.Fatalf("fresh run: %v", err)
	}
	if first.Steps != 2 || first.ValidStep != 2 {
		t.Fatalf("fresh run: %d steps, evaluated at step %d; want 2 and 2", first.Steps, first.ValidStep)
	}
	resumed, err := Resume(ctx, first.Checkpoint, map[string]string{"steps": "3"}, nil)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if resumed.Steps != 3 || len(resumed.Losses) != 3 || resumed.Losses[1] != first.Losses[1] {
		t.Fatalf("resume: %d steps, losses %v after %v; want 3 steps continuing the first two", resumed.Steps, resumed.Losses, first.Losses)
	}
	l, err := Open(first.Checkpoint, backend)
	if err != nil {
		t.Fatalf("open for eval: %v", err)
	}
	e, err := l.Evaluate(ctx, EvalOptions{Split: "test", Batches: 1})
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	if e.Step != 2 || e.Count == 0 {
		t.Fatalf("eval: step %d, %d scored; want step 2 and a measurement", e.Step, e.Count)
	}
	if kind.sample {
		s, err := l.Sample(ctx, SampleOptions{Prompt: "light ", Tokens: 4, Temperature: 1, Seed: 1})
		if err != nil {
			t.Fatalf("sample: %v", err)
		}
		if s.Tokens != 4 {
			t.Fatalf("sample: %d tokens; want 4", s.Tokens)
		}
	}
}
