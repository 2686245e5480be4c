package repl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/cluster/runcache"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/ecpi-dev/ecpi/xla"
)

func init() {
	Register(&Command{
		Name:    "train",
		Summary: "train a model on a corpus (LM), a classification set or a retrieval task; ends with the result",
		Details: "Model options (typed or from `model`) and training options; the vocabulary comes from\n" +
			"tokenizer= (or the dataset). Ctrl-C saves a checkpoint and stops; `resume` continues exactly.\n" +
			"The run folder and checkpoint become the session's current model.\n" +
			"\n" +
			"data= decides the task:\n" + dataHelp() +
			"Retrieval sets are trained as a language model with the loss on the answer only; valid_acc is\n" +
			"the share of answers predicted whole (= greedy decoding). examples= shrinks a generated set\n" +
			"(training examples; valid and test get a tenth each).\n" +
			"causal=false (" + strings.Join(bidirectionalFamilies(), ", ") + ") attends both ways: " + strings.Join(bothWaysData(), ", ") + " only.\n" +
			"devices=N splits each batch across N devices of an XLA backend (batch a multiple of N, no\n" +
			"accum). `ecpi retrieval` trains one model per distance and reports test accuracy.",
		Options: trainOptions(),
		Run:     runTrain,
	})
	Register(&Command{
		Name:    "cached",
		Summary: "whether a run is finished in the run cache: train with the same options and reuse=true reads it",
		Details: "Takes train's options. An executor other than local (docs/cluster.md) asks it of every run of a\n" +
			"batch, so that only the runs not yet cached are submitted.",
		Options: trainOptions(),
		Run:     runCachedQuery,
	})
	Register(&Command{
		Name:    "resume",
		Summary: "continue a run from its last checkpoint, exactly as if it had not stopped",
		Details: "steps= (the total to reach), eval_every=, eval_batches=, protocol=, keep=, backend= and devices=\n" +
			"may change; any other training or model option may be given only with the value the run was saved\n" +
			"with, so a run's own train line with `resume` in place of `train` continues it.",
		Options: resumeOptions(),
		Run:     runResume,
	})
	Register(&Command{
		Name:    "eval",
		Summary: "evaluate a checkpoint: perplexity and bits per character (ecpi's or the ECP authors' protocol), or accuracy",
		Options: evalOptions.Declare(),
		Run:     runEval,
	})
	Register(&Command{
		Name:    "sample",
		Summary: "continue a prompt with a trained language model",
		Args:    "[PROMPT]",
		Options: sampleOptions.Declare(),
		Run:     runSample,
	})
	Register(&Command{
		Name:    "bench train",
		Summary: "training tokens/s and ms/step of a fixed small model, or of a paper preset, on every available backend",
		Details: "preset=NAME times a paper preset instead (`ecpi models preset=all` lists them): a few steps on random\n" +
			"tokens of its vocabulary, at its n, in bf16 without dropout as paper mode trains it, with its compile\n" +
			"time and XLA's planned device memory, and prices its paper-mode schedule (steps × batch × n) at that\n" +
			"speed on one device and, with devices=N, on N assuming linear data-parallel scaling (an upper bound\n" +
			"on the speed-up; the steps run on one device). layers=, dim=, heads=, n= shrink it (no longer its cost).",
		Options: benchTrainOptions.Declare(),
		Run:     runBenchTrain,
	})
	Register(&Command{
		Name:    "bench generate",
		Summary: "generation tokens/s per family and length: incremental decoding against recomputing the window",
		Details: "Models of bench train's sizes with random weights, a prompt of n/2 random tokens, then tokens=\n" +
			"tokens generated one at a time (median per token, after the graphs compiled): with the key/value\n" +
			"cache (every family decodes incrementally), and by one full forward pass per token.",
		Options: benchGenerateOptions.Declare(),
		Run:     runBenchGenerate,
	})
}

