package models

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Config describes one model: the family (the attention variant and the
// architecture around it), its size and the variant's own options. The zero
// value of a derived option (group, skips, skip_period, latents, compress)
// means "derive it from the others", as Resolve documents.
type Config struct {
	Model   string  // family: see Families
	Vocab   int     // tokens; set from the tokenizer by train
	SeqLen  int     // n
	Dim     int     // d
	Heads   int     // H
	Layers  int     // L
	FFMult  int     // feed-forward width = FFMult·d
	Dropout float64 // after attention, FF and embeddings while training
	Theta   float64 // RoPE base

	Window        int    // k (local, pi)
	Segment       int    // h, ECP's half-segment
	Group         int    // G (s2); 0: n/4
	SkipPeriod    int    // π (pi); 0: 2k
	Skips         int    // M (pi); 0: min(k, enough to reach position 0)
	HeadPhase     bool   // pi: per-head phase of the skip lattice
	Fusion        string // pi: prior | mix
	Gate          bool   // pi: learned α; false fixes α = 1/2
	Latents       int    // l (perceiver family); 0: n/2
	Compress      int    // c (compressed); 0: n/4
	Splits        int    // s (ssplit)
	CausalContext bool   // double, compressed, ssplit: context queries causal too
	Causal        bool   // classifier: false lets full, local and pi attend both ways
}

// Family is one model family as listed by `ecpi models`.
type Family struct {
	Name    string
	Summary string
	Paper   string
	// Options are the names of the variant-specific options the family reads,
	// besides the common ones.
	Options []string
	// LatentLoss is true when the loss is on the latent positions only.
	LatentLoss bool
}

var families = []Family{
	{Name: "full", Summary: "dense causal attention (Transformer baseline)", Paper: "both"},
	{Name: "local", Summary: "sliding-window attention, the π paper's \"RingAttention\"", Paper: "π-Attention", Options: []string{"window"}},
	{Name: "s2", Summary: "LongLoRA shifted sparse attention (groups of G, half the heads shifted by G/2)", Paper: "LongLoRA", Options: []string{"group"}},
	{Name: "ecp", Summary: "Efficient Context Propagating Perceiver: paired half-segments, history refined every layer", Paper: "ECP", Options: []string{"segment"}},
	{Name: "pi", Summary: "π-Attention: ring-local window + π-stride skips + learned fusion gate", Paper: "π-Attention", Options: []string{"window", "skip_period", "skips", "head_phase", "fusion", "gate"}},
	{Name: "perceiverar", Summary: "PerceiverAR: latents cross-attend to the history once, then self-attend", Paper: "ECP (baseline)", Options: []string{"latents"}, LatentLoss: true},
	{Name: "double", Summary: "Double Attention PerceiverAR: all tokens every layer, context bidirectional", Paper: "ECP (intermediate)", Options: []string{"latents", "causal_context"}, LatentLoss: true},
	{Name: "compressed", Summary: "Compressed Double Attention: context compressed C -> c after layer 0", Paper: "ECP (intermediate)", Options: []string{"latents", "compress", "causal_context"}, LatentLoss: true},
	{Name: "ssplit", Summary: "s-Split Double Attention: context cut into s blocks", Paper: "ECP (intermediate)", Options: []string{"latents", "splits", "causal_context"}, LatentLoss: true},
}

// Families lists the model families.
func Families() []Family { return slices.Clone(families) }

// FamilyByName finds a family.
func FamilyByName(name string) (Family, bool) {
	for _, f := range families {
		if f.Name == name {
			return f, true
		}
	}
	return Family{}, false
}

// FamilyNames lists the family names in order.
func FamilyNames() []string {
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = f.Name
	}
	return names
}

// DefaultConfig is a model that trains on a laptop CPU in minutes.
func DefaultConfig(model string) Config {
	return Config{
		Model: model, Vocab: 256, SeqLen: 512, Dim: 128, Heads: 4, Layers: 4, FFMult: 4,
		Dropout: 0.05, Theta: 10000,
		Window: 64, Segment: 64, Splits: 4, Fusion: FusionPrior, Gate: true, Causal: true,
	}
}

