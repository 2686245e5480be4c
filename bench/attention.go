// Package bench measures what the papers claim about cost: the time of one
// attention layer's forward and backward pass per variant and sequence length
// on a compute backend. Cost counts (pairs, FLOPs) come from models.CostOf;
// this package adds the wall clock.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// AttentionOptions configures an attention benchmark. The defaults are the
// issue's targets: batch 2, 4 heads of 32, half-segment / window 256.
type AttentionOptions struct {
	Variants []string // model families whose first-layer pattern is timed
	Lengths  []int
	Batch    int
	Heads    int
	HeadDim  int
	Window   int // each family's window, half-segment or block (models.Config.WithWindow)
	Runs     int // timed runs after one warm-up; the median is reported
	// Apart measures each (variant, n) in a process of its own, with that
	// process's peak resident memory (Sweep).
	Apart bool
	// Precision is the dtype of q, k and v: float32, or bf16 as a layer
	// under precision=bf16 computes them; Fused says which attention may run
	// as the backend's fused op (models.ChooseFused).
	Precision string
	Fused     string
	Backend   compute.Backend
}

// AttentionTable is the benchmark's options, as `bench attention` declares them.
var AttentionTable = option.Table[AttentionOptions]{
	option.List("models", "comma-separated model families", models.FamilyNames(), func(o *AttentionOptions) *[]string { return &o.Variants }).
		Alias("variants"), // its name before compare's models= became every command's
	option.Ints("n", "comma-separated sequence lengths", func(o *AttentionOptions) *[]int { return &o.Lengths }, option.AtLeast(1)),
	option.Int("batch", "batch size", func(o *AttentionOptions) *int { return &o.Batch }, option.AtLeast(1)),
	option.Int("heads", "attention heads", func(o *AttentionOptions) *int { return &o.Heads }, option.AtLeast(1)),
	option.Int("head_dim", "width of each head (even: RoPE)", func(o *AttentionOptions) *int { return &o.HeadDim }, option.AtLeast(2)),
	option.Int("window", "each family's window: local/π window k, ECP half-segment h, S2 groups 2k, ...", func(o *AttentionOptions) *int { return &o.Window }, option.AtLeast(1)),
	option.Int("runs", "timed runs per measurement (median reported)", func(o *AttentionOptions) *int { return &o.Runs }, option.AtLeast(1)),
	option.Bool("memory", "true: each measurement in its own process, with its peak resident memory", func(o *AttentionOptions) *bool { return &o.Apart }),
	option.Choice("precision", "dtype of q, k and v: float32, or bf16 as under train's precision=bf16 (ecpi's own forms compute in float32 either way)",
		train.Precisions, func(o *AttentionOptions) *string { return &o.Precision }),
	option.Choice("fused", "which attention may run as the backend's fused op (cuDNN's on CUDA, bf16 only): dense attention, also local/longformer/ecp under their n×n mask, or none",
		models.FusedModes, func(o *AttentionOptions) *string { return &o.Fused }),
}

// DefaultAttention is the README's targets: the benchmark families from n=1024 to 4096.
var DefaultAttention = AttentionOptions{Variants: models.BenchmarkFamilies(), Lengths: []int{1024, 2048, 4096},
	Batch: 2, Heads: 4, HeadDim: 32, Window: 256, Runs: 5, Precision: "float32", Fused: string(models.FusedDense)}

// AttentionResult is one (variant, length) measurement.
type AttentionResult struct {
	Variant   string    `json:"variant"`
	N         int       `json:"n"`
	MS        float64   `json:"ms"`         // median forward+backward milliseconds, compiled
	RunsMS    []float64 `json:"runs_ms"`    // every timed run's milliseconds, in order (a fit's spread)
	CompileMS float64   `json:"compile_ms"` // building and compiling the graph, once
	Runs      int       `json:"runs"`
	Pairs     int64     `json:"pairs"` // scores per head computed by the block form
	Ratio     float64   `json:"ratio"` // pairs / n²
	Backend   string    `json:"backend"`
	Precision string    `json:"precision,omitempty"`
	// Form is what ran: "own" (ecpi's tiled or block form), "fused" or
	// "fused masked" (the backend's fused op); FormWhy says why.
	Form    string `json:"form,omitempty"`
	FormWhy string `json:"form_why,omitempty"`
	// PeakMB is the peak resident memory of a process that measured only
	// this (variant, n): set by `bench attention memory=true`.
	PeakMB float64 `json:"peak_mb,omitempty"`
	// NotMeasured says why a memory sweep skipped this (variant, n): the
	// machine cannot hold it. Every other field but Variant and N is zero.
	NotMeasured string `json:"not_measured,omitempty"`
}

func (r AttentionResult) Text() string {
	if r.NotMeasured != "" {
		return fmt.Sprintf("%-12s n=%-6d not measured: %s", r.Variant, r.N, r.NotMeasured)
	}
	text := fmt.Sprintf("%-12s n=%-6d %9.1f ms  (compile %6.0f ms)   pairs/head %11d (%.3f of dense)", r.Variant, r.N, r.MS, r.CompileMS, r.Pairs, r.Ratio)
	if r.Form != "" && r.Form != "own" {
		text += "   " + r.Form
	}
	if r.PeakMB > 0 {
		text += fmt.Sprintf("   peak %6.0f MB", r.PeakMB)
	}
	return text
}

