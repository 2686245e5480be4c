package train

import (
	"context"
	"fmt"
	"os"
)

// BenchResult is the training speed of one backend.
type BenchResult struct {
	Backend    string  `json:"backend"`
	Model      string  `json:"model"`
	Steps      int     `json:"steps"`
	TokensPerS float64 `json:"tokens_per_s"`
	MsPerStep  float64 `json:"ms_per_step"`
}

// Text is one line.
func (b *BenchResult) Text() string {
	return fmt.Sprintf("%-8s %s: %.0f tokens/s, %.1f ms/step (%d steps)", b.Backend, b.Model, b.TokensPerS, b.MsPerStep, b.Steps)
}

// BenchModel is the fixed small model `bench train` times: ECP, n=256, d=64,
// 4 heads, 2 layers, half-segments of 32, batches of 8.
var BenchModel = map[string]string{"model": "ecp", "n": "256", "dim": "64", "heads": "4", "layers": "2", "segment": "32"}

// Bench trains BenchModel (family overridable) on the opticks corpus for
// `steps` steps on the backend named and reports the speed of the steps after
// the first (which compiles). The run folder is temporary.
func Bench(ctx context.Context, backend, family string, steps int) (*BenchResult, error) {
	values := map[string]string{"data": "opticks", "batch": "8", "steps": fmt.Sprint(steps + 1), "eval_every": "0",
		"eval_batches": "1", "keep": "1", "backend": backend}
	for k, v := range BenchModel {
		values[k] = v
	}
	if family != "" && family != "ecp" {
		values["model"] = family
		delete(values, "segment")
	}
	o, err := ParseOptions(values)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ecpi-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	o.RunDir = dir
	r, err := Run(ctx, o, nil)
	if err != nil {
		return nil, err
	}
	return &BenchResult{Backend: r.Backend, Model: r.Model, Steps: r.Steps - 1, TokensPerS: r.TokensPerS, MsPerStep: r.MsPerStep}, nil
}
