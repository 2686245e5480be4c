package repl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/bench"
	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
)

func init() {
	Register(&Command{
		Name:    "models",
		Summary: "list the model families, their options and defaults; preset=NAME counts a paper's model",
		Args:    "[FAMILY]",
		Details: "preset=NAME builds one of the papers' configurations (without allocating its weights) and prints\n" +
			"its parameter count beside the paper's; preset=all counts every preset. `train preset=NAME` trains it.",
		Options: modelsOptions.Declare(),
		Run:     runModels,
	})
	Register(&Command{
		Name:    "cost",
		Summary: "count the query-key pairs and attention FLOPs a model computes",
		Details: `pairs: scores per head the block form computes in the first layer (padding
slots of its blocks included; for ECP one h x 2h block per half-segment, so
2hn). causal_pairs: only the pairs inside K(i). ratio = pairs / n²,
causal_ratio = causal_pairs / (n(n+1)/2). attention_flops = 4·head_dim·heads·pairs
(q·k and weights·v, multiply-add = 2). layer_pairs and model_attention_flops
cover every layer (PerceiverAR and Compressed change length after layer 0).`,
		Options: modelOptions(),
		Run:     runCost,
	})
	Register(&Command{
		Name:    "bench attention",
		Summary: "time one attention layer's forward+backward per variant and length",
		Details: `Median of runs= timed executions after one warm-up, on random q, k, v of
shape [batch, heads, n, head_dim]; the gradient of every input is computed.
Targets (README): from n=1024 to n=4096 every sparse variant grows at most 5x,
full attention at least 10x; at n=4096 ECP takes at most 0.25x of full.
memory=true measures each (variant, n) in a process of its own and adds that
process's peak resident memory (what the backend allocated, compiled code and
runtime included): how memory grows with n, per variant.`,
		Options: benchAttentionOptions.Declare(),
		Run:     runBenchAttention,
	})
	Register(&Command{
		Name:    "bench devices",
		Summary: "memory per device of one layer's training step with each sequence split across N devices",
		Details: `For every variant, length and device count: one layer's training step compiled with
devices=N parallel=sequence (N = 1: the whole sequence on one device), run once, and the temporary
memory per device that XLA's compiler planned for it (exact: it follows from the compiled program).
The XLA CPU plugin's host devices stand in for accelerators. Then, for dense attention (full) and
π-Attention (pi): π's memory per device on N/2 devices over dense attention's on N, the largest over
the lengths (at most 1: π holds each context on half the devices), and the longest n each holds
within budget= MiB per device.`,
		Options: benchDevicesOptions.Declare(),
		Run:     runBenchDevices,
	})
}

// benchDevicesArgs are the benchmark's options and the budget its summary uses.
type benchDevicesArgs struct {
	bench.DevicesOptions
	Budget float64
}

var benchDevicesOptions = Options[benchDevicesArgs]{
	Table: append(option.Within(bench.DevicesTable, func(a *benchDevicesArgs) *bench.DevicesOptions { return &a.DevicesOptions }),
		option.Float("budget", "MiB per device for the summary's longest context", func(a *benchDevicesArgs) *float64 { return &a.Budget }, option.Positive[float64]())),
	Defaults: benchDevicesArgs{DevicesOptions: bench.DefaultDevices, Budget: 256},
}

func runBenchDevices(c *Call) error {
	args, err := benchDevicesOptions.Read(c)
	if err != nil {
		return err
	}
	var results []bench.DevicesResult
	err = bench.Devices(c.Ctx, args.DevicesOptions, data.Home(), func(r bench.DevicesResult) error {
		results = append(results, r)
		return c.Emit(r)
	})
	if err != nil {
		return err
	}
	if err := c.Emit(bench.Summarize(results, args.Budget)); err != nil {
		return err
	}
	c.Session.Remember("bench devices", results)
	return nil
}

// modelsArgs are the options of `models`.
type modelsArgs struct{ Preset string }

var modelsOptions = Options[modelsArgs]{Table: option.Table[modelsArgs]{
	option.Choice("preset", "a paper's configuration to count, or all", append(models.PresetNames(), "all"), func(a *modelsArgs) *string { return &a.Preset }),
}}

// benchAttentionArgs are the benchmark's own options and the backend.
type benchAttentionArgs struct {
	bench.AttentionOptions
	Backend string
}

var benchAttentionOptions = Options[benchAttentionArgs]{
	Table: append(option.Within(bench.AttentionTable, func(a *benchAttentionArgs) *bench.AttentionOptions { return &a.AttentionOptions }),
		backendField(func(a *benchAttentionArgs) *string { return &a.Backend })),
	Defaults: benchAttentionArgs{AttentionOptions: bench.DefaultAttention},
}

// modelOptions declares every model option (so session settings flow in);
// model= defaults to the default family, as ModelConfig does.
func modelOptions() []Option {
	var opts []Option
	for _, opt := range models.AllOptions() {
		if opt.Name == "model" {
			opt.Default = models.DefaultFamily()
		}
		opts = append(opts, opt)
	}
	return opts
}

// ModelConfig builds the model config from the call's model options: typed or
// session values only, so each family's own defaults apply to the rest.
func (c *Call) ModelConfig() (models.Config, error) {
	values := map[string]string{}
	for _, name := range models.AllOptionNames() {
		if c.Has(name) {
			values[name] = c.String(name)
		}
	}
	family, ok := models.FamilyByName(cmp.Or(values["model"], models.DefaultFamily()))
	if !ok {
		return models.Config{}, Usagef("unknown model %q; choose one of: %s", values["model"], strings.Join(models.FamilyNames(), ", "))
	}
	// Session settings may hold options of another family set earlier; keep
	// only those the chosen family reads, but reject typed ones that don't apply.
	for name := range values {
		if _, typed := c.given[name]; !typed && !family.Reads(name) {
			delete(values, name)
		}
	}
	cfg, err := models.ParseConfig(values)
	if err != nil {
		return cfg, Usagef("%v", err)
	}
	return cfg, nil
}