// PatternConfig is the config whose first-layer pattern the benchmark times for
// a variant at length n: the family's window (half-segment, block) set to
// o.Window as the family defines it.
func (o AttentionOptions) PatternConfig(variant string, n int) (models.Config, error) {
	cfg, err := models.Parse(map[string]string{
		"model": variant, "n": fmt.Sprint(n), "heads": fmt.Sprint(o.Heads), "dim": fmt.Sprint(o.Heads * o.HeadDim),
	})
	if err == nil {
		cfg = cfg.WithWindow(o.Window)
		err = cfg.Validate()
	}
	if err != nil {
		return cfg, fmt.Errorf("variant %s at n=%d: %w", variant, n, err)
	}
	return cfg, nil
}

// Attention times every variant at every length, calling report after each
// measurement (so long runs stream their results).
func Attention(ctx context.Context, o AttentionOptions, backendName string, report func(AttentionResult) error) error {
	for _, n := range o.Lengths {
		for _, variant := range o.Variants {
			if err := ctx.Err(); err != nil {
				return err
			}
			cfg, err := o.PatternConfig(variant, n)
			if err != nil {
				return err
			}
			timing, err := timeAttention(o, cfg.Pattern(), n)
			if err != nil {
				return fmt.Errorf("%s at n=%d: %w", variant, n, err)
			}
			cost := models.CostOf(cfg)
			result := AttentionResult{Variant: variant, N: n, MS: timing.ms, RunsMS: timing.runs, CompileMS: timing.compileMS, Runs: o.Runs,
				Pairs: cost.Pairs, Ratio: cost.Ratio, Backend: backendName, Precision: o.Precision, Form: timing.plan.Form(), FormWhy: timing.plan.Why}
			if err := report(result); err != nil {
				return err
			}
		}
	}
	return nil
}

// timing is one measurement: the median of the compiled runs, each run's time and the compile time.
type timing struct {
	ms, compileMS float64
	runs          []float64
	plan          models.FusedPlan // what ran
}

// timeAttention compiles forward+backward of one pattern (timed on its own)
// and returns the median wall time of o.Runs executions after one warm-up.
func timeAttention(o AttentionOptions, pattern models.Pattern, n int) (timing, error) {
	var plan models.FusedPlan
	dtype := dtypes.Float32
	if o.Precision == "bf16" {
		dtype = dtypes.BFloat16
	}
	exec, err := graph.NewExec(o.Backend, func(q, k, v *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		var out *graph.Node
		convert := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtype) }
		out, plan = models.Attend(pattern, convert(q), convert(k), convert(v), models.Dropout{}, models.Fused(o.Fused))
		out = graph.ConvertDType(out, dtypes.Float32)
		loss := graph.ReduceAllSum(graph.Mul(out, out))
		// One scalar that depends on every gradient: reading it waits for the
		// whole backward pass without timing a large device-to-host copy.
		checksum := loss
		for _, gradient := range graph.Gradient(loss, q, k, v) {
			checksum = graph.Add(checksum, graph.ReduceAllSum(gradient))
		}
		return checksum
	})
	if err != nil {
		return timing{}, err
	}
	defer exec.Finalize()
	shape := shapes.Make(dtypes.Float32, o.Batch, o.Heads, n, o.HeadDim)
	start := time.Now()
	if _, err := exec.Compile(shape, shape, shape); err != nil {
		return timing{}, err
	}
	compileMS := float64(time.Since(start).Microseconds()) / 1000
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	inputs := make([]any, 3)
	for i := range inputs {
		flat := make([]float32, o.Batch*o.Heads*n*o.HeadDim)
		for j := range flat {
			flat[j] = float32(rng.NormFloat64())
		}
		inputs[i] = tensors.FromFlatDataAndDimensions(flat, o.Batch, o.Heads, n, o.HeadDim)
	}
	var times []float64
	for run := 0; run <= o.Runs; run++ {
		start := time.Now()
		outputs, err := exec.Call(inputs...)
		if err != nil {
			return timing{}, err
		}
		if _, err := outputs[0].ValueSafe(); err != nil {
			return timing{}, err
		}
		if run > 0 { // run 0 is the warm-up (first-run allocation and caching)
			times = append(times, float64(time.Since(start).Microseconds())/1000)
		}
	}
	sorted := slices.Sorted(slices.Values(times))
	return timing{ms: sorted[len(sorted)/2], compileMS: compileMS, runs: times, plan: plan}, nil
}

// GrowthSummary checks the scaling targets on a set of results: every sparse
// variant's time grows at most maxSparse times from the shortest to the longest
// length, full attention's at least minFull times. It returns one line per variant.
func GrowthSummary(results []AttentionResult) []string {
	byVariant := map[string][]AttentionResult{}
	var order []string
	for _, r := range results {
		if r.NotMeasured != "" {
			continue
		}
		if _, seen := byVariant[r.Variant]; !seen {
			order = append(order, r.Variant)
		}
		byVariant[r.Variant] = append(byVariant[r.Variant], r)
	}
	var lines []string
	for _, variant := range order {
		rs := byVariant[variant]
		first, last := rs[0], rs[len(rs)-1]
		if first.N == last.N {
			continue
		}
		lines = append(lines, fmt.Sprintf("%-12s n %d -> %d (x%d): time x%.2f", variant, first.N, last.N, last.N/first.N, last.MS/first.MS))
	}
	return lines
}
