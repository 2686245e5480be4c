package repl

import (
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/bench"
	"github.com/ecpi-dev/ecpi/models"
)

func init() {
	Register(&Command{
		Name:    "models",
		Summary: "list the model families, their options and defaults",
		Args:    "[FAMILY]",
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
full attention at least 10x; at n=4096 ECP takes at most 0.25x of full.`,
		Options: []Option{
			{Name: "variants", Default: "full,local,s2,ecp,pi", Help: "comma-separated model families", Values: func(*Session) []string { return models.FamilyNames() }},
			{Name: "n", Default: "1024,2048,4096", Help: "comma-separated sequence lengths"},
			{Name: "batch", Default: "2", Help: "batch size"},
			{Name: "heads", Default: "4", Help: "attention heads"},
			{Name: "head_dim", Default: "32", Help: "width of each head"},
			{Name: "window", Default: "256", Help: "local/π window k and ECP half-segment h (S2 groups: 2k)"},
			{Name: "runs", Default: "5", Help: "timed runs per measurement (median reported)"},
			BackendOption,
		},
		Run: runBenchAttention,
	})
}

// modelOptions declares every model option (so session settings flow in).
func modelOptions() []Option {
	var opts []Option
	for _, name := range models.AllOptionNames() {
		info, _ := models.Option(name)
		values := info.Values
		opts = append(opts, Option{Name: name, Default: info.Default, Help: info.Help, Values: func(*Session) []string { return values }})
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
	if _, ok := values["model"]; !ok {
		values["model"] = "ecp"
	}
	// Session settings may hold options of another family set earlier; keep
	// only those the chosen family reads, but reject typed ones that don't apply.
	family := values["model"]
	for name := range values {
		if !models.Reads(family, name) {
			if _, typed := c.given[name]; typed {
				continue // ParseConfig names the rule
			}
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
		for _, o := range models.OptionsFor(f.Name) {
			opts = append(opts, o.Name+"="+o.Default)
		}
		fmt.Fprintf(&b, "             %s\n", strings.Join(opts, " "))
	}
	b.WriteString("\nloss on latents only: perceiverar, double, compressed, ssplit; all positions otherwise.\n`ecpi models FAMILY` explains each option.")
	return b.String()
}

type familyDetail struct {
	models.Family
	Options []familyOption `json:"options"`
}

type familyOption struct {
	Name    string   `json:"name"`
	Default string   `json:"default"`
	Help    string   `json:"help"`
	Values  []string `json:"values,omitempty"`
}

func (d familyDetail) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s (%s)\n\noptions:\n", d.Name, d.Summary, d.Paper)
	for _, o := range d.Options {
		fmt.Fprintf(&b, "  %-22s %s\n", o.Name+"="+o.Default, o.Help)
	}
	return b.String()
}

func runModels(c *Call) error {
	if len(c.Args) == 0 {
		return c.Emit(familyList(models.Families()))
	}
	f, ok := models.FamilyByName(c.Args[0])
	if !ok {
		msg := fmt.Sprintf("unknown model %q", c.Args[0])
		if near := Nearest(c.Args[0], models.FamilyNames()); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return Usagef("%s; families: %s", msg, strings.Join(models.FamilyNames(), ", "))
	}
	detail := familyDetail{Family: f}
	for _, o := range models.OptionsFor(f.Name) {
		detail.Options = append(detail.Options, familyOption{Name: o.Name, Default: o.Default, Help: o.Help, Values: o.Values})
	}
	return c.Emit(detail)
}

type costReport models.Cost

func (r costReport) Text() string {
	return fmt.Sprintf(`%s at n=%d (%d heads of %d, %d layers)
  scored pairs per head   %12d of %12d dense  ratio %.4f
  pairs inside K(i)       %12d of %12d causal ratio %.4f
  attention FLOPs, layer 0 %11d   all layers %d (dense: %d)`,
		r.Model, r.N, r.Heads, r.HeadDim, r.Layers, r.Pairs, r.DensePairs, r.Ratio,
		r.CausalPairs, r.CausalDensePairs, r.CausalRatio, r.AttentionFLOPs, r.ModelFLOPs, r.DenseModelFLOPs)
}

func runCost(c *Call) error {
	cfg, err := c.ModelConfig()
	if err != nil {
		return err
	}
	return c.Emit(costReport(models.CostOf(cfg)))
}

func runBenchAttention(c *Call) error {
	variants := c.Strings("variants")
	if err := bench.ParseVariants(variants); err != nil {
		return Usagef("%v", err)
	}
	lengths, err := c.Ints("n")
	if err != nil {
		return err
	}
	opts := bench.AttentionOptions{Variants: variants, Lengths: lengths}
	for name, target := range map[string]*int{"batch": &opts.Batch, "heads": &opts.Heads, "head_dim": &opts.HeadDim, "window": &opts.Window, "runs": &opts.Runs} {
		if *target, err = c.Int(name); err != nil {
			return err
		}
		if *target < 1 {
			return Usagef("option %s=%d must be at least 1", name, *target)
		}
	}
	for _, n := range lengths {
		for _, v := range variants {
			if _, err := opts.PatternConfig(v, n); err != nil {
				return Usagef("%v", err)
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
	err = bench.Attention(c.Ctx, opts, choice.Name, func(r bench.AttentionResult) error {
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
