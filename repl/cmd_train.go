package repl

import (
	"fmt"
	"slices"
	"strings"

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
		Options: []Option{
			checkpointOption,
			ChoiceOption("split", "valid", "valid or test", "valid", "test"),
			IntOption("eval_batches", "0", "batches to evaluate (0: the whole split)", option.AtLeast(0)),
			ChoiceOption("protocol", "", "language models: ecpi scores every target once, authors as the ECP paper (default: the run's)", train.Protocols...),
			refuseOtherFamily,
			BackendOption,
		},
		Run: runEval,
	})
	Register(&Command{
		Name:    "sample",
		Summary: "continue a prompt with a trained language model",
		Args:    "[PROMPT]",
		Options: []Option{
			checkpointOption,
			IntOption("tokens", "200", "tokens to generate", option.AtLeast(1)),
			FloatOption("temperature", "0.8", "softmax temperature (0: greedy)", option.AtLeast(0.0)),
			IntOption("top_k", "40", "sample among the k most likely tokens (0: all)", option.AtLeast(0)),
			IntOption("seed", "1", "sampling seed", option.AtLeast(0)),
			refuseOtherFamily,
			BackendOption,
		},
		Run: runSample,
	})
	Register(&Command{
		Name:    "bench train",
		Summary: "training tokens/s and ms/step of a fixed small model on every available backend",
		Options: []Option{
			ChoiceOption("model", models.DefaultFamily(), "model family of the fixed small model", models.FamilyNames()...),
			ChoiceOption("size", "small", "small: n=256, d=64, 2 layers; large: n=1024, d=256, 4 layers (4 heads, batch 8 both)", train.BenchSizes...),
			IntOption("steps", "10", "timed steps per backend (after one compiling step)", option.AtLeast(1)),
			ChoiceOption("precision", "float32", "float32, or bf16: mixed precision (train's precision=)", train.Precisions...),
			{Name: "backends", Help: "comma-separated backends (default: every available one)", Check: func(v string) error {
				for _, name := range strings.Split(v, ",") {
					if err := checkBackendName(strings.TrimSpace(name)); err != nil {
						return err
					}
				}
				return nil
			}},
		},
		Run: runBenchTrain,
	})
	Register(&Command{
		Name:    "bench generate",
		Summary: "generation tokens/s per family and length: incremental decoding against recomputing the window",
		Details: "Models of bench train's sizes with random weights, a prompt of n/2 random tokens, then tokens=\n" +
			"tokens generated one at a time (median per token, after the graphs compiled): with the key/value\n" +
			"cache (every family decodes incrementally), and by one full forward pass per token.",
		Options: []Option{
			ListOption("models", strings.Join(models.BenchmarkFamilies(), ","), "comma-separated model families", models.FamilyNames),
			IntsOption("n", "1024,4096", "comma-separated sequence lengths", option.AtLeast(2)),
			ChoiceOption("size", "small", "the model's width and depth, as bench train's", train.BenchSizes...),
			IntOption("tokens", "32", "tokens timed per measurement (at most n/2)", option.AtLeast(1)),
			BackendOption,
		},
		Run: runBenchGenerate,
	})
}

func runBenchGenerate(c *Call) error {
	r := c.Read()
	o := train.GenerateOptions{Families: c.Strings("models"), Lengths: r.Ints("n"), Size: c.String("size"), Tokens: r.Int("tokens"), Backend: c.String("backend")}
	if err := r.Err(); err != nil {
		return err
	}
	var results []*train.GenerateResult
	err := train.BenchGenerate(c.Ctx, o, func(g *train.GenerateResult) error {
		results = append(results, g)
		return c.Emit(g)
	})
	c.Session.Remember("bench generate", results)
	return err
}

var checkpointOption = Option{Name: "checkpoint", Help: "checkpoint or run folder (default: the session's, set by train)"}

