// Package option is ecpi's one mechanism for key=value options: a typed field
// table over a struct says, for every option, its name, help, kind, closed set
// of values and rules; the same table sets, reads, documents, completes and
// validates. Model options (models), training options (train) and the options
// of every command (repl) are tables of this package, so a value breaks the
// same rule with the same message wherever it is typed: on the command line,
// in the REPL, with `set`, in a script or in a notebook.
package option

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Field is one option of the struct S: how to read and write it as text.
type Field[S any] struct {
	Name    string
	Aliases []string // older or alternative names accepted on input
	Help    string
	Kind    string   // what a value looks like: "integer", "number", "true or false", "one of: a, b", "text"
	Values  []string // the closed set of values (completion), nil when open
	// suggest completes an open value with what this machine offers (the
	// backends installed), asked for when completing rather than at start-up.
	suggest func() []string
	parse   func(s *S, value string) error
	format  func(s *S) string
}

// Set parses value into s, checking the field's kind and rules.
func (f Field[S]) Set(s *S, value string) error { return f.parse(s, value) }

// Get formats the field's value in s.
func (f Field[S]) Get(s S) string { return f.format(&s) }

// Check validates a value on its own (kind and rules), without a struct to
// hold it: what commands call as soon as an option is typed.
func (f Field[S]) Check(value string) error {
	var scratch S
	return f.parse(&scratch, value)
}

// Suggesting completes the field's values with what suggest returns when asked.
func (f Field[S]) Suggesting(suggest func() []string) Field[S] {
	f.suggest = suggest
	return f
}

// Checking adds a check that runs before the field's own parsing: for text
// whose rule needs its own words (what a backend name may be).
func (f Field[S]) Checking(check func(value string) error) Field[S] {
	parse := f.parse
	f.parse = func(s *S, value string) error {
		if err := check(value); err != nil {
			return err
		}
		return parse(s, value)
	}
	return f
}

// Within lifts the table of T into S, which holds a T: a command adds its own
// options to a library's table and reads them all into one struct.
func Within[S, T any](table Table[T], inner func(*S) *T) Table[S] {
	out := make(Table[S], len(table))
	for i, f := range table {
		out[i] = Field[S]{Name: f.Name, Aliases: f.Aliases, Help: f.Help, Kind: f.Kind, Values: f.Values, suggest: f.suggest,
			parse:  func(s *S, value string) error { return f.parse(inner(s), value) },
			format: func(s *S) string { return f.format(inner(s)) },
		}
	}
	return out
}

// Alias adds an alternative name.
func (f Field[S]) Alias(names ...string) Field[S] {
	f.Aliases = append(slices.Clone(f.Aliases), names...)
	return f
}

// Matches reports whether name is the field's name or one of its aliases.
func (f Field[S]) Matches(name string) bool {
	return f.Name == name || slices.Contains(f.Aliases, name)
}

// Info is a field without its struct: what help, completion and command
// parsers need to document and check one option.
type Info struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	Default string   `json:"default"`
	Help    string   `json:"help"`
	Kind    string   `json:"kind"`
	Values  []string `json:"values,omitempty"`
	check   func(value string) error
	suggest func() []string
}

// Described is the option's help and its other names, as help listings show it.
func (i Info) Described() string {
	if len(i.Aliases) == 0 {
		return i.Help
	}
	return i.Help + " (also: " + strings.Join(i.Aliases, ", ") + ")"
}

// Info describes the field with the default value def.
func (f Field[S]) Info(def string) Info {
	return Info{Name: f.Name, Aliases: f.Aliases, Default: def, Help: f.Help, Kind: f.Kind, Values: f.Values, check: f.Check, suggest: f.suggest}
}

// Suggestions are the values to complete: the machine's (Suggesting), else
// the closed set, else none.
func (i Info) Suggestions() []string {
	if i.suggest != nil {
		return i.suggest()
	}
	return i.Values
}

// Check validates a value of the option on its own (kind and rules).
func (i Info) Check(value string) error {
	if i.check == nil {
		return nil
	}
	return i.check(value)
}

// Matches reports whether name is the option's name or one of its aliases.
func (i Info) Matches(name string) bool { return i.Name == name || slices.Contains(i.Aliases, name) }