// OptionInfo documents one config option for `ecpi models` and REPL completion.
type OptionInfo struct {
	Name    string
	Default string
	Help    string
	Values  []string // closed set of values, if any
	set     func(c *Config, value string) error
	get     func(c Config) string
}

var commonOptions = []string{"model", "vocab", "n", "dim", "heads", "layers", "ff_mult", "dropout", "theta"}

var options = []OptionInfo{
	stringOption("model", "model family", FamilyNames(), func(c *Config) *string { return &c.Model }),
	intOption("vocab", "vocabulary size (set from the tokenizer when training)", func(c *Config) *int { return &c.Vocab }),
	intOption("n", "sequence length n", func(c *Config) *int { return &c.SeqLen }),
	intOption("dim", "model width d", func(c *Config) *int { return &c.Dim }),
	intOption("heads", "attention heads H (d must divide by H)", func(c *Config) *int { return &c.Heads }),
	intOption("layers", "layers L", func(c *Config) *int { return &c.Layers }),
	intOption("ff_mult", "feed-forward width as a multiple of d", func(c *Config) *int { return &c.FFMult }),
	floatOption("dropout", "dropout rate while training", func(c *Config) *float64 { return &c.Dropout }),
	floatOption("theta", "RoPE base frequency", func(c *Config) *float64 { return &c.Theta }),
	intOption("window", "local window k: i-k <= j <= i", func(c *Config) *int { return &c.Window }),
	intOption("segment", "ECP half-segment h (must divide n)", func(c *Config) *int { return &c.Segment }),
	intOption("group", "S2 group size G (must divide n; 0 = n/4)", func(c *Config) *int { return &c.Group }),
	intOption("skip_period", "π-stride of the skips (0 = 2k)", func(c *Config) *int { return &c.SkipPeriod }),
	intOption("skips", "skips M per query (0 = enough to reach position 0, at most k)", func(c *Config) *int { return &c.Skips }),
	boolOption("head_phase", "offset each head's skips by φ_h = h·π/H", func(c *Config) *bool { return &c.HeadPhase }),
	stringOption("fusion", "how α fuses local and skip attention", []string{FusionPrior, FusionMix}, func(c *Config) *string { return &c.Fusion }),
	boolOption("gate", "learn the per-token, per-head gate α (false: α = 1/2)", func(c *Config) *bool { return &c.Gate }),
	intOption("latents", "latent positions l at the end of the sequence (0 = n/2)", func(c *Config) *int { return &c.Latents }),
	intOption("compress", "compressed context length c (0 = n/4)", func(c *Config) *int { return &c.Compress }),
	intOption("splits", "context blocks s (must divide the context length n-l)", func(c *Config) *int { return &c.Splits }),
	boolOption("causal_context", "context queries attend causally (the authors' code: bidirectional)", func(c *Config) *bool { return &c.CausalContext }),
	boolOption("causal", "classifier only: false lets full, local and pi attend both ways", func(c *Config) *bool { return &c.Causal }),
}

func option(name string) (OptionInfo, bool) {
	for _, o := range options {
		if o.Name == name {
			return o, true
		}
	}
	return OptionInfo{}, false
}

// Option documents a model option by name (its Default is the ECP family's,
// or the first family's that reads it).
func Option(name string) (OptionInfo, bool) {
	for _, family := range append([]string{"ecp"}, FamilyNames()...) {
		for _, o := range OptionsFor(family) {
			if o.Name == name {
				return o, true
			}
		}
	}
	return OptionInfo{}, false
}

// Reads reports whether the family reads the option (ParseConfig rejects the
// options a family does not read).
func Reads(family, name string) bool {
	return slices.ContainsFunc(OptionsFor(family), func(o OptionInfo) bool { return o.Name == name })
}