// benchGenerateOptions declare train.GenerateOptions.
var benchGenerateOptions = Options[train.GenerateOptions]{
	Table: option.Table[train.GenerateOptions]{
		option.List("models", "comma-separated model families", models.FamilyNames(), func(o *train.GenerateOptions) *[]string { return &o.Families }),
		option.Ints("n", "comma-separated sequence lengths", func(o *train.GenerateOptions) *[]int { return &o.Lengths }, option.AtLeast(2)),
		option.Choice("size", "the model's width and depth, as bench train's", train.BenchSizes, func(o *train.GenerateOptions) *string { return &o.Size }),
		option.Int("tokens", "tokens timed per measurement (at most n/2)", func(o *train.GenerateOptions) *int { return &o.Tokens }, option.AtLeast(1)),
		backendField(func(o *train.GenerateOptions) *string { return &o.Backend }),
	},
	Defaults: train.GenerateOptions{Families: models.BenchmarkFamilies(), Lengths: []int{1024, 4096}, Size: "small", Tokens: 32},
}

func runBenchGenerate(c *Call) error {
	o, err := benchGenerateOptions.Read(c)
	if err != nil {
		return err
	}
	var results []*train.GenerateResult
	err = train.BenchGenerate(c.Ctx, o, func(g *train.GenerateResult) error {
		results = append(results, g)
		return c.Emit(g)
	})
	c.Session.Remember("bench generate", results)
	return err
}

// checkpointArgs are the options of a command that opens a trained model.
type checkpointArgs struct{ Checkpoint, Model, Backend string }

// checkpointTable declares checkpointArgs; commands lift it into their own
// options with option.Within.
var checkpointTable = option.Table[checkpointArgs]{
	checkpointField(func(a *checkpointArgs) *string { return &a.Checkpoint }),
	familyFilterField(func(a *checkpointArgs) *string { return &a.Model }),
	backendField(func(a *checkpointArgs) *string { return &a.Backend }),
}

// trainOptions: every training option and every model option.
func trainOptions() []Option {
	var opts []Option
	for _, info := range train.OptionInfos() {
		if info.Name == "backend" {
			info = backendOption
		}
		opts = append(opts, info)
	}
	return append(opts, modelOptions()...)
}

func runTrain(c *Call) error {
	o, err := runOptions(c)
	if err != nil {
		return err
	}
	line := NewLossLine(c, "")
	r, err := trainRun(c, o, line.Update)
	line.End()
	if err != nil {
		return err
	}
	return finishRun(c, r)
}

// CachedRun says whether a run is finished in the run cache, and its folder there.
type CachedRun struct {
	Cached bool   `json:"cached"`
	Run    string `json:"run"`
}

func (r CachedRun) Text() string {
	if r.Cached {
		return "finished in the run cache: " + r.Run
	}
	return "not in the run cache (or not finished): " + r.Run
}

func runCachedQuery(c *Call) error {
	o, err := runOptions(c)
	if err != nil {
		return err
	}
	dir, cached, err := runcache.Cached(o)
	if err != nil {
		return err
	}
	return c.Emit(CachedRun{Cached: cached, Run: dir})
}

// runOptions are the training options of one run (train, cached).
func runOptions(c *Call) (train.Options, error) {
	values, err := runValues(c)
	if err != nil {
		return train.Options{}, err
	}
	o, err := train.ParseOptions(values)
	if err != nil {
		return o, Usagef("%v", err)
	}
	return o, nil
}

// trainRun trains o in the session's pool, or, with reuse=true, through the
// run cache, which other processes on other machines may share (a Slurm
// batch's tasks, another notebook).
func trainRun(c *Call, o train.Options, progress func(train.Progress)) (*train.Result, error) {
	if o.Reuse {
		return runcache.Train(c.Ctx, o, progress)
	}
	return c.Session.pool.Run(c.Ctx, o, progress)
}

// runValues are the options of one run (train, retrieval): those of
// compareValues for the family named, but a model option typed here that the
// family does not read is an error instead of being left out.
func runValues(c *Call) (map[string]string, error) {
	family := c.String("model")
	f, ok := models.FamilyByName(family)
	if !ok {
		return nil, Usagef("unknown model %q; choose one of: %s", family, strings.Join(models.FamilyNames(), ", "))
	}
	for name := range c.given {
		if models.IsOption(name) && !f.Reads(name) {
			return nil, Usagef("option %s does not apply to model %s", name, family)
		}
	}
	return compareValues(c, family), nil
}