// Infos describes every field with its value in defaults.
func (t Table[S]) Infos(defaults S) []Info {
	out := make([]Info, len(t))
	for i, f := range t {
		out[i] = f.Info(f.Get(defaults))
	}
	return out
}

// Table is the option table of S.
type Table[S any] []Field[S]

// Lookup finds a field by name or alias.
func (t Table[S]) Lookup(name string) (Field[S], bool) {
	for _, f := range t {
		if f.Matches(name) {
			return f, true
		}
	}
	return Field[S]{}, false
}

// Set sets one option by name.
func (t Table[S]) Set(s *S, name, value string) error {
	f, ok := t.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown option %q", name)
	}
	return f.Set(s, value)
}

// Get reads one option by name ("" for an unknown one).
func (t Table[S]) Get(s S, name string) string {
	if f, ok := t.Lookup(name); ok {
		return f.Get(s)
	}
	return ""
}

// Rule is a constraint on a value of type T, with the words that state it in
// an error message ("must be at least 1").
type Rule[T any] struct {
	holds func(T) bool
	says  string
}

// NewRule makes a rule from a predicate and its statement.
func NewRule[T any](holds func(T) bool, says string) Rule[T] { return Rule[T]{holds, says} }

// Number is the types the numeric rules apply to.
type Number interface {
	~int | ~int64 | ~uint64 | ~float64
}

// AtLeast: value >= min.
func AtLeast[T Number](min T) Rule[T] {
	return Rule[T]{func(v T) bool { return v >= min }, fmt.Sprintf("must be at least %v", min)}
}

// AtMost: value <= max.
func AtMost[T Number](max T) Rule[T] {
	return Rule[T]{func(v T) bool { return v <= max }, fmt.Sprintf("must be at most %v", max)}
}

// Positive: value > 0.
func Positive[T Number]() Rule[T] {
	return Rule[T]{func(v T) bool { return v > 0 }, "must be positive"}
}

// Fraction: 0 <= value < 1 (rates such as dropout).
func Fraction() Rule[float64] {
	return Rule[float64]{func(v float64) bool { return v >= 0 && v < 1 }, "must be in [0, 1)"}
}

func check[T any](name string, value T, text string, rules []Rule[T]) error {
	for _, r := range rules {
		if !r.holds(value) {
			return fmt.Errorf("option %s=%s %s", name, text, r.says)
		}
	}
	return nil
}

// ParseInt reads option name's integer value and checks the rules.
func ParseInt(name, v string, rules ...Rule[int]) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("option %s=%q must be an integer", name, v)
	}
	return n, check(name, n, v, rules)
}

// ParseFloat reads option name's finite number and checks the rules.
func ParseFloat(name, v string, rules ...Rule[float64]) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("option %s=%q must be a finite number", name, v)
	}
	return f, check(name, f, v, rules)
}

// ParseInts reads a non-empty comma-separated list of integers, each checked by the rules.
func ParseInts(name, v string, rules ...Rule[int]) ([]int, error) {
	var out []int
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("option %s=%q must be a comma-separated list of integers", name, v)
		}
		if err := check(name, n, part, rules); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("option %s=%q must list at least one integer", name, v)
	}
	return out, nil
}

// ParseChoice checks v is one of values.
func ParseChoice(name, v string, values []string) (string, error) {
	if !slices.Contains(values, v) {
		return "", fmt.Errorf("option %s=%q must be one of: %s", name, v, strings.Join(values, ", "))
	}
	return v, nil
}

// ParseList reads a non-empty comma-separated list of distinct words from values (any words when nil).
func ParseList(name, v string, values []string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if values != nil && !slices.Contains(values, part) {
			return nil, fmt.Errorf("option %s=: unknown value %q; choose from %s", name, part, strings.Join(values, ", "))
		}
		if slices.Contains(out, part) {
			return nil, fmt.Errorf("option %s= lists %q twice", name, part)
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("option %s=%q must list at least one value", name, v)
	}
	return out, nil
}

// typed makes a field from a parser and a formatter of its Go value.
func typed[S, T any](name, help, kind string, values []string, field func(*S) *T, parse func(string) (T, error), format func(T) string) Field[S] {
	return Field[S]{Name: name, Help: help, Kind: kind, Values: values,
		parse: func(s *S, v string) error {
			value, err := parse(v)
			if err != nil {
				return err
			}
			*field(s) = value
			return nil
		},
		format: func(s *S) string { return format(*field(s)) },
	}
}

