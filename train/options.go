package train

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
)

// Options is one training run: the model (as key=value model options, the
// vocabulary excepted: it comes from the tokenizer), the data and the
// optimisation. DefaultOptions gives the values the commands document.
type Options struct {
	Model     map[string]string `json:"model"`     // models.ParseConfig options (model=ecp n=512 ...)
	Data      string            `json:"data"`      // corpus (LM), classification or retrieval set name
	Tokenizer string            `json:"tokenizer"` // byte | gpt2 (LM and passkey)
	Examples  int               `json:"examples"`  // generated sets: training examples (0: the set's default)
	Distance  int               `json:"distance"`  // passkey, assoc: tokens from the fact to the answer (0: n/2)
	Home      string            `json:"-"`         // $ECPI_HOME: data, runs

	Steps       int     `json:"steps"` // optimizer steps
	Batch       int     `json:"batch"` // sequences per micro-batch
	Accum       int     `json:"accum"` // micro-batches per optimizer step
	LR          float64 `json:"lr"`    // peak learning rate
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	WeightDecay float64 `json:"wd"`          // decoupled, on weight matrices only (see decays)
	Clip        float64 `json:"clip"`        // global gradient norm; 0 turns clipping off
	Warmup      int     `json:"warmup"`      // linear warm-up steps
	Schedule    string  `json:"schedule"`    // cosine | step | constant
	HalveEvery  int     `json:"halve_every"` // step schedule: halve the rate every this many steps (0: steps/4)

	EvalEvery   int    `json:"eval_every"`   // evaluate (and checkpoint) every this many steps; 0: at the end only
	EvalBatches int    `json:"eval_batches"` // validation batches per evaluation; 0: the whole split
	Seed        int64  `json:"seed"`
	RunDir      string `json:"run"`     // run folder; "" = $ECPI_HOME/runs/<model>-<data>-<timestamp>
	Keep        int    `json:"keep"`    // checkpoints kept
	Backend     string `json:"backend"` // "" = automatic (xla.Choose)
	Devices     int    `json:"devices"` // devices each batch is split across (XLA backends)
}

// Schedules names the learning-rate schedules.
var Schedules = []string{"cosine", "step", "constant"}

// DefaultOptions trains the default ECP model on foldoc for a few minutes on a laptop CPU.
func DefaultOptions() Options {
	return Options{
		Model: map[string]string{}, Data: "foldoc", Tokenizer: "byte", Home: data.Home(),
		Steps: 200, Batch: 8, Accum: 1, LR: 3e-4, Beta1: 0.9, Beta2: 0.95, WeightDecay: 0.1, Clip: 1.0,
		Warmup: 20, Schedule: "cosine", EvalEvery: 100, EvalBatches: 8, Seed: 1, Keep: 3, Devices: 1,
	}
}

// OptionInfo documents one training option (model options are documented by models.OptionsFor).
type OptionInfo struct {
	Name, Default, Help string
	Values              []string
	set                 func(o *Options, v string) error
}

var optionTable = []OptionInfo{
	strOpt("data", "corpus (LM), classification or retrieval set; see `ecpi train --help`", nil, func(o *Options) *string { return &o.Data }),
	strOpt("tokenizer", "tokenizer of text corpora and of passkey", data.TokenizerNames, func(o *Options) *string { return &o.Tokenizer }),
	intOpt("examples", "generated sets (listops, pathfinder, passkey, assoc): training examples, valid and test a tenth each (0: 10000)", func(o *Options) *int { return &o.Examples }),
	intOpt("distance", "passkey, assoc: tokens between the fact and the end of the prompt (0: n/2)", func(o *Options) *int { return &o.Distance }),
	intOpt("steps", "optimizer steps (resume: the total to reach)", func(o *Options) *int { return &o.Steps }),
	intOpt("batch", "sequences per micro-batch", func(o *Options) *int { return &o.Batch }),
	intOpt("accum", "micro-batches accumulated per optimizer step", func(o *Options) *int { return &o.Accum }),
	floatOpt("lr", "peak learning rate (ECP paper: 2e-4)", func(o *Options) *float64 { return &o.LR }),
	floatOpt("wd", "AdamW weight decay, on weight matrices only", func(o *Options) *float64 { return &o.WeightDecay }),
	floatOpt("clip", "clip the global gradient norm to this (0: off)", func(o *Options) *float64 { return &o.Clip }),
	intOpt("warmup", "linear warm-up steps", func(o *Options) *int { return &o.Warmup }),
	strOpt("schedule", "learning-rate schedule after warm-up", Schedules, func(o *Options) *string { return &o.Schedule }),
	intOpt("halve_every", "schedule=step: halve the rate every this many steps (0: steps/4)", func(o *Options) *int { return &o.HalveEvery }),
	intOpt("eval_every", "evaluate and checkpoint every this many steps (0: at the end)", func(o *Options) *int { return &o.EvalEvery }),
	intOpt("eval_batches", "validation batches per evaluation (0: the whole split)", func(o *Options) *int { return &o.EvalBatches }),
	int64Opt("seed", "seed of initialisation, dropout and batch order", func(o *Options) *int64 { return &o.Seed }),
	strOpt("run", "run folder (default $ECPI_HOME/runs/<model>-<data>-<time>)", nil, func(o *Options) *string { return &o.RunDir }),
	intOpt("keep", "checkpoints kept in the run folder", func(o *Options) *int { return &o.Keep }),
	strOpt("backend", "compute backend: go, xla, xla:cpu, ... (default: automatic)", nil, func(o *Options) *string { return &o.Backend }),
	intOpt("devices", "split every batch across this many devices of an XLA backend (batch must divide; no accum)", func(o *Options) *int { return &o.Devices }),
}

