package models

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/option"
)

// Spec is everything ecpi knows about one model family whose own options are
// the struct O. Each family's file registers one in its init function, and
// every part of ecpi (validation, `ecpi models`, completion, the benchmarks,
// the probes, the pictures) reads it from the registry: adding a family is one
// new file.
type Spec[O any] struct {
	Name    string // as the command language spells it
	Paper   string
	Summary string // one line for `ecpi models` and completion
	// Order places the family in listings: the two papers' models and their
	// baselines first (1-99), added baselines after (100 and up).
	Order int
	// Default makes this the family commands use when none is named (one family sets it).
	Default bool
	// Headline families are the papers' central comparison, which `compare`
	// trains when no models are named.
	Headline bool
	// Benchmark families are timed by `bench attention` when no variants are named.
	Benchmark bool

	Defaults O               // the family's own options before the user sets any
	Options  option.Table[O] // their names, help, kinds and rules

	// Resolve fills in the options left at 0, which mean "derive from the
	// others" (nil: nothing to derive).
	Resolve func(c Config, o *O)
	// Validate checks the rules that tie the family's options to the common ones
	// and names the option and the rule that a config breaks (nil: none).
	Validate func(c Config, o O) error
	// Layers says what each of the c.Layers layers computes.
	Layers func(c Config, o O) []Layer
	// LossFrom is the first position that carries the loss (nil: every position).
	LossFrom func(c Config, o O) int
	// Bidirectional families also run with causal=false (classification).
	Bidirectional bool
	// BenchWindow sets the options that give the family's pattern a window (or
	// block, or half-segment) of w positions, for `bench attention` (nil: the
	// family has no window, e.g. full attention).
	BenchWindow func(o *O, w int)
	// ReceptiveField is the analytical reach back from position i after
	// `layers` layers (nil: the family has no bound below i).
	ReceptiveField func(c Config, o O, i, layers int) int
}

// Family is a registered family as the rest of ecpi sees it.
type Family struct {
	Name    string `json:"name"`
	Paper   string `json:"paper"`
	Summary string `json:"summary"`
	// Bidirectional families accept causal=false.
	Bidirectional bool `json:"bidirectional"`

	order     int
	isDefault bool
	headline  bool
	benchmark bool

	own familyOptions
	// Type-erased views of the Spec's functions: the family's own options
	// travel inside Config as a value of the Spec's O.
	resolve        func(c Config) Config
	validate       func(c Config) error
	layers         func(c Config) []Layer
	lossFrom       func(c Config) int
	benchWindow    func(c Config, w int) Config
	receptiveField func(c Config, i, layers int) int
}

// familyOptions are a family's own options, type-erased.
type familyOptions struct {
	defaults any
	fields   []OptionInfo
	set      func(own any, name, value string) (any, error)
	get      func(own any, name string) string
}

var registry []*Family

// Register adds a family; called from the family file's init.
func Register[O any](s Spec[O]) {
	if _, dup := FamilyByName(s.Name); dup {
		panic("models: family registered twice: " + s.Name)
	}
	f := &Family{Name: s.Name, Paper: s.Paper, Summary: s.Summary, Bidirectional: s.Bidirectional, order: s.Order, isDefault: s.Default, headline: s.Headline, benchmark: s.Benchmark}
	f.own = familyOptions{
		defaults: s.Defaults,
		set: func(own any, name, value string) (any, error) {
			o := own.(O)
			err := s.Options.Set(&o, name, value)
			return o, err
		},
		get: func(own any, name string) string { return s.Options.Get(own.(O), name) },
	}
	for _, field := range s.Options {
		f.own.fields = append(f.own.fields, field.Info(field.Get(s.Defaults)))
	}
	f.resolve = func(c Config) Config {
		if s.Resolve != nil {
			o := c.own.(O)
			s.Resolve(c, &o)
			c.own = o
		}
		return c
	}
	f.validate = func(c Config) error {
		if s.Validate == nil {
			return nil
		}
		return s.Validate(c, c.own.(O))
	}
	f.layers = func(c Config) []Layer { return s.Layers(c, c.own.(O)) }
	f.lossFrom = func(c Config) int {
		if s.LossFrom == nil {
			return 0
		}
		return s.LossFrom(c, c.own.(O))
	}
	if s.BenchWindow != nil {
		f.benchWindow = func(c Config, w int) Config {
			o := c.own.(O)
			s.BenchWindow(&o, w)
			c.own = o
			return c
		}
	}
	if s.ReceptiveField != nil {
		f.receptiveField = func(c Config, i, layers int) int { return s.ReceptiveField(c, c.own.(O), i, layers) }
	}
	registry = append(registry, f)
}

// Families lists the registered families in the order `ecpi models` shows them.
func Families() []Family {
	out := make([]Family, len(registry))
	for i, f := range sortedFamilies() {
		out[i] = *f
	}
	return out
}

func sortedFamilies() []*Family {
	sorted := slices.Clone(registry)
	slices.SortStableFunc(sorted, func(a, b *Family) int {
		if a.order != b.order {
			return a.order - b.order
		}
		return strings.Compare(a.Name, b.Name)
	})
	return sorted
}

// FamilyByName finds a family.
func FamilyByName(name string) (Family, bool) {
	for _, f := range registry {
		if f.Name == name {
			return *f, true
		}
	}
	return Family{}, false
}

// FamilyNames lists the family names in Families' order.
func FamilyNames() []string {
	var names []string
	for _, f := range sortedFamilies() {
		names = append(names, f.Name)
	}
	return names
}

func mustFamily(name string) *Family {
	for _, f := range registry {
		if f.Name == name {
			return f
		}
	}
	panic(fmt.Errorf("models: no family %q", name))
}

// HeadlineFamilies are the families `compare` trains when none are named.
func HeadlineFamilies() []string { return familiesWhere(func(f *Family) bool { return f.headline }) }

// BenchmarkFamilies are the families `bench attention` times when none are named.
func BenchmarkFamilies() []string { return familiesWhere(func(f *Family) bool { return f.benchmark }) }

func familiesWhere(keep func(f *Family) bool) []string {
	var names []string
	for _, f := range sortedFamilies() {
		if keep(f) {
			names = append(names, f.Name)
		}
	}
	return names
}

// HasWindow reports whether `bench attention`'s window= shapes the family.
func (f Family) HasWindow() bool { return f.benchWindow != nil }

// Options lists the options the family reads (the common ones, then its own)
// with the family's defaults.
func (f Family) Options() []OptionInfo {
	defaults := DefaultConfig(f.Name)
	var out []OptionInfo
	for _, field := range commonOptions {
		if field.Name == "causal" && !f.Bidirectional {
			continue
		}
		out = append(out, field.Info(field.Get(defaults)))
	}
	return append(out, f.own.fields...)
}

// Reads reports whether the family reads the option (by name or alias).
func (f Family) Reads(name string) bool {
	return slices.ContainsFunc(f.Options(), func(o OptionInfo) bool { return o.Matches(name) })
}