// Int is an integer option.
func Int[S any](name, help string, field func(*S) *int, rules ...Rule[int]) Field[S] {
	return typed(name, help, "integer", nil, field, func(v string) (int, error) { return ParseInt(name, v, rules...) }, strconv.Itoa)
}

// Int64 is a 64-bit integer option (seeds).
func Int64[S any](name, help string, field func(*S) *int64, rules ...Rule[int64]) Field[S] {
	return typed(name, help, "integer", nil, field, func(v string) (int64, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("option %s=%q must be an integer", name, v)
		}
		return n, check(name, n, v, rules)
	}, func(n int64) string { return strconv.FormatInt(n, 10) })
}

// Uint64 is a non-negative 64-bit integer option (sampling seeds).
func Uint64[S any](name, help string, field func(*S) *uint64) Field[S] {
	return typed(name, help, "integer", nil, field, func(v string) (uint64, error) {
		n, err := ParseInt(name, v, AtLeast(0))
		return uint64(n), err
	}, func(n uint64) string { return strconv.FormatUint(n, 10) })
}

// Float is a finite floating-point option: NaN and infinities are refused
// whatever the rules, since no option of ecpi means anything with them.
func Float[S any](name, help string, field func(*S) *float64, rules ...Rule[float64]) Field[S] {
	return typed(name, help, "number", nil, field, func(v string) (float64, error) { return ParseFloat(name, v, rules...) },
		func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })
}

// Bool is a true/false option (also accepting yes/no, on/off, 1/0).
func Bool[S any](name, help string, field func(*S) *bool) Field[S] {
	return typed(name, help, "true or false", []string{"true", "false"}, field, func(v string) (bool, error) {
		b, err := ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("option %s=%q must be true or false", name, v)
		}
		return b, nil
	}, strconv.FormatBool)
}

// ParseBool reads true/false, yes/no, on/off and 1/0.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", v)
}

// Choice is an option whose value is one of a closed set.
func Choice[S any](name, help string, values []string, field func(*S) *string) Field[S] {
	return typed(name, help, "one of: "+strings.Join(values, ", "), values, field,
		func(v string) (string, error) { return ParseChoice(name, v, values) }, func(v string) string { return v })
}

// OptionalChoice is Choice that may also stay unset (""), as an option that
// only matters when given.
func OptionalChoice[S any](name, help string, values []string, field func(*S) *string) Field[S] {
	return typed(name, help, "one of: "+strings.Join(values, ", ")+" (or unset)", values, field,
		func(v string) (string, error) {
			if v == "" {
				return v, nil
			}
			return ParseChoice(name, v, values)
		}, func(v string) string { return v })
}

// Text is a free-text option; rules may still restrict it (e.g. not empty).
func Text[S any](name, help string, field func(*S) *string, rules ...Rule[string]) Field[S] {
	return typed(name, help, "text", nil, field, func(v string) (string, error) { return v, check(name, v, strconv.Quote(v), rules) },
		func(v string) string { return v })
}

// NotEmpty refuses the empty string.
func NotEmpty() Rule[string] {
	return Rule[string]{func(v string) bool { return strings.TrimSpace(v) != "" }, "must not be empty"}
}

// Ints is a comma-separated list of integers, each checked by the rules
// ("1024,2048"); the list must not be empty.
func Ints[S any](name, help string, field func(*S) *[]int, rules ...Rule[int]) Field[S] {
	return typed(name, help, "comma-separated integers", nil, field, func(v string) ([]int, error) { return ParseInts(name, v, rules...) },
		func(ns []int) string {
			parts := make([]string, len(ns))
			for i, n := range ns {
				parts[i] = strconv.Itoa(n)
			}
			return strings.Join(parts, ",")
		})
}

// List is a comma-separated list of distinct words from values (any words
// when values is nil); the list must not be empty.
func List[S any](name, help string, values []string, field func(*S) *[]string) Field[S] {
	kind := "comma-separated words"
	if values != nil {
		kind = "comma-separated, from: " + strings.Join(values, ", ")
	}
	return typed(name, help, kind, values, field, func(v string) ([]string, error) { return ParseList(name, v, values) },
		func(words []string) string { return strings.Join(words, ",") })
}
