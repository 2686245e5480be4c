package train

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/compute/dtypes"
)

// Options is one training run: the model (its vocabulary comes from the
// tokenizer, its n from the data when left at 0), the data and the
// optimisation. DefaultOptions gives the values the commands document.
type Options struct {
	Model     models.Config `json:"model"`
	Data      string        `json:"data"`             // corpus (LM), classification or retrieval set name
	Tokenizer string        `json:"tokenizer"`        // byte | gpt2 (LM and passkey) | wordpiece (LM: the corpus's own)
	Examples  int           `json:"examples"`         // generated sets: training examples (0: the set's default)
	Distance  int           `json:"distance"`         // passkey, assoc: tokens from the fact to the answer (0: n/2)
	Spread    int           `json:"spread,omitempty"` // assoc: the distance varies by ± this much per example (omitted when 0: run cache keys stay)
	Pool      int           `json:"pool,omitempty"`   // image sets and shapes: average over Pool×Pool squares first (0: none)
	Home      string        `json:"-"`                // $ECPI_HOME: data, runs

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
	Protocol    string `json:"protocol"`     // how a language model is scored: ProtocolECPI or ProtocolAuthors
	Seed        int64  `json:"seed"`
	RunDir      string `json:"run"`     // run folder; "" = $ECPI_HOME/runs/<model>-<data>-<timestamp>
	Keep        int    `json:"keep"`    // checkpoints kept
	Backend     string `json:"backend"` // "" = automatic (xla.Choose)
	Devices     int    `json:"devices"` // devices each batch is split across (XLA backends)
	// Parallel is what devices > 1 split: data (the batch) or sequence (each
	// sequence's positions).
	Parallel string `json:"parallel,omitempty"`
	// Precision is float32, or bf16: activations and matrix products in
	// bfloat16 over float32 master weights (models.Model.Compute).
	Precision string `json:"precision,omitempty"`
	// Fused is which attention may run as the backend's fused op
	// (models.Fused; "" is dense, and keeps run cache keys as they were).
	Fused string `json:"fused,omitempty"`
	Reuse bool   `json:"reuse"` // the run cache: reuse a finished run of the same options and seed (cache.go)
}

// Schedules names the learning-rate schedules.
var Schedules = []string{"cosine", "step", "constant"}

// Parallelisms are the values of parallel=.
var Parallelisms = []string{"data", "sequence"}

// Precisions are the values of precision=.
var Precisions = []string{"float32", "bf16"}

// computeType is the dtype precision= gives a model's activations.
func computeType(precision string) dtypes.DType {
	if precision == "bf16" {
		return dtypes.BFloat16
	}
	return dtypes.Float32
}

// DefaultOptions trains the default model on foldoc for a few minutes on a laptop CPU.
func DefaultOptions() Options {
	return Options{
		Model: models.DefaultConfig(models.DefaultFamily()), Data: "foldoc", Tokenizer: "byte", Home: data.Home(),
		Steps: 200, Batch: 8, Accum: 1, LR: 3e-4, Beta1: 0.9, Beta2: 0.95, WeightDecay: 0.1, Clip: 1.0,
		Warmup: 20, Schedule: "cosine", EvalEvery: 100, EvalBatches: 8, Protocol: ProtocolECPI, Seed: 1, Keep: 3, Devices: 1, Parallel: "data", Precision: "float32",
	}
}

