package models

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/option"
)

// Config describes one model: the family, the sizes every family shares, and
// the family's own options (held inside, typed as the family's Spec declares;
// set them by name with ParseConfig or With).
type Config struct {
	Model   string  // family: see Families
	Vocab   int     // tokens; set from the tokenizer by train
	SeqLen  int     // n; 0: the data's own length (DefaultSeqLen for text and for models without data)
	Dim     int     // d
	Heads   int     // H
	Layers  int     // L
	FFMult  int     // feed-forward width = FFMult·d
	Dropout float64 // on attention weights and on the feed-forward hidden layer, while training
	Theta   float64 // RoPE base
	Causal  bool    // false lets a bidirectional family attend both ways (classification)
	Tied    bool    // the output layer is the token embedding's transpose (GPT-2's tied weights)
	Preset  string  // the Preset the config started from ("": none)

	own any // the family's own options: a value of its Spec's O
}

// DefaultSeqLen is n when neither the user nor the data sets it.
const DefaultSeqLen = 512

// MaxSeqLen bounds n: positions are int32 in the graphs, and every pair count
// of every family (up to a few n² per head) stays well inside int64.
const MaxSeqLen = 1 << 30

// DefaultFamily is the family commands use when none is named.
func DefaultFamily() string {
	for _, f := range registry {
		if f.isDefault {
			return f.Name
		}
	}
	return registry[0].Name
}

// DefaultConfig is a model of the family that trains on a laptop CPU in minutes.
func DefaultConfig(family string) Config {
	c := Config{Model: family, Vocab: 256, Dim: 128, Heads: 4, Layers: 4, FFMult: 4, Dropout: 0.05, Theta: 10000, Causal: true}
	if f, ok := FamilyByName(family); ok {
		c.own = f.own.defaults
	}
	return c
}

// OptionInfo documents one model option for `ecpi models`, help and completion.
type OptionInfo = option.Info

// commonOptions are the options every family reads (causal: only the
// bidirectional ones). model's values are checked by ParseConfig, which knows
// the registry; the table is built before any family registers.
var commonOptions = option.Table[Config]{
	option.Text("model", "model family (`ecpi models` lists them)", func(c *Config) *string { return &c.Model }, option.NotEmpty()),
	option.Int("vocab", "vocabulary size (set from the tokenizer when training)", func(c *Config) *int { return &c.Vocab }, option.AtLeast(1)),
	option.Int("n", fmt.Sprintf("sequence length n (0: the data's own length; %d for text)", DefaultSeqLen), func(c *Config) *int { return &c.SeqLen }, option.AtLeast(0), option.AtMost(MaxSeqLen)),
	option.Int("dim", "model width d", func(c *Config) *int { return &c.Dim }, option.AtLeast(1)),
	option.Int("heads", "attention heads H (d must divide by H)", func(c *Config) *int { return &c.Heads }, option.AtLeast(1)),
	option.Int("layers", "layers L", func(c *Config) *int { return &c.Layers }, option.AtLeast(1)),
	option.Int("ff_mult", "feed-forward width as a multiple of d", func(c *Config) *int { return &c.FFMult }, option.AtLeast(1)),
	option.Float("dropout", "dropout rate on attention weights and the feed-forward hidden layer, while training", func(c *Config) *float64 { return &c.Dropout }, option.Fraction()),
	option.Float("theta", "RoPE base frequency", func(c *Config) *float64 { return &c.Theta }, option.Positive[float64]()),
	option.Bool("causal", "false lets the model attend both ways (classification only)", func(c *Config) *bool { return &c.Causal }),
	option.Bool("tied", "the output layer reuses the token embedding, transposed (GPT-2's tied weights)", func(c *Config) *bool { return &c.Tied }),
	option.OptionalChoice("preset", "a paper's configuration (`ecpi models preset=NAME` counts it); options typed beside it override its own", PresetNames(), func(c *Config) *string { return &c.Preset }),
}

// AllOptions documents every option some family reads, once each (defaults of
// the first family in Families' order that reads it).
func AllOptions() []OptionInfo {
	var out []OptionInfo
	seen := map[string]bool{}
	for _, f := range Families() {
		for _, o := range f.Options() {
			if !seen[o.Name] {
				seen[o.Name] = true
				out = append(out, o)
			}
		}
	}
	return out
}

// AllOptionNames lists every option any family reads.
func AllOptionNames() []string {
	var names []string
	for _, o := range AllOptions() {
		names = append(names, o.Name)
	}
	return names
}

// Option documents a model option by name or alias.
func Option(name string) (OptionInfo, bool) {
	for _, o := range AllOptions() {
		if o.Matches(name) {
			return o, true
		}
	}
	return OptionInfo{}, false
}

// IsOption reports whether name is a model option of some family.
func IsOption(name string) bool {
	_, ok := Option(name)
	return ok
}

