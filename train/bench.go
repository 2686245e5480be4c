package train

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/data"
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

// PresetBenchOptions configures `bench train preset=NAME`: a few steps of a
// paper preset on random tokens, priced against its paper-mode schedule.
type PresetBenchOptions struct {
	Preset    string
	Backend   string
	Steps     int    // timed steps, after one that compiles
	Precision string // "": bf16, as paper mode trains every preset
	Batch     int    // 0: the preset's schedule's
	// Devices also prices the schedule on this many devices, assuming linear
	// data-parallel scaling: an upper bound on the speed-up. The steps run on one.
	Devices int
	// Shrink sets model options over the preset's (layers, dim, heads, n): a
	// smaller model, which is no longer the preset's, for tests on a CPU.
	Shrink map[string]string
}

// PresetBenchResult is what training one paper preset costs on one backend.
type PresetBenchResult struct {
	Preset  string `json:"preset"`
	Backend string `json:"backend"`
	// Shrunk lists the options set over the preset's: the cost is then not
	// the preset's, and says so.
	Shrunk     string  `json:"shrunk,omitempty"`
	Params     int64   `json:"params"`
	N          int     `json:"n"`
	Batch      int     `json:"batch"`
	Vocab      int     `json:"vocab"` // of the tokenizer ecpi trains it with (random tokens of it)
	Precision  string  `json:"precision"`
	Steps      int     `json:"steps"` // timed
	TokensPerS float64 `json:"tokens_per_s"`
	MsPerStep  float64 `json:"ms_per_step"`
	CompileMS  float64 `json:"compile_ms"`
	// MemoryMiB is XLA's plan for the training step on its device (the
	// largest program compiled with the first step): weights, optimizer
	// state, batch and temporaries. It is what the compiler reserves, not an
	// allocator's high-water mark; 0 on the Go backend, which plans nothing.
	MemoryMiB float64 `json:"memory_mib,omitempty"`
	// The schedule: ScheduleSteps of ScheduleBatch sequences of the preset's n.
	ScheduleSteps  int     `json:"schedule_steps"`
	ScheduleBatch  int     `json:"schedule_batch"`
	ScheduleTokens int64   `json:"schedule_tokens"`
	Hours          float64 `json:"hours"` // the schedule at TokensPerS on one device
	// HoursOnDevices is the schedule on Devices devices with linear
	// data-parallel scaling: a lower bound on the time (0: devices=1).
	Devices        int     `json:"devices,omitempty"`
	HoursOnDevices float64 `json:"hours_on_devices,omitempty"`
}

// Text is two lines: the measurement, then the schedule.
func (r *PresetBenchResult) Text() string {
	memory := "device memory not planned on this backend"
	if r.MemoryMiB > 0 {
		memory = fmt.Sprintf("device memory %.2f GiB (XLA's plan for the step)", r.MemoryMiB/1024)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s (%s, n=%d, batch %d, %s parameters, vocab %d): %.0f tokens/s, %.1f ms/step (%d steps), compile %.1f s, %s",
		r.Preset, r.Backend, r.Precision, r.N, r.Batch, millions(r.Params), r.Vocab, r.TokensPerS, r.MsPerStep, r.Steps, r.CompileMS/1000, memory)
	if r.Shrunk != "" {
		fmt.Fprintf(&b, "\n  shrunk (%s): not the preset's cost", r.Shrunk)
	}
	fmt.Fprintf(&b, "\n  schedule %d steps × %d × %d = %.3gB tokens: %s on one device", r.ScheduleSteps, r.ScheduleBatch,
		r.ScheduleTokens/int64(r.ScheduleSteps*r.ScheduleBatch), float64(r.ScheduleTokens)/1e9, hours(r.Hours))
	if r.Devices > 1 {
		fmt.Fprintf(&b, ", at best %s on %d (linear data-parallel scaling, an upper bound on the speed-up)", hours(r.HoursOnDevices), r.Devices)
	}
	return b.String()
}

func hours(h float64) string {
	if h >= 48 {
		return fmt.Sprintf("%.1f days", h/24)
	}
	return fmt.Sprintf("%.1f h", h)
}