// optionTable is every training option: one declaration serves parsing,
// validation, help and completion.
var optionTable = option.Table[Options]{
	option.Text("data", "corpus (LM), classification or retrieval set; see `ecpi train --help`", func(o *Options) *string { return &o.Data }, option.NotEmpty()),
	option.Choice("tokenizer", "tokenizer of text data", data.TokenizerNames, func(o *Options) *string { return &o.Tokenizer }),
	option.Int("examples", "training examples of a generated set, valid and test a tenth each (0: 10000)", func(o *Options) *int { return &o.Examples }, option.AtLeast(0)),
	option.Int("distance", "tokens between the fact and the end of the prompt (0: n/2)", func(o *Options) *int { return &o.Distance }, option.AtLeast(0)),
	option.Int("spread", "the queried pair's distance varies per example by up to ± this many tokens, so its position alone does not give the answer (0: fixed)", func(o *Options) *int { return &o.Spread }, option.AtLeast(0)),
	option.Int("pool", "average pixels over pool×pool squares first (2: 28×28 → 14×14, 196 steps; 0: none)", func(o *Options) *int { return &o.Pool }, option.AtLeast(0)),
	option.Int("steps", "optimizer steps (resume: the total to reach)", func(o *Options) *int { return &o.Steps }, option.AtLeast(1)),
	option.Int("batch", "sequences per micro-batch", func(o *Options) *int { return &o.Batch }, option.AtLeast(1)),
	option.Int("accum", "micro-batches accumulated per optimizer step", func(o *Options) *int { return &o.Accum }, option.AtLeast(1)),
	option.Float("lr", "peak learning rate (ECP paper: 2e-4)", func(o *Options) *float64 { return &o.LR }, option.Positive[float64]()),
	option.Float("wd", "AdamW weight decay, on weight matrices only", func(o *Options) *float64 { return &o.WeightDecay }, option.AtLeast(0.0)),
	option.Float("clip", "clip the global gradient norm to this (0: off)", func(o *Options) *float64 { return &o.Clip }, option.AtLeast(0.0)),
	option.Int("warmup", "linear warm-up steps", func(o *Options) *int { return &o.Warmup }, option.AtLeast(0)),
	option.Choice("schedule", "learning-rate schedule after warm-up", Schedules, func(o *Options) *string { return &o.Schedule }),
	option.Int("halve_every", "schedule=step: halve the rate every this many steps (0: steps/4)", func(o *Options) *int { return &o.HalveEvery }, option.AtLeast(0)),
	option.Int("eval_every", "evaluate and checkpoint every this many steps (0: at the end)", func(o *Options) *int { return &o.EvalEvery }, option.AtLeast(0)),
	option.Int("eval_batches", "validation batches per evaluation (0: the whole split)", func(o *Options) *int { return &o.EvalBatches }, option.AtLeast(0)),
	option.Choice("protocol", "language models: ecpi scores every target once; authors as the ECP paper (window means at stride n/2; bytes: 1000 random batches)", Protocols, func(o *Options) *string { return &o.Protocol }),
	option.Int64("seed", "seed of initialisation, dropout and batch order", func(o *Options) *int64 { return &o.Seed }),
	option.Text("run", "run folder (default $ECPI_HOME/runs/<model>-<data>-<time>)", func(o *Options) *string { return &o.RunDir }),
	option.Int("keep", "checkpoints kept in the run folder", func(o *Options) *int { return &o.Keep }, option.AtLeast(1)),
	option.Text("backend", "compute backend: go, xla, xla:cpu, ... (default: automatic)", func(o *Options) *string { return &o.Backend }),
	option.Int("devices", "split every batch across this many devices of an XLA backend (batch must divide; no accum)", func(o *Options) *int { return &o.Devices }, option.AtLeast(1)),
	option.Choice("parallel", "with devices > 1: data splits the batch across the devices, sequence each sequence's positions (n must divide)", Parallelisms, func(o *Options) *string { return &o.Parallel }),
	option.Choice("precision", "bf16: activations and matrix products in bfloat16, weights, optimizer state, layer norms, softmax and loss in float32; checkpoints stay float32", Precisions, func(o *Options) *string { return &o.Precision }),
	option.OptionalChoice("fused", "which attention may run as the backend's fused op, cuDNN's flash attention (CUDA, precision=bf16, dropout=0 only): dense attention (unset), masked (also local, longformer, ecp under their n×n mask), off", models.FusedModes, func(o *Options) *string { return &o.Fused }),
	option.Bool("reuse", "keep the run in the run cache and reuse a finished run of the same options and seed instead of training again", func(o *Options) *bool { return &o.Reuse }),
}

// OptionInfos lists the training options with their defaults; a data
// option's help ends with the data that read it, from the registry.
func OptionInfos() []option.Info {
	infos := optionTable.Infos(DefaultOptions())
	for i, info := range infos {
		if _, ok := dataOptions[info.Name]; ok {
			infos[i].Help += "; data " + strings.Join(dataReading(info.Name), ", ")
		}
	}
	return infos
}

// IsOption reports whether name is a training option.
func IsOption(name string) bool {
	_, ok := optionTable.Lookup(name)
	return ok
}

// ParseOptions builds Options from key=value pairs: training options by the
// table above, model options (every name models.IsOption accepts) into the
// model config. Unknown names and values that break a rule are errors.
func ParseOptions(values map[string]string) (Options, error) {
	o := DefaultOptions()
	modelValues := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		switch {
		case IsOption(name):
			if err := optionTable.Set(&o, name, values[name]); err != nil {
				return o, err
			}
		case name == "vocab":
			return o, fmt.Errorf("option vocab is set by the tokenizer; choose tokenizer= instead")
		case models.IsOption(name):
			modelValues[name] = values[name]
		default:
			return o, fmt.Errorf("unknown training option %q", name)
		}
	}
	var err error
	if o.Model, err = models.Parse(modelValues); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// Validate checks the rules between training options (each option's own rule
// is checked when it is set; the model config when the data has set n).
func (o Options) Validate() error {
	for _, f := range optionTable {
		if err := f.Check(f.Get(o)); err != nil {
			return err
		}
	}
	if o.Devices > 1 && o.Accum > 1 {
		return fmt.Errorf("devices=%d with accum=%d: GoMLX's data-parallel step cannot accumulate gradients; use batch=%d accum=1 instead", o.Devices, o.Accum, o.Batch*o.Accum)
	}
	if o.Parallel == "sequence" && o.Devices == 1 {
		return errors.New("option parallel=sequence splits each sequence across devices: give devices= above 1")
	}
	if o.Parallel != "sequence" && o.Batch%o.Devices != 0 {
		return fmt.Errorf("option batch=%d must be a multiple of devices=%d (each device gets an equal share)", o.Batch, o.Devices)
	}
	return nil
}

// Get reads one training option's value as text.
func (o Options) Get(name string) string { return optionTable.Get(o, name) }
