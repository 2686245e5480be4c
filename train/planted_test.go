package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/models/plantedtest"
)

// TestGraphFailuresReturnErrors plants a graph that fails to build (with a
// string panic, which GoMLX's Exec does not catch by itself) in every path
// of train that builds one, on both backends, and checks that each returns an
// error naming the failure within a minute instead of hanging, and that the
// same session or checkpoint works again once the failure is gone.
func TestGraphFailuresReturnErrors(t *testing.T) {
	plantedtest.Register()
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) { graphFailuresReturnErrors(t, backend) })
	}
}

func graphFailuresReturnErrors(t *testing.T, backend string) {
	ctx := context.Background()
	o := tiny(t, map[string]string{"model": plantedtest.Family, "segment": "", "backend": backend, "layers": "1", "steps": "2", "eval_every": "2", "eval_batches": "1"})
	plantedtest.Fail(false)
	trained, err := Run(ctx, o, nil)
	if err != nil {
		t.Fatalf("the planted family before its failure: %v", err)
	}
	session, err := newSession(o, nil)
	if err == nil {
		err = session.initialize()
	}
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Open(trained.Checkpoint, backend)
	if err != nil {
		t.Fatal(err)
	}
	cfg := trained.Config

	paths := []struct {
		name string
		run  func() error
	}{
		{"fresh run", func() error {
			fresh := o
			fresh.RunDir = filepath.Join(t.TempDir(), "fresh")
			_, err := Run(ctx, fresh, nil)
			return err
		}},
		{"train step", func() error { _, err := session.trainStep(); return err }},
		{"session evaluation", func() error { _, err := session.evaluate(ctx, "valid", 1); return err }},
		{"resume", func() error {
			_, err := Resume(ctx, trained.Checkpoint, map[string]string{"steps": "3"}, nil)
			return err
		}},
		{"open", func() error { _, err := Open(trained.Checkpoint, backend); return err }},
		{"eval", func() error { _, err := loaded.Evaluate(ctx, EvalOptions{Batches: 1}); return err }},
		{"sample (decoder)", func() error {
			_, err := loaded.Sample(ctx, SampleOptions{Prompt: "light", Tokens: 2, Seed: 1})
			return err
		}},
		{"attention probe", func() error { _, err := loaded.Attention(make([]int32, cfg.SeqLen)); return err }},
		{"receptive field", func() error {
			_, err := loaded.ReceptiveField(ctx, RFOptions{Position: -1, Threshold: 0.01, Seed: 1})
			return err
		}},
		{"bench generate", func() error {
			return BenchGenerate(ctx, GenerateOptions{Families: []string{plantedtest.Family}, Lengths: []int{32}, Size: "small", Tokens: 2, Backend: backend},
				func(*GenerateResult) error { return nil })
		}},
	}
	plantedtest.Fail(true)
	defer plantedtest.Fail(false)
	for _, path := range paths {
		err := withinAMinute(t, path.name, path.run)
		if err == nil || !strings.Contains(err.Error(), plantedtest.Message) {
			t.Errorf("%s with a failing graph: error %v; want one naming %q", path.name, err, plantedtest.Message)
		}
	}

	plantedtest.Fail(false)
	if _, err := session.trainStep(); err != nil {
		t.Errorf("the session after the failure: %v", err)
	}
	if _, err := loaded.Evaluate(ctx, EvalOptions{Batches: 1}); err != nil {
		t.Errorf("the checkpoint after the failure: %v", err)
	}
	if _, err := models.New(cfg); err != nil {
		t.Error(err)
	}
}

// withinAMinute runs f and fails the test at once if it has not returned
// within a minute: a graph failure that hangs would otherwise wait forever.
func withinAMinute(t *testing.T, name string, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s: no answer within a minute (a failing graph hangs)", name)
		return nil
	}
}