// BenchPreset trains a paper preset for o.Steps+1 steps on random tokens of
// the vocabulary ecpi trains it with (a step costs the same on any tokens, and
// no corpus is needed), at its n and in bfloat16 without dropout as paper
// mode trains it, and prices the preset's schedule at the speed measured. The
// first step compiles and is timed apart; nothing is evaluated or saved.
func BenchPreset(ctx context.Context, o PresetBenchOptions) (*PresetBenchResult, error) {
	p, err := models.PresetByName(o.Preset)
	if err != nil {
		return nil, err
	}
	if o.Steps < 1 {
		return nil, fmt.Errorf("steps=%d: time at least one step after the one that compiles", o.Steps)
	}
	values := map[string]string{"preset": p.Name, "dropout": "0", "batch": fmt.Sprint(cmp.Or(o.Batch, p.Batch)),
		"steps": fmt.Sprint(o.Steps + 1), "precision": cmp.Or(o.Precision, "bf16"), "backend": o.Backend}
	var shrunk []string
	for _, name := range slices.Sorted(maps.Keys(o.Shrink)) {
		values[name] = o.Shrink[name]
		shrunk = append(shrunk, name+"="+o.Shrink[name])
	}
	opts, err := ParseOptions(values)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	opts.Tokenizer = cmp.Or(p.Tokenizer, opts.Tokenizer)
	t, cfg, err := randomTask(p, opts)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	s, err := sessionFor(opts, cfg, t, nil)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	if onHost := s.backend.Name == "go" || s.backend.Name == "xla:cpu"; onHost {
		if err := CheckMemory(cfg, opts.Batch, true); err != nil {
			return nil, fmt.Errorf("preset %s: %w", p.Name, err)
		}
	}
	r := &PresetBenchResult{Preset: p.Name, Backend: s.backend.Name, Shrunk: strings.Join(shrunk, " "), N: cfg.SeqLen, Batch: opts.Batch,
		Vocab: cfg.Vocab, Precision: opts.Precision, Steps: o.Steps, ScheduleSteps: p.Steps, ScheduleBatch: p.Batch}
	if err := r.time(ctx, s); err != nil {
		return nil, fmt.Errorf("preset %s on %s: %w", p.Name, s.backend.Name, err)
	}
	r.Params = countParams(s.store)
	n, err := strconv.Atoi(p.Options["n"])
	if err != nil {
		return nil, fmt.Errorf("preset %s has no n: %w", p.Name, err)
	}
	r.ScheduleTokens = int64(p.Steps) * int64(p.Batch) * int64(n)
	r.Hours = float64(r.ScheduleTokens) / r.TokensPerS / 3600
	if r.Devices = o.Devices; r.Devices > 1 {
		r.HoursOnDevices = r.Hours / float64(r.Devices)
	}
	return r, nil
}

// time runs the steps: the first, which compiles (XLA's memory plan read from
// its compilation), then the timed ones.
func (r *PresetBenchResult) time(ctx context.Context, s *session) error {
	first := func() error {
		if err := s.initialize(); err != nil {
			return err
		}
		_, err := s.trainStep()
		return err
	}
	start := time.Now()
	if s.backend.Name == "go" {
		if err := first(); err != nil {
			return err
		}
	} else {
		programs, err := xla.CompiledMemory(first)
		if err != nil {
			return err
		}
		for _, program := range programs {
			r.MemoryMiB = max(r.MemoryMiB, program.PlannedMiB())
		}
	}
	firstStep := time.Since(start)
	start = time.Now()
	for range r.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := s.trainStep(); err != nil {
			return err
		}
	}
	r.MsPerStep = 1000 * time.Since(start).Seconds() / float64(r.Steps)
	r.TokensPerS = float64(r.Batch*r.N) / (r.MsPerStep / 1000)
	r.CompileMS = max(0, 1000*firstStep.Seconds()-r.MsPerStep)
	return nil
}

// randomTask is preset p's task on random tokens: a language model's windows
// over a random stream of its tokenizer's vocabulary, or a classifier's
// random sequences and labels.
func randomTask(p models.Preset, o Options) (task, models.Config, error) {
	cfg := o.Model
	rng := rand.New(rand.NewPCG(uint64(o.Seed), uint64(cfg.SeqLen)))
	randomTokens := func(count, vocab int) []int32 {
		tokens := make([]int32, count)
		for i := range tokens {
			tokens[i] = int32(rng.IntN(vocab))
		}
		return tokens
	}
	if p.Classes > 0 {
		examples := make([]data.Example, 4*o.Batch)
		for i := range examples {
			examples[i] = data.Example{Tokens: randomTokens(cfg.SeqLen, cfg.Vocab), Label: int32(rng.IntN(p.Classes))}
		}
		set, err := newExampleSet(map[string][]data.Example{"train": examples}, o, cfg.SeqLen)
		return &classTask{exampleSet: set, classes: p.Classes, voc: cfg.Vocab}, cfg, err
	}
	tok, err := data.NewTokenizer(o.Tokenizer)
	if err != nil {
		return nil, cfg, err
	}
	cfg.Vocab = tok.VocabSize()
	batches, err := data.NewLMBatches(randomTokens(4*o.Batch*(cfg.SeqLen+1), cfg.Vocab), o.Batch, cfg.SeqLen, uint64(o.Seed))
	return &lmTask{tok: tok, batches: batches, n: cfg.SeqLen, batch: o.Batch}, cfg, err
}
