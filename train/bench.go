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
	Size       string  `json:"size"`
	Steps      int     `json:"steps"`
	TokensPerS float64 `json:"tokens_per_s"`
	MsPerStep  float64 `json:"ms_per_step"`
	CompileMS  float64 `json:"compile_ms"`
}

// Text is one line.
func (b *BenchResult) Text() string {
	return fmt.Sprintf("%-8s %s (%s): %.0f tokens/s, %.1f ms/step (%d steps), compile %.0f ms", b.Backend, b.Model, b.Size, b.TokensPerS, b.MsPerStep, b.Steps, b.CompileMS)
}

// BenchSizes are the fixed models `bench train` times, batches of 8 each:
// small is n=256, d=64, 4 heads, 2 layers, window (half-segment, block) 32;
// large is n=1024, d=256, 4 heads, 4 layers, window 128.
var BenchSizes = []string{"small", "large"}

// BenchConfig is the fixed model of a size for a family.
func BenchConfig(family, size string) (models.Config, error) {
	values := map[string]string{"model": family, "n": "256", "dim": "64", "heads": "4", "layers": "2"}
	window := 32
	if size == "large" {
		values["n"], values["dim"], values["layers"] = "1024", "256", "4"
		window = 128
	}
	cfg, err := models.Parse(values)
	if err != nil {
		return cfg, err
	}
	cfg = cfg.WithWindow(window)
	return cfg, cfg.Validate()
}

// Bench trains BenchConfig(family, size) on the opticks corpus, batches of 8,
// for `steps` steps on the backend named and reports the speed of the steps
// after the first (which compiles) and the compile time. The run folder is
// temporary.
func Bench(ctx context.Context, backend, family, size string, steps int) (*BenchResult, error) {
	o, err := ParseOptions(map[string]string{"data": "opticks", "batch": "8", "steps": fmt.Sprint(steps + 1), "eval_every": "0",
		"eval_batches": "1", "keep": "1", "backend": backend})
	if err != nil {
		return nil, err
	}
	if o.Model, err = BenchConfig(family, size); err != nil {
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
	return &BenchResult{Backend: r.Backend, Model: r.Model, Size: size, Steps: r.Steps - 1, TokensPerS: r.TokensPerS, MsPerStep: r.MsPerStep, CompileMS: r.CompileMS}, nil
}
