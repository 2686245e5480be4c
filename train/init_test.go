package train

import (
	"context"
	"math"
	"testing"
)

// TestXLAStartsFromTheGoBackendsWeights: a fresh run on XLA takes its initial
// values from the Go backend (initializeOnHost) instead of compiling GoMLX's
// initialisation graph at its first step, so a seed gives the same initial
// model on either backend: without dropout (whose masks the backends draw
// differently) the first step's loss agrees within float32 noise, where
// different initial weights move it by about 0.1.
func TestXLAStartsFromTheGoBackendsWeights(t *testing.T) {
	xlaCPU(t)
	for family, options := range map[string]map[string]string{
		"ecp": {"dropout": "0", "steps": "2", "eval_every": "0", "eval_batches": "1"},
		"pi":  {"dropout": "0", "steps": "2", "eval_every": "0", "eval_batches": "1", "model": "pi", "segment": "", "window": "8"},
	} {
		losses := map[string][]float64{}
		for _, backend := range []string{"go", "xla:cpu"} {
			options["backend"] = backend
			r, err := Run(context.Background(), tiny(t, options), nil)
			if err != nil {
				t.Fatal(err)
			}
			losses[backend] = r.Losses
		}
		goLoss, xlaLoss := losses["go"][0], losses["xla:cpu"][0]
		if math.Abs(goLoss-xlaLoss) > 1e-4*goLoss {
			t.Errorf("%s: first loss %.7f on the Go backend, %.7f on XLA", family, goLoss, xlaLoss)
		}
	}
}
