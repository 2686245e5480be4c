package repl

import (
	"slices"

	"github.com/ecpi-dev/ecpi/option"
)

// Option builders: a command declares its key=value options with these, so a
// value is checked by the same rule wherever it is typed.

// Option is one key=value option of a command.
type Option struct {
	Name    string
	Aliases []string // other names accepted for it (older spellings)
	Default string
	Help    string
	// Values lists completion candidates for the REPL (nil: free text). It may
	// read the session (e.g. checkpoint files of the current run folder).
	Values func(s *Session) []string
	// Check validates a value as soon as it is typed (nil: any text), so a
	// bad value is refused by the parser, by `set` and by scripts alike.
	Check func(value string) error
}

// matches reports whether name is the option's name or one of its aliases.
func (o Option) matches(name string) bool { return o.Name == name || slices.Contains(o.Aliases, name) }

// fromInfo turns a model or training option into a command option.
func fromInfo(info option.Info) Option {
	o := Option{Name: info.Name, Aliases: info.Aliases, Default: info.Default, Help: info.Help, Check: info.Check}
	if values := info.Values; values != nil {
		o.Values = func(*Session) []string { return values }
	}
	return o
}

// IntOption is an integer option checked by the rules.
func IntOption(name, def, help string, rules ...option.Rule[int]) Option {
	return Option{Name: name, Default: def, Help: help, Check: func(v string) error {
		_, err := option.ParseInt(name, v, rules...)
		return err
	}}
}

// FloatOption is a finite number checked by the rules.
func FloatOption(name, def, help string, rules ...option.Rule[float64]) Option {
	return Option{Name: name, Default: def, Help: help, Check: func(v string) error {
		_, err := option.ParseFloat(name, v, rules...)
		return err
	}}
}

// IntsOption is a comma-separated list of integers checked by the rules.
func IntsOption(name, def, help string, rules ...option.Rule[int]) Option {
	return Option{Name: name, Default: def, Help: help, Check: func(v string) error {
		_, err := option.ParseInts(name, v, rules...)
		return err
	}}
}

// ChoiceOption takes one of a closed set of values.
func ChoiceOption(name, def, help string, values ...string) Option {
	return Option{Name: name, Default: def, Help: help, Values: func(*Session) []string { return values },
		Check: func(v string) error {
			_, err := option.ParseChoice(name, v, values)
			return err
		}}
}

// ListOption is a comma-separated list of distinct words from values().
func ListOption(name, def, help string, values func() []string) Option {
	return Option{Name: name, Default: def, Help: help, Values: func(*Session) []string { return values() },
		Check: func(v string) error {
			_, err := option.ParseList(name, v, values())
			return err
		}}
}