// finishRun makes the run the session's current model and prints it.
func finishRun(c *Call, r *train.Result) error {
	c.Session.Set(map[string]string{"checkpoint": r.Checkpoint})
	c.Session.Remember("train", r)
	return c.Emit(r)
}

// dataHelp lists the data train reads, as the registry declares them: the
// names of each dataset and its summary.
func dataHelp() string {
	var b strings.Builder
	infos := train.DataInfos()
	for i := 0; i < len(infos); {
		j := i
		var names []string
		for ; j < len(infos) && infos[j].Summary == infos[i].Summary; j++ {
			names = append(names, infos[j].Name)
		}
		fmt.Fprintf(&b, "  %s\n      %s\n", strings.Join(names, ", "), infos[i].Summary)
		i = j
	}
	return b.String()
}

// bidirectionalFamilies are the families that accept causal=false.
func bidirectionalFamilies() []string {
	var names []string
	for _, f := range models.Families() {
		if f.Bidirectional {
			names = append(names, f.Name)
		}
	}
	return names
}

// bothWaysData are the kinds of data whose models may attend both ways.
func bothWaysData() []string {
	var kinds []string
	for _, d := range train.DataInfos() {
		if d.BothWays && !slices.Contains(kinds, d.Kind) {
			kinds = append(kinds, d.Kind)
		}
	}
	return kinds
}

// checkpointPath is the model a command opens (typed, or the session's
// checkpoint): a usage error when there is none.
func checkpointPath(c *Call, path string) (string, error) {
	if path == "" {
		return "", Usagef("%s needs a model: train one first, or give checkpoint=PATH", c.Command.Name)
	}
	return path, nil
}

// resumeOptions are the run to resume, then every training and model option
// with no default: train.Resume changes the run by the resumable ones and
// refuses any other unless it repeats the value the run was saved with.
func resumeOptions() []Option {
	opts := append(resumeRun.Declare(), checkpointTable[0].Info(""))
	for _, o := range trainOptions() {
		if o.Name == "run" {
			continue
		}
		o.Default = ""
		if !train.Resumable(o.Name) {
			o.Help = "as the run was saved with: " + o.Help
		}
		opts = append(opts, o)
	}
	return opts
}

// resumeRun is the run that resume continues; without it, checkpoint= (typed
// or the session's).
var resumeRun = Options[checkpointArgs]{Table: option.Table[checkpointArgs]{
	option.Text("run", "run folder or checkpoint (default: the session's checkpoint)", func(a *checkpointArgs) *string { return &a.Checkpoint }),
}}

func runResume(c *Call) error {
	run, err := resumeRun.Read(c)
	if err != nil {
		return err
	}
	if run.Checkpoint == "" && c.Has("checkpoint") {
		run.Checkpoint = c.String("checkpoint")
	}
	path, err := checkpointPath(c, run.Checkpoint)
	if err != nil {
		return err
	}
	overrides := map[string]string{}
	for name := range c.given {
		if name != "run" && name != "checkpoint" {
			overrides[name] = c.String(name)
		}
	}
	line := NewLossLine(c, "")
	r, err := c.Session.pool.Resume(c.Ctx, path, overrides, line.Update)
	line.End()
	if err != nil {
		return err
	}
	return finishRun(c, r)
}