// refuseOtherFamily refuses a checkpoint of another family (eval, sample, probes).
var refuseOtherFamily = ChoiceOption("model", "", "refuse the checkpoint unless it is of this family", models.FamilyNames()...)

// trainOptions: every training option and every model option.
func trainOptions() []Option {
	var opts []Option
	for _, info := range train.OptionInfos() {
		if info.Name == "backend" {
			opts = append(opts, BackendOption)
			continue
		}
		opts = append(opts, fromInfo(info))
	}
	return append(opts, modelOptions()...)
}

func runTrain(c *Call) error {
	values, err := runValues(c)
	if err != nil {
		return err
	}
	o, err := train.ParseOptions(values)
	if err != nil {
		return Usagef("%v", err)
	}
	line := NewLossLine(c, "")
	r, err := c.Session.pool.Run(c.Ctx, o, line.Update)
	line.End()
	if err != nil {
		return err
	}
	return finishRun(c, r)
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

// checkpointPath is the typed checkpoint=, else run= (resume), else the session's.
func checkpointPath(c *Call) (string, error) {
	for _, name := range []string{"checkpoint", "run"} {
		if c.option(name) != nil && c.Has(name) && c.String(name) != "" {
			return c.String(name), nil
		}
	}
	return "", Usagef("%s needs a model: train one first, or give checkpoint=PATH", c.Command.Name)
}

// resumeOptions are the run to resume, then every training and model option
// with no default: train.Resume changes the run by the resumable ones and
// refuses any other unless it repeats the value the run was saved with.
func resumeOptions() []Option {
	opts := []Option{{Name: "run", Help: "run folder or checkpoint (default: the session's checkpoint)"}, checkpointOption}
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

func runResume(c *Call) error {
	path, err := checkpointPath(c)
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

// openCheckpoint opens the call's checkpoint and checks its family against a typed model=.
func openCheckpoint(c *Call) (*train.Loaded, error) {
	path, err := checkpointPath(c)
	if err != nil {
		return nil, err
	}
	l, err := c.Session.pool.Open(path, c.String("backend"))
	if err != nil {
		return nil, err
	}
	if _, typed := c.given["model"]; typed {
		if err := l.CheckFamily(c.String("model")); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func runEval(c *Call) error {
	path, err := checkpointPath(c)
	if err != nil {
		return err
	}
	batches, err := option.ParseInt("eval_batches", c.String("eval_batches"))
	if err != nil {
		return Usagef("%v", err)
	}
	if _, typed := c.given["model"]; typed {
		m, _, err := train.LoadManifest(path)
		if err != nil {
			return err
		}
		if m.Family != c.String("model") {
			return fmt.Errorf("checkpoint %s is a %s model, not %s", path, m.Family, c.String("model"))
		}
	}
	l, err := c.Session.pool.Open(path, c.String("backend"))
	if err != nil {
		return err
	}
	r, err := l.Evaluate(c.Ctx, train.EvalOptions{Split: c.String("split"), Batches: batches, Protocol: c.String("protocol")})
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

func runSample(c *Call) error {
	r := c.Read()
	o := train.SampleOptions{Tokens: r.Int("tokens"), Temperature: r.Float("temperature"), TopK: r.Int("top_k"), Seed: uint64(r.Int("seed"))}
	if err := r.Err(); err != nil {
		return err
	}
	l, err := openCheckpoint(c)
	if err != nil {
		return err
	}
	o.Prompt = strings.Join(c.Args, " ")
	result, err := l.Sample(c.Ctx, o)
	if err != nil {
		return err
	}
	c.Session.Remember("sample", result)
	return c.Emit(SampleText{result})
}

func runBenchTrain(c *Call) error {
	steps, err := option.ParseInt("steps", c.String("steps"))
	if err != nil {
		return Usagef("%v", err)
	}
	names := c.Strings("backends")
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
		r, err := train.Bench(c.Ctx, name, c.String("model"), c.String("size"), c.String("precision"), steps)
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