// OptionInfos lists the training options with their defaults.
func OptionInfos() []OptionInfo {
	defaults := DefaultOptions()
	out := slices.Clone(optionTable)
	for i := range out {
		out[i].Default = defaults.get(out[i].Name)
	}
	return out
}

func (o Options) get(name string) string {
	switch name {
	case "data":
		return o.Data
	case "tokenizer":
		return o.Tokenizer
	case "examples":
		return strconv.Itoa(o.Examples)
	case "distance":
		return strconv.Itoa(o.Distance)
	case "steps":
		return strconv.Itoa(o.Steps)
	case "batch":
		return strconv.Itoa(o.Batch)
	case "accum":
		return strconv.Itoa(o.Accum)
	case "lr":
		return strconv.FormatFloat(o.LR, 'g', -1, 64)
	case "wd":
		return strconv.FormatFloat(o.WeightDecay, 'g', -1, 64)
	case "clip":
		return strconv.FormatFloat(o.Clip, 'g', -1, 64)
	case "warmup":
		return strconv.Itoa(o.Warmup)
	case "schedule":
		return o.Schedule
	case "halve_every":
		return strconv.Itoa(o.HalveEvery)
	case "eval_every":
		return strconv.Itoa(o.EvalEvery)
	case "eval_batches":
		return strconv.Itoa(o.EvalBatches)
	case "seed":
		return strconv.FormatInt(o.Seed, 10)
	case "run":
		return o.RunDir
	case "keep":
		return strconv.Itoa(o.Keep)
	case "backend":
		return o.Backend
	case "devices":
		return strconv.Itoa(o.Devices)
	}
	return ""
}

// ParseOptions builds Options from key=value pairs: training options by the
// table above, every name models.IsOption accepts into Model. Unknown names
// are errors.
func ParseOptions(values map[string]string) (Options, error) {
	o := DefaultOptions()
	return o, o.apply(values)
}

func (o *Options) apply(values map[string]string) error {
	if o.Model == nil {
		o.Model = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		v := values[name]
		if i := slices.IndexFunc(optionTable, func(t OptionInfo) bool { return t.Name == name }); i >= 0 {
			if err := optionTable[i].set(o, v); err != nil {
				return err
			}
			continue
		}
		if name == "vocab" {
			return fmt.Errorf("option vocab is set by the tokenizer; choose tokenizer= instead")
		}
		if models.IsOption(name) {
			o.Model[name] = v
			continue
		}
		return fmt.Errorf("unknown training option %q", name)
	}
	return o.Validate()
}

// Validate checks the optimisation options (the model config is checked when it is built).
func (o Options) Validate() error {
	positive := []struct {
		name  string
		value int
	}{{"steps", o.Steps}, {"batch", o.Batch}, {"accum", o.Accum}, {"keep", o.Keep}, {"devices", o.Devices}}
	for _, p := range positive {
		if p.value < 1 {
			return fmt.Errorf("option %s=%d must be at least 1", p.name, p.value)
		}
	}
	nonNegative := []struct {
		name  string
		value int
	}{{"warmup", o.Warmup}, {"eval_every", o.EvalEvery}, {"eval_batches", o.EvalBatches}, {"halve_every", o.HalveEvery},
		{"examples", o.Examples}, {"distance", o.Distance}}
	for _, p := range nonNegative {
		if p.value < 0 {
			return fmt.Errorf("option %s=%d must not be negative", p.name, p.value)
		}
	}
	if o.LR <= 0 {
		return fmt.Errorf("option lr=%g must be positive", o.LR)
	}
	if o.WeightDecay < 0 || o.Clip < 0 {
		return fmt.Errorf("options wd=%g and clip=%g must not be negative", o.WeightDecay, o.Clip)
	}
	if o.Devices > 1 && o.Accum > 1 {
		return fmt.Errorf("devices=%d with accum=%d: GoMLX's data-parallel step cannot accumulate gradients; use batch=%d accum=1 instead", o.Devices, o.Accum, o.Batch*o.Accum)
	}
	if o.Batch%o.Devices != 0 {
		return fmt.Errorf("option batch=%d must be a multiple of devices=%d (each device gets an equal share)", o.Batch, o.Devices)
	}
	if !slices.Contains(Schedules, o.Schedule) {
		return fmt.Errorf("option schedule=%q must be one of: %s", o.Schedule, strings.Join(Schedules, ", "))
	}
	return nil
}

func strOpt(name, help string, values []string, field func(*Options) *string) OptionInfo {
	return OptionInfo{Name: name, Help: help, Values: values, set: func(o *Options, v string) error {
		if values != nil && !slices.Contains(values, v) {
			return fmt.Errorf("option %s=%q must be one of: %s", name, v, strings.Join(values, ", "))
		}
		*field(o) = v
		return nil
	}}
}

func intOpt(name, help string, field func(*Options) *int) OptionInfo {
	return OptionInfo{Name: name, Help: help, set: func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("option %s=%q must be an integer", name, v)
		}
		*field(o) = n
		return nil
	}}
}

func int64Opt(name, help string, field func(*Options) *int64) OptionInfo {
	return OptionInfo{Name: name, Help: help, set: func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("option %s=%q must be an integer", name, v)
		}
		*field(o) = n
		return nil
	}}
}

func floatOpt(name, help string, field func(*Options) *float64) OptionInfo {
	return OptionInfo{Name: name, Help: help, set: func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("option %s=%q must be a number", name, v)
		}
		*field(o) = f
		return nil
	}}
}