// openCheckpoint opens the checkpoint and checks its family against a
// model= typed on this call (the session's model= is what to train next, not
// a filter).
func openCheckpoint(c *Call, a checkpointArgs) (*train.Loaded, error) {
	path, err := checkpointPath(c, a.Checkpoint)
	if err != nil {
		return nil, err
	}
	l, err := c.Session.pool.Open(path, a.Backend)
	if err != nil {
		return nil, err
	}
	if _, typed := c.given["model"]; typed {
		if err := l.CheckFamily(a.Model); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// evalArgs are eval's options: the checkpoint's and the evaluation's.
type evalArgs struct {
	checkpointArgs
	train.EvalOptions
}

var evalOptions = Options[evalArgs]{
	Table: append(option.Within(checkpointTable, func(a *evalArgs) *checkpointArgs { return &a.checkpointArgs }),
		option.Choice("split", "valid or test", []string{"valid", "test"}, func(a *evalArgs) *string { return &a.Split }),
		option.Int("eval_batches", "batches to evaluate (0: the whole split)", func(a *evalArgs) *int { return &a.Batches }, option.AtLeast(0)),
		option.Choice("protocol", "language models: ecpi scores every target once, authors as the ECP paper (default: the run's)", train.Protocols,
			func(a *evalArgs) *string { return &a.Protocol })),
	Defaults: evalArgs{EvalOptions: train.EvalOptions{Split: "valid"}},
}

func runEval(c *Call) error {
	args, err := evalOptions.Read(c)
	if err != nil {
		return err
	}
	path, err := checkpointPath(c, args.checkpointArgs.Checkpoint)
	if err != nil {
		return err
	}
	if _, typed := c.given["model"]; typed {
		m, _, err := train.LoadManifest(path)
		if err != nil {
			return err
		}
		if m.Family != args.Model {
			return fmt.Errorf("checkpoint %s is a %s model, not %s", path, m.Family, args.Model)
		}
	}
	l, err := c.Session.pool.Open(path, args.checkpointArgs.Backend)
	if err != nil {
		return err
	}
	r, err := l.Evaluate(c.Ctx, args.EvalOptions)
	if err != nil {
		return err
	}
	c.Session.Remember("eval", r)
	return c.Emit(r)
}

// SampleText is what `sample` prints.
type SampleText struct{ *train.SampleResult }

func (s SampleText) Text() string {
	if s.Hint == "" {
		return s.SampleResult.String()
	}
	return s.SampleResult.String() + "\n\nhint: " + s.Hint
}

// sampleArgs are sample's options: the checkpoint's and the sampler's.
type sampleArgs struct {
	checkpointArgs
	train.SampleOptions
}

var sampleOptions = Options[sampleArgs]{
	Table: append(option.Within(checkpointTable, func(a *sampleArgs) *checkpointArgs { return &a.checkpointArgs }),
		option.Int("tokens", "tokens to generate", func(a *sampleArgs) *int { return &a.Tokens }, option.AtLeast(1)),
		option.Float("temperature", "softmax temperature (0: greedy)", func(a *sampleArgs) *float64 { return &a.Temperature }, option.AtLeast(0.0)),
		option.Int("top_k", "sample among the k most likely tokens (0: all)", func(a *sampleArgs) *int { return &a.TopK }, option.AtLeast(0)),
		option.Uint64("seed", "sampling seed", func(a *sampleArgs) *uint64 { return &a.Seed })),
	Defaults: sampleArgs{SampleOptions: train.SampleOptions{Tokens: 200, Temperature: 0.8, TopK: 40, Seed: 1}},
}

func runSample(c *Call) error {
	args, err := sampleOptions.Read(c)
	if err != nil {
		return err
	}
	l, err := openCheckpoint(c, args.checkpointArgs)
	if err != nil {
		return err
	}
	o := args.SampleOptions
	o.Prompt = strings.Join(c.Args, " ")
	result, err := l.Sample(c.Ctx, o)
	if err != nil {
		return err
	}
	c.Session.Remember("sample", result)
	return c.Emit(SampleText{result})
}

// benchTrainArgs are the options of `bench train`.
type benchTrainArgs struct {
	Model, Size, Precision string
	Steps                  int
	Backends               []string
	Preset                 string
	Batch, Devices         int
	Layers, Dim, Heads, N  int // shrink a preset (0: its own)
}

var benchTrainOptions = Options[benchTrainArgs]{
	Table: append(option.Table[benchTrainArgs]{
		option.Choice("model", "model family of the fixed small model", models.FamilyNames(), func(a *benchTrainArgs) *string { return &a.Model }),
		option.Choice("size", "small: n=256, d=64, 2 layers; large: n=1024, d=256, 4 layers (4 heads, batch 8 both)", train.BenchSizes, func(a *benchTrainArgs) *string { return &a.Size }),
		option.Int("steps", "timed steps per backend (after one compiling step)", func(a *benchTrainArgs) *int { return &a.Steps }, option.AtLeast(1)),
		option.Choice("precision", "float32, or bf16: mixed precision (train's precision=); preset= runs bf16 unless this is given", train.Precisions, func(a *benchTrainArgs) *string { return &a.Precision }),
		option.List("backends", "comma-separated backends (default: every available one)", nil, func(a *benchTrainArgs) *[]string { return &a.Backends }).
			Checking(func(v string) error {
				for _, name := range strings.Split(v, ",") {
					if err := checkBackendName(strings.TrimSpace(name)); err != nil {
						return err
					}
				}
				return nil
			}),
	}, presetOptions...),
	Defaults: benchTrainArgs{Model: models.DefaultFamily(), Size: "small", Precision: "float32", Steps: 10, Devices: 1},
}

// presetOptions are bench train's options for preset=: the preset, its
// batch, the devices its schedule is priced on, and what shrinks it.
var presetOptions = option.Table[benchTrainArgs]{
	option.OptionalChoice("preset", "time a paper preset instead of model=/size= (`ecpi models preset=all` lists them)", models.PresetNames(), func(a *benchTrainArgs) *string { return &a.Preset }),
	option.Int("batch", "preset=: sequences per step (0: its schedule's)", func(a *benchTrainArgs) *int { return &a.Batch }, option.AtLeast(0)),
	option.Int("devices", "preset=: also price the schedule on this many devices, assuming linear data-parallel scaling", func(a *benchTrainArgs) *int { return &a.Devices }, option.AtLeast(1)),
	option.Int("layers", "preset=: shrink it to this many layers (0: its own)", func(a *benchTrainArgs) *int { return &a.Layers }, option.AtLeast(0)),
	option.Int("dim", "preset=: shrink its width (0: its own)", func(a *benchTrainArgs) *int { return &a.Dim }, option.AtLeast(0)),
	option.Int("heads", "preset=: its heads (0: its own)", func(a *benchTrainArgs) *int { return &a.Heads }, option.AtLeast(0)),
	option.Int("n", "preset=: its sequence length (0: its own)", func(a *benchTrainArgs) *int { return &a.N }, option.AtLeast(0)),
}

func runBenchTrain(c *Call) error {
	args, err := benchTrainOptions.Read(c)
	if err != nil {
		return err
	}
	if err := checkPresetArgs(c, args); err != nil {
		return err
	}
	names := args.Backends
	if len(names) == 0 {
		for _, cand := range xla.Available() {
			names = append(names, cand.Name)
		}
	}
	// A backend that fails does not stop the others; the failures are one
	// error at the end.
	var failed []string
	for _, name := range names {
		if err := c.Ctx.Err(); err != nil {
			return fmt.Errorf("bench train interrupted before backend %s", name)
		}
		var r Texter
		var err error
		if args.Preset != "" {
			r, err = train.BenchPreset(c.Ctx, presetBench(c, args, name))
		} else {
			r, err = train.Bench(c.Ctx, name, args.Model, args.Size, args.Precision, args.Steps)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("backend %s: %v", name, err))
			continue
		}
		if err := c.Emit(r); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("bench train: %s", strings.Join(failed, "; "))
	}
	return nil
}

// checkPresetArgs: model= and size= choose the fixed model, preset= a
// paper's, and the options of one do not apply to the other.
func checkPresetArgs(c *Call, args benchTrainArgs) error {
	for _, f := range presetOptions[1:] {
		if _, typed := c.given[f.Name]; typed && args.Preset == "" {
			return Usagef("option %s= applies to preset=; the fixed models have their own (size=)", f.Name)
		}
	}
	for _, name := range []string{"model", "size"} {
		if _, typed := c.given[name]; typed && args.Preset != "" {
			return Usagef("option %s= chooses a fixed model; preset=%s is a model of its own", name, args.Preset)
		}
	}
	return nil
}

// presetBench is train.BenchPreset's options for one backend: precision=
// only where typed (a preset's own is bf16), the shrinking options set.
func presetBench(c *Call, args benchTrainArgs, backend string) train.PresetBenchOptions {
	o := train.PresetBenchOptions{Preset: args.Preset, Backend: backend, Steps: args.Steps, Batch: args.Batch, Devices: args.Devices, Shrink: map[string]string{}}
	if _, typed := c.given["precision"]; typed {
		o.Precision = args.Precision
	}
	for name, value := range map[string]int{"layers": args.Layers, "dim": args.Dim, "heads": args.Heads, "n": args.N} {
		if value > 0 {
			o.Shrink[name] = strconv.Itoa(value)
		}
	}
	return o
}