// ParseConfig builds a config from key=value options (see Parse) and
// validates it: options that belong to no family or to another family, values
// that break an option's rule and configs Validate rejects are errors naming
// the option and the rule.
func ParseConfig(values map[string]string) (Config, error) {
	c, err := Parse(values)
	if err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Parse builds a config from key=value options: the family's defaults
// (model= names it; the default family otherwise), overridden by values, each
// checked against its option's own rule. The rules that tie options together
// (a half-segment dividing n, ...) are Validate's: train parses first and
// validates once the data has set n and the vocabulary.
func Parse(values map[string]string) (Config, error) {
	values, err := withPreset(values)
	if err != nil {
		return Config{}, err
	}
	family := values["model"]
	if family == "" {
		family = DefaultFamily()
	}
	f, ok := FamilyByName(family)
	if !ok {
		return Config{}, fmt.Errorf("unknown model %q; choose one of: %s", family, strings.Join(FamilyNames(), ", "))
	}
	c := DefaultConfig(family)
	for _, name := range slices.Sorted(maps.Keys(values)) {
		switch {
		case name == "model" || name == "preset" && values[name] == "":
			continue
		case !IsOption(name):
			return Config{}, fmt.Errorf("unknown model option %q", name)
		case !f.Reads(name):
			return Config{}, fmt.Errorf("option %s does not apply to model %s (its options: %s)", name, family, strings.Join(optionNames(f.Options()), ", "))
		}
		var err error
		if c, err = c.With(name, values[name]); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// With returns the config with one option set by name; the value is checked
// against the option's rules (the whole config is checked by Validate).
func (c Config) With(name, value string) (Config, error) {
	f, ok := FamilyByName(c.Model)
	if !ok {
		return c, fmt.Errorf("unknown model %q; choose one of: %s", c.Model, strings.Join(FamilyNames(), ", "))
	}
	if name == "model" {
		return c, fmt.Errorf("option model cannot change a config's family; start from DefaultConfig(%q)", value)
	}
	if field, common := commonOptions.Lookup(name); common && (name != "causal" || f.Bidirectional) {
		return c, field.Set(&c, value)
	}
	if !f.Reads(name) {
		return c, fmt.Errorf("option %s does not apply to model %s", name, c.Model)
	}
	own, err := f.own.set(c.own, name, value)
	if err != nil {
		return c, err
	}
	c.own = own
	return c, nil
}

// MustWith is With for values known to be valid (tests, benchmarks); it panics otherwise.
func (c Config) MustWith(name, value string) Config {
	c, err := c.With(name, value)
	if err != nil {
		panic(err)
	}
	return c
}

// Get reads one option by name or alias ("" when the family does not read it).
func (c Config) Get(name string) string {
	f, ok := FamilyByName(c.Model)
	if !ok || !f.Reads(name) {
		return ""
	}
	if field, common := commonOptions.Lookup(name); common {
		return field.Get(c)
	}
	return f.own.get(c.own, name)
}

func optionNames(opts []OptionInfo) []string {
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.Name
	}
	return names
}

// Resolved fills in the options left at 0 ("derive from the others").
func (c Config) Resolved() Config {
	if c.SeqLen == 0 {
		c.SeqLen = DefaultSeqLen
	}
	if f, ok := FamilyByName(c.Model); ok {
		c = f.resolve(c)
	}
	return c
}

// Validate checks every rule a config must follow before a graph is built, and
// names the option and the rule when one is broken.
func (c Config) Validate() error {
	f, ok := FamilyByName(c.Model)
	if !ok {
		return fmt.Errorf("unknown model %q; choose one of: %s", c.Model, strings.Join(FamilyNames(), ", "))
	}
	r := c.Resolved()
	// Every option's own rule, also for configs built in Go rather than parsed.
	for _, o := range f.Options() {
		if err := o.Check(r.Get(o.Name)); err != nil {
			return err
		}
	}
	if !r.Causal && !f.Bidirectional {
		return fmt.Errorf("option causal=false: model %s is causal by construction", r.Model)
	}
	if r.Dim%r.Heads != 0 {
		return fmt.Errorf("model width dim=%d must be divisible by heads=%d", r.Dim, r.Heads)
	}
	if (r.Dim/r.Heads)%2 != 0 {
		return fmt.Errorf("head width dim/heads=%d must be even for rotary position encoding", r.Dim/r.Heads)
	}
	return f.validate(r)
}

// Family is the config's registered family.
func (c Config) Family() Family { return *mustFamily(c.Model) }

// Options renders the config as the key=value options that rebuild it (the
// family's options only), e.g. for checkpoints and `status`.
func (c Config) Options() map[string]string {
	out := map[string]string{}
	for _, o := range c.Family().Options() {
		out[o.Name] = c.Get(o.Name)
	}
	return out
}

// String is the config as a key=value line, in the family's option order.
func (c Config) String() string {
	var parts []string
	for _, o := range c.Family().Options() {
		parts = append(parts, o.Name+"="+c.Get(o.Name))
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes the options that rebuild the config.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.Options()) }

// UnmarshalJSON reads what MarshalJSON wrote, checking every value (Validate
// checks the whole).
func (c *Config) UnmarshalJSON(b []byte) error {
	var values map[string]string
	if err := json.Unmarshal(b, &values); err != nil {
		return err
	}
	parsed, err := Parse(values)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// LayerPatterns lists the attention of every layer.
func (c Config) LayerPatterns() []Layer {
	r := c.Resolved()
	return r.Family().layers(r)
}

// Pattern is the attention of the family's first layer (the one that reads
// the whole sequence).
func (c Config) Pattern() Pattern { return c.LayerPatterns()[0].Pattern }

// LossStart is the first position that carries the loss: 0 for families
// trained on every position (ECP among them), n - l for the PerceiverAR
// family, trained on its latents only.
func (c Config) LossStart() int {
	r := c.Resolved()
	return r.Family().lossFrom(r)
}

// ReceptiveFieldBound is the analytical reach back from position i after
// `layers` layers; ok is false when the family has no bound below i.
func (c Config) ReceptiveFieldBound(i, layers int) (bound int, ok bool) {
	r := c.Resolved()
	f := r.Family()
	if f.receptiveField == nil {
		return 0, false
	}
	return f.receptiveField(r, i, layers), true
}

// WithWindow sets the options that give the family's pattern a window (block,
// half-segment) of w positions; families without one are returned unchanged.
func (c Config) WithWindow(w int) Config {
	if f := c.Family(); f.benchWindow != nil {
		return f.benchWindow(c, w)
	}
	return c
}
