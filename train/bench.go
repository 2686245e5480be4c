package train

import (
	"context"
	"fmt"
	"os"

	"github.com/ecpi-dev/ecpi/models"
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

// BenchConfig is the fixed small model `bench train` times for a family:
// n=256, d=64, 4 heads, 2 layers, window (half-segment, block) 32.
func BenchConfig(family string) (models.Config, error) {
	cfg, err := models.Parse(map[string]string{"model": family, "n": "256", "dim": "64", "heads": "4", "layers": "2"})
	if err != nil {
		return cfg, err
	}
	cfg = cfg.WithWindow(32)
	return cfg, cfg.Validate()
}

// Bench trains BenchConfig(family) on the opticks corpus, batches of 8, for
// `steps` steps on the backend named and reports the speed of the steps after
// the first (which compiles). The run folder is temporary.
func Bench(ctx context.Context, backend, family string, steps int) (*BenchResult, error) {
	o, err := ParseOptions(map[string]string{"data": "opticks", "batch": "8", "steps": fmt.Sprint(steps + 1), "eval_every": "0",
		"eval_batches": "1", "keep": "1", "backend": backend})
	if err != nil {
		return nil, err
	}
	if o.Model, err = BenchConfig(family); err != nil {
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