// OptionsFor lists the options a family reads, with that family's defaults.
func OptionsFor(family string) []OptionInfo {
	f, _ := FamilyByName(family)
	defaults := DefaultConfig(family)
	var out []OptionInfo
	for _, name := range append(slices.Clone(commonOptions), f.Options...) {
		o, _ := option(name)
		o.Default = o.get(defaults)
		out = append(out, o)
	}
	if !f.LatentLoss && family != "s2" && family != "ecp" {
		o, _ := option("causal")
		o.Default = o.get(defaults)
		out = append(out, o)
	}
	return out
}

// AllOptionNames lists every option any family reads.
func AllOptionNames() []string {
	names := make([]string, len(options))
	for i, o := range options {
		names[i] = o.Name
	}
	return names
}

// IsOption reports whether name is a model option of some family.
func IsOption(name string) bool {
	_, ok := option(name)
	return ok
}

// ParseConfig builds a config from key=value options: the family's defaults,
// overridden by values. Options that belong to no family, or to another family
// than the chosen one, are errors; so is any config Validate rejects.
func ParseConfig(values map[string]string) (Config, error) {
	family := values["model"]
	if family == "" {
		family = "ecp"
	}
	f, ok := FamilyByName(family)
	if !ok {
		return Config{}, fmt.Errorf("unknown model %q; choose one of: %s", family, strings.Join(FamilyNames(), ", "))
	}
	cfg := DefaultConfig(family)
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		o, known := option(name)
		if !known {
			return Config{}, fmt.Errorf("unknown model option %q", name)
		}
		if !Reads(f.Name, name) {
			return Config{}, fmt.Errorf("option %s does not apply to model %s (its options: %s)", name, family, strings.Join(optionNames(OptionsFor(family)), ", "))
		}
		if err := o.set(&cfg, values[name]); err != nil {
			return Config{}, err
		}
	}
	return cfg, cfg.Validate()
}

func optionNames(opts []OptionInfo) []string {
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.Name
	}
	return names
}

// Options renders the config as the key=value options that rebuild it
// (the family's options only), e.g. for checkpoints and `status`.
func (c Config) Options() map[string]string {
	out := map[string]string{}
	for _, o := range OptionsFor(c.Model) {
		out[o.Name] = o.get(c)
	}
	return out
}

// String is the config as a key=value line.
func (c Config) String() string {
	var parts []string
	for _, o := range OptionsFor(c.Model) {
		parts = append(parts, o.Name+"="+o.get(c))
	}
	return strings.Join(parts, " ")
}

func intOption(name, help string, field func(*Config) *int) OptionInfo {
	return OptionInfo{Name: name, Help: help,
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("option %s=%q must be an integer", name, v)
			}
			*field(c) = n
			return nil
		},
		get: func(c Config) string { return strconv.Itoa(*field(&c)) },
	}
}

func floatOption(name, help string, field func(*Config) *float64) OptionInfo {
	return OptionInfo{Name: name, Help: help,
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("option %s=%q must be a number", name, v)
			}
			*field(c) = f
			return nil
		},
		get: func(c Config) string { return strconv.FormatFloat(*field(&c), 'g', -1, 64) },
	}
}

func boolOption(name, help string, field func(*Config) *bool) OptionInfo {
	return OptionInfo{Name: name, Help: help, Values: []string{"true", "false"},
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("option %s=%q must be true or false", name, v)
			}
			*field(c) = b
			return nil
		},
		get: func(c Config) string { return strconv.FormatBool(*field(&c)) },
	}
}

func stringOption(name, help string, values []string, field func(*Config) *string) OptionInfo {
	return OptionInfo{Name: name, Help: help, Values: values,
		set: func(c *Config, v string) error {
			if !slices.Contains(values, v) {
				return fmt.Errorf("option %s=%q must be one of: %s", name, v, strings.Join(values, ", "))
			}
			*field(c) = v
			return nil
		},
		get: func(c Config) string { return *field(&c) },
	}
}
