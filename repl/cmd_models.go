package repl

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/bench"
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
		Options: []Option{ChoiceOption("preset", "", "a paper's configuration to count, or all", append(models.PresetNames(), "all")...)},
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
		Options: []Option{
			ListOption("variants", strings.Join(models.BenchmarkFamilies(), ","), "comma-separated model families", models.FamilyNames),
			IntsOption("n", "1024,2048,4096", "comma-separated sequence lengths", option.AtLeast(1)),
			IntOption("batch", "2", "batch size", option.AtLeast(1)),
			IntOption("heads", "4", "attention heads", option.AtLeast(1)),
			IntOption("head_dim", "32", "width of each head (even: RoPE)", option.AtLeast(2)),
			IntOption("window", "256", "each family's window: local/π window k, ECP half-segment h, S2 groups 2k, ...", option.AtLeast(1)),
			IntOption("runs", "5", "timed runs per measurement (median reported)", option.AtLeast(1)),
			ChoiceOption("memory", "false", "true: each measurement in its own process, with its peak resident memory", "false", "true"),
			BackendOption,
		},
		Run: runBenchAttention,
	})
}

// modelOptions declares every model option (so session settings flow in);
// model= defaults to the default family, as ModelConfig does.
func modelOptions() []Option {
	var opts []Option
	for _, info := range models.AllOptions() {
		opt := fromInfo(info)
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
		help := o.Help
		if len(o.Aliases) > 0 {
			help += " (also: " + strings.Join(o.Aliases, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %-22s %s\n", o.Name+"="+o.Default, help)
	}
	fmt.Fprintf(&b, "\nloss on %s", d.LossPositions)
	return b.String()
}

func runModels(c *Call) error {
	if preset := c.String("preset"); preset != "" {
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
	r := c.Read()
	opts := bench.AttentionOptions{Variants: c.Strings("variants"), Lengths: r.Ints("n"), Batch: r.Int("batch"),
		Heads: r.Int("heads"), HeadDim: r.Int("head_dim"), Window: r.Int("window"), Runs: r.Int("runs")}
	if err := r.Err(); err != nil {
		return err
	}
	lengths, variants := opts.Lengths, opts.Variants
	memorySweep := c.String("memory") == "true"
	tooLarge := map[bench.Cell]string{} // what the machine cannot hold -> why
	var cells []bench.Cell
	for _, n := range lengths {
		for _, v := range variants {
			cells = append(cells, bench.Cell{Variant: v, N: n})
			cfg, err := opts.PatternConfig(v, n)
			if err != nil {
				return Usagef("%v", err)
			}
			cfg.Layers, cfg.Vocab = 1, 1 // one attention layer, no vocabulary
			if err := train.CheckMemory(cfg, opts.Batch, true); err != nil {
				// A memory sweep looks for where each variant stops fitting: it reports that and goes on.
				if !memorySweep {
					return fmt.Errorf("%s at n=%d: %w", v, n, err)
				}
				tooLarge[bench.Cell{Variant: v, N: n}] = err.Error()
			}
		}
	}
	choice, err := c.OpenBackend()
	if err != nil {
		return err
	}
	opts.Backend = choice.Backend
	c.Printf("backend %s (%s)\n", choice.Name, choice.Reason)
	var results []bench.AttentionResult
	emit := func(r bench.AttentionResult) error {
		results = append(results, r)
		return c.Emit(r)
	}
	if os.Getenv(bench.PeakEnv) == "1" { // a child of bench.MeasureApart: this process's peak goes with its result
		record := emit
		emit = func(r bench.AttentionResult) error {
			r.PeakMB = bench.ProcessPeakMB()
			return record(r)
		}
	}
	if memorySweep {
		err = bench.MeasureApart(c.Ctx, cells, tooLarge, benchChild(c, choice.Name), emit)
	} else {
		err = bench.Attention(c.Ctx, opts, choice.Name, emit)
	}
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
func benchChild(c *Call, backend string) func(ctx context.Context, cell bench.Cell) *exec.Cmd {
	return func(ctx context.Context, cell bench.Cell) *exec.Cmd {
		self, _ := os.Executable()
		args := []string{"bench", "attention", "variants=" + cell.Variant, fmt.Sprintf("n=%d", cell.N), "backend=" + backend}
		for _, name := range []string{"batch", "heads", "head_dim", "window", "runs"} {
			args = append(args, name+"="+c.String(name))
		}
		return exec.CommandContext(ctx, self, append(args, "--json")...)
	}
}
