package repl

import (
	"errors"
	"fmt"
	"os"

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
			"data= decides the task:\n" +
			"  corpora (foldoc, opticks, ...)   language model; n= is the window\n" +
			"  mnist, fashion-mnist, cifar10    classification of pixel sequences; n comes from the images\n" +
			"                                   (784, 1024): leave n out, another n is an error\n" +
			"  listops, pathfinder              classification, generated for the model's n: ListOps of\n" +
			"                                   n/4..n tokens (padded to n; default n=2000), Pathfinder of\n" +
			"                                   √n×√n pixels (n a square; default 1024)\n" +
			"  passkey, assoc                   retrieval: a prompt then its answer (n+1 tokens), trained as\n" +
			"                                   an LM with the loss on the answer only; valid_acc is the\n" +
			"                                   share of answers predicted whole (= greedy decoding).\n" +
			"                                   distance= tokens from the fact to the end of the prompt\n" +
			"                                   (default n/2); defaults n=512 (passkey), 256 (assoc)\n" +
			"examples= shrinks a generated set (training examples; valid and test get a tenth each).\n" +
			"causal=false (full, local, pi) attends both ways: classification only.\n" +
			"devices=N splits each batch across N devices of an XLA backend (batch a multiple of N, no\n" +
			"accum). `ecpi retrieval` trains one model per distance and reports test accuracy.",
		Options: trainOptions(),
		Run:     runTrain,
	})
	Register(&Command{
		Name:    "resume",
		Summary: "continue a run from its last checkpoint, exactly as if it had not stopped",
		Options: []Option{
			{Name: "run", Help: "run folder or checkpoint (default: the session's checkpoint)"},
			checkpointOption,
			{Name: "steps", Help: "total steps to reach (default: the run's)"},
			{Name: "eval_every", Help: "evaluate and checkpoint every this many steps"},
			{Name: "eval_batches", Help: "validation batches per evaluation (0: all)"},
			{Name: "keep", Help: "checkpoints kept"},
			{Name: "model", Help: "refuse the checkpoint unless it is of this family"},
			BackendOption,
		},
		Run: runResume,
	})
	Register(&Command{
		Name:    "eval",
		Summary: "evaluate a checkpoint: perplexity (windows of n+1, stride n/2), bits per character, or accuracy",
		Options: []Option{
			checkpointOption,
			{Name: "split", Default: "valid", Help: "valid or test", Values: func(*Session) []string { return []string{"valid", "test"} }},
			{Name: "eval_batches", Default: "0", Help: "batches to evaluate (0: the whole split)"},
			{Name: "model", Help: "refuse the checkpoint unless it is of this family"},
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
			{Name: "tokens", Default: "200", Help: "tokens to generate"},
			{Name: "temperature", Default: "0.8", Help: "softmax temperature (0: greedy)"},
			{Name: "top_k", Default: "40", Help: "sample among the k most likely tokens (0: all)"},
			{Name: "seed", Default: "1", Help: "sampling seed"},
			{Name: "model", Help: "refuse the checkpoint unless it is of this family"},
			BackendOption,
		},
		Run: runSample,
	})
	Register(&Command{
		Name:    "bench train",
		Summary: "training tokens/s and ms/step of a fixed small model on every available backend",
		Options: []Option{
			{Name: "model", Default: "ecp", Help: "model family of the fixed small model"},
			{Name: "steps", Default: "10", Help: "timed steps per backend (after one compiling step)"},
			{Name: "backends", Help: "comma-separated backends (default: every available one)"},
		},
		Run: runBenchTrain,
	})
}

var checkpointOption = Option{Name: "checkpoint", Help: "checkpoint or run folder (default: the session's, set by train)"}

// trainOptions: every training option and every model option.
func trainOptions() []Option {
	var opts []Option
	for _, info := range train.OptionInfos() {
		values := info.Values
		opt := Option{Name: info.Name, Default: info.Default, Help: info.Help}
		if values != nil {
			opt.Values = func(*Session) []string { return values }
		}
		if info.Name == "backend" {
			opt = BackendOption
		}
		opts = append(opts, opt)
	}
	return append(opts, modelOptions()...)
}

func runTrain(c *Call) error {
	o, err := train.ParseOptions(compareValues(c, c.String("model")))
	if err != nil {
		return Usagef("%v", err)
	}
	line := NewLossLine(c, "")
	r, err := train.Run(c.Ctx, o, line.Update)
	line.End()
	if err != nil {
		return err
	}
	return finishRun(c, r)
}

// finishRun makes the run the session's current model and prints it.
func finishRun(c *Call, r *train.Result) error {
	c.Session.Set(map[string]string{"checkpoint": r.Checkpoint})
	c.Session.Remember("train", r)
	return c.Emit(r)
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

func runResume(c *Call) error {
	path, err := checkpointPath(c)
	if err != nil {
		return err
	}
	overrides := map[string]string{}
	for _, name := range []string{"steps", "eval_every", "eval_batches", "keep", "model", "backend"} {
		if _, typed := c.given[name]; typed {
			overrides[name] = c.String(name)
		}
	}
	line := NewLossLine(c, "")
	r, err := train.Resume(c.Ctx, path, overrides, line.Update)
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
	l, err := train.Open(path, c.String("backend"))
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
	batches, err := c.Int("eval_batches")
	if err != nil {
		return err
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
	r, err := train.Evaluate(c.Ctx, train.EvalOptions{Checkpoint: path, Split: c.String("split"), Batches: batches, Backend: c.String("backend")})
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
	tokens, err := c.Int("tokens")
	if err != nil {
		return err
	}
	topK, err := c.Int("top_k")
	if err != nil {
		return err
	}
	seed, err := c.Int("seed")
	if err != nil {
		return err
	}
	temperature, err := c.Float("temperature")
	if err != nil {
		return err
	}
	l, err := openCheckpoint(c)
	if err != nil {
		return err
	}
	prompt := ""
	for i, a := range c.Args {
		if i > 0 {
			prompt += " "
		}
		prompt += a
	}
	r, err := l.Sample(c.Ctx, train.SampleOptions{Prompt: prompt, Tokens: tokens, Temperature: temperature, TopK: topK, Seed: uint64(seed)})
	if err != nil {
		return err
	}
	c.Session.Remember("sample", r)
	return c.Emit(SampleText{r})
}

func runBenchTrain(c *Call) error {
	steps, err := c.Int("steps")
	if err != nil {
		return err
	}
	names := c.Strings("backends")
	if len(names) == 0 {
		for _, cand := range xla.Available() {
			names = append(names, cand.Name)
		}
	}
	var failed []error
	for _, name := range names {
		r, err := train.Bench(c.Ctx, name, c.String("model"), steps)
		if err != nil {
			failed = append(failed, fmt.Errorf("backend %s: %w", name, err))
			fmt.Fprintf(os.Stderr, "bench train: backend %s: %v\n", name, err)
			continue
		}
		if err := c.Emit(r); err != nil {
			return err
		}
	}
	if len(failed) == len(names) {
		return errors.Join(failed...)
	}
	return nil
}
