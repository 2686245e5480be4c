package train

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// BenchResult is the training speed of one backend.
type BenchResult struct {
	Backend    string  `json:"backend"`
	Model      string  `json:"model"`
	Size       string  `json:"size"`
	Precision  string  `json:"precision"`
	Steps      int     `json:"steps"`
	TokensPerS float64 `json:"tokens_per_s"`
	MsPerStep  float64 `json:"ms_per_step"`
	CompileMS  float64 `json:"compile_ms"`
}

// Text is one line.
func (b *BenchResult) Text() string {
	return fmt.Sprintf("%-8s %s (%s, %s): %.0f tokens/s, %.1f ms/step (%d steps), compile %.0f ms", b.Backend, b.Model, b.Size, b.Precision, b.TokensPerS, b.MsPerStep, b.Steps, b.CompileMS)
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
func Bench(ctx context.Context, backend, family, size, precision string, steps int) (*BenchResult, error) {
	o, err := ParseOptions(map[string]string{"data": "opticks", "batch": "8", "steps": fmt.Sprint(steps + 1), "eval_every": "0",
		"eval_batches": "1", "keep": "1", "backend": backend, "precision": cmp.Or(precision, "float32")})
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
	if r.Interrupted {
		return nil, fmt.Errorf("interrupted after %d of %d steps", r.Steps, steps+1)
	}
	return &BenchResult{Backend: r.Backend, Model: r.Model, Size: size, Precision: o.Precision, Steps: r.Steps - 1, TokensPerS: r.TokensPerS, MsPerStep: r.MsPerStep, CompileMS: r.CompileMS}, nil
}

// GenerateOptions configures `bench generate`: models of each family and
// length with random weights, a prompt of n/2 random tokens, then Tokens
// tokens generated one at a time.
type GenerateOptions struct {
	Families []string
	Lengths  []int
	Size     string // BenchSizes: the model's width and depth
	Tokens   int    // tokens timed per measurement (capped at n/2)
	Backend  string
}

// GenerateResult is one (family, n) measurement: incremental decoding and
// recomputing the window per token.
type GenerateResult struct {
	Family              string  `json:"family"`
	N                   int     `json:"n"`
	Backend             string  `json:"backend"`
	TokensPerS          float64 `json:"tokens_per_s"`           // incremental decoding
	RecomputeTokensPerS float64 `json:"recompute_tokens_per_s"` // one full forward pass per token
	CompileMS           float64 `json:"compile_ms"`             // compiling the prefill and step graphs
}

// Text is one line.
func (r *GenerateResult) Text() string {
	return fmt.Sprintf("%-11s n=%-5d %s: decoding %8.1f tokens/s, recomputing %8.1f tokens/s (x%.1f), compile %.0f ms",
		r.Family, r.N, r.Backend, r.TokensPerS, r.RecomputeTokensPerS, r.TokensPerS/r.RecomputeTokensPerS, r.CompileMS)
}

// BenchGenerate measures generation speed per family and length, calling
// report after each measurement. Every model is checked (config, memory)
// before the backend opens.
func BenchGenerate(ctx context.Context, o GenerateOptions, report func(*GenerateResult) error) error {
	var configs []models.Config
	for _, n := range o.Lengths {
		for _, family := range o.Families {
			cfg, err := BenchConfig(family, o.Size)
			if err == nil {
				cfg.SeqLen = n
				err = cfg.Validate()
			}
			if err == nil {
				err = CheckMemory(cfg, 1, false)
			}
			if err != nil {
				return fmt.Errorf("%s at n=%d: %w", family, n, err)
			}
			configs = append(configs, cfg)
		}
	}
	choice, err := Backend(o.Backend)
	if err != nil {
		return err
	}
	for _, cfg := range configs {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := benchGenerateOne(ctx, choice, cfg, o.Tokens)
		if err != nil {
			return fmt.Errorf("%s at n=%d: %w", cfg.Model, cfg.SeqLen, err)
		}
		if err := report(r); err != nil {
			return err
		}
	}
	return nil
}

func benchGenerateOne(ctx context.Context, choice *xla.Choice, cfg models.Config, tokens int) (*GenerateResult, error) {
	m, err := models.New(cfg)
	if err != nil {
		return nil, err
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(1); err != nil {
		return nil, err
	}
	n := cfg.SeqLen
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	window := make([]int32, n)
	for i := range window {
		window[i] = int32(rng.IntN(cfg.Vocab))
	}
	prompt := n / 2
	tokens = max(1, min(tokens, n-prompt))
	r := &GenerateResult{Family: cfg.Model, N: n, Backend: choice.Name}

	recompute, err := model.NewExec(choice.Backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		return m.Logits(scope, tokens)
	})
	if err != nil {
		return nil, err
	}
	defer recompute.Finalize()
	input := tensors.FromFlatDataAndDimensions(window, 1, n)
	if _, err := recompute.Exec(input); err != nil { // compiles
		return nil, err
	}
	perToken, err := medianSeconds(min(tokens, 5), func() error { _, err := recompute.Exec(input); return err })
	if err != nil {
		return nil, err
	}
	r.RecomputeTokensPerS = 1 / perToken
	d, err := NewDecoder(choice.Backend, store, m)
	if err != nil {
		return nil, err
	}
	defer d.Finalize()
	start := time.Now()
	if _, err := d.Prefill(window[:prompt], window[0]); err != nil { // compiles the prefill graph
		return nil, err
	}
	if _, err := d.Next(window[prompt]); err != nil { // compiles the step graph
		return nil, err
	}
	r.CompileMS = float64(time.Since(start).Milliseconds())
	next := prompt + 1
	perToken, err = medianSeconds(tokens, func() error {
		if d.Full() || ctx.Err() != nil {
			return nil
		}
		_, err := d.Next(window[next])
		next++
		return err
	})
	if err != nil {
		return nil, err
	}
	r.TokensPerS = 1 / perToken
	return r, nil
}

// medianSeconds runs f count times and returns the median duration.
func medianSeconds(count int, f func() error) (float64, error) {
	var times []float64
	for range count {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start).Seconds())
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