type familyList []models.Family

func (l familyList) Text() string {
	var b strings.Builder
	for _, f := range l {
		fmt.Fprintf(&b, "%-12s %s [%s]\n", f.Name, f.Summary, f.Paper)
		var opts []string
		for _, o := range f.Options() {
			if o.Default != "" { // preset=, unset unless given
				opts = append(opts, o.Name+"="+o.Default)
			}
		}
		fmt.Fprintf(&b, "             %s\n", strings.Join(opts, " "))
	}
	b.WriteString("\n`ecpi models FAMILY` explains each option and which positions carry the loss; `ecpi models preset=all`\n" +
		"counts the papers' own configurations (" + strings.Join(models.PresetNames(), ", ") + ").")
	return b.String()
}

type familyDetail struct {
	models.Family
	Options       []familyOption `json:"options"`
	LossPositions string         `json:"loss_positions"`
}

type familyOption = option.Info

func (d familyDetail) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s (%s)\n\noptions:\n", d.Name, d.Summary, d.Paper)
	for _, o := range d.Options {
		fmt.Fprintf(&b, "  %-22s %s\n", o.Name+"="+o.Default, o.Described())
	}
	fmt.Fprintf(&b, "\nloss on %s", d.LossPositions)
	return b.String()
}

func runModels(c *Call) error {
	args, err := modelsOptions.Read(c)
	if err != nil {
		return err
	}
	if preset := args.Preset; preset != "" {
		if len(c.Args) > 0 {
			return Usagef("models takes a FAMILY or preset=, not both")
		}
		names := []string{preset}
		if preset == "all" {
			names = models.PresetNames()
		}
		for _, name := range names {
			r, err := train.CountPreset(name)
			if err != nil {
				return err
			}
			if err := c.Emit(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(c.Args) == 0 {
		return c.Emit(familyList(models.Families()))
	}
	if len(c.Args) > 1 {
		return Usagef("models takes one FAMILY (got %s)", strings.Join(c.Args, " "))
	}
	f, ok := models.FamilyByName(c.Args[0])
	if !ok {
		msg := fmt.Sprintf("unknown model %q", c.Args[0])
		if near := Nearest(c.Args[0], models.FamilyNames()); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return Usagef("%s; families: %s", msg, strings.Join(models.FamilyNames(), ", "))
	}
	detail := familyDetail{Family: f, Options: f.Options(), LossPositions: "every position"}
	if cfg := models.DefaultConfig(f.Name).Resolved(); cfg.LossStart() > 0 {
		detail.LossPositions = fmt.Sprintf("the latent positions only (%d..%d at the defaults)", cfg.LossStart(), cfg.SeqLen-1)
	}
	return c.Emit(detail)
}

type costReport models.Cost

func (r costReport) Text() string {
	return fmt.Sprintf(`%s at n=%d (%d heads of %d, %d layers)
  scored pairs per head   %12d of %12d dense  ratio %.4f
  pairs inside K(i)       %12d of %12d causal ratio %.4f
  attention FLOPs, layer 0 %11s   all layers %s (dense: %s)`,
		r.Model, r.N, r.Heads, r.HeadDim, r.Layers, r.Pairs, r.DensePairs, r.Ratio,
		r.CausalPairs, r.CausalDensePairs, r.CausalRatio, flops(r.AttentionFLOPs), flops(r.ModelFLOPs), flops(r.DenseModelFLOPs))
}

// flops writes a FLOP count whole while float64 holds it exactly (below
// 2^53), then with six significant digits.
func flops(x float64) string {
	if x < 1<<53 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

func runCost(c *Call) error {
	cfg, err := c.ModelConfig()
	if err != nil {
		return err
	}
	return c.Emit(costReport(models.CostOf(cfg)))
}

func runBenchAttention(c *Call) error {
	args, err := benchAttentionOptions.Read(c)
	if err != nil {
		return err
	}
	plan, err := bench.PlanAttention(args.AttentionOptions, func(cfg models.Config, batch int) error {
		return train.CheckMemory(cfg, batch, true)
	})
	if optionErr := (*bench.OptionError)(nil); errors.As(err, &optionErr) {
		return Usagef("%v", err)
	} else if err != nil {
		return err
	}
	choice, err := train.Backend(args.Backend)
	if err != nil {
		return err
	}
	args.AttentionOptions.Backend = choice.Backend
	c.Printf("backend %s (%s)\n", choice.Name, choice.Reason)
	var results []bench.AttentionResult
	err = bench.Sweep(c.Ctx, args.AttentionOptions, plan, choice.Name, benchChild(args.AttentionOptions, choice.Name),
		func(r bench.AttentionResult) error {
			results = append(results, r)
			return c.Emit(r)
		})
	if err != nil {
		return err
	}
	for _, line := range bench.GrowthSummary(results) {
		c.Printf("%s\n", line)
	}
	c.Session.Remember("bench attention", results)
	return nil
}

// benchChild is the command that measures one cell of `bench attention`
// memory=true: this binary, the same options, one variant and length.
func benchChild(o bench.AttentionOptions, backend string) func(ctx context.Context, cell bench.Cell) *exec.Cmd {
	return func(ctx context.Context, cell bench.Cell) *exec.Cmd {
		self, _ := os.Executable()
		args := append([]string{"bench", "attention", "backend=" + backend, "--json"}, bench.CellOptions(o, cell)...)
		return exec.CommandContext(ctx, self, args...)
	}
}
