package repl

// Parsing: words become an Invocation, with the command and every option name
// checked here and a "did you mean" offered for a typo, so a mistake is
// refused before any command runs.

import (
	"fmt"
	"sort"
	"strings"
)

// Invocation is a parsed command line.
type Invocation struct {
	Command *Command
	Options map[string]string
	Args    []string
	JSON    bool
	Help    bool
	// Group is set, without a Command, for `GROUP --help` ("probe --help"):
	// the help lists the group's subcommands.
	Group string
}

// Parse turns words into an invocation, validating the command and option
// names. It returns (nil, nil) for an empty line.
func Parse(words []string) (*Invocation, error) {
	if len(words) == 0 {
		return nil, nil
	}
	if len(words) == 2 && (words[1] == "--help" || words[1] == "-h") && len(subcommands(words[0])) > 0 {
		if _, command := registry[words[0]]; !command {
			return &Invocation{Help: true, Group: words[0]}, nil
		}
	}
	cmd, rest, err := matchCommand(words)
	if err != nil {
		return nil, err
	}
	inv := &Invocation{Command: cmd, Options: map[string]string{}}
	for _, w := range rest {
		switch {
		case w == "--json":
			inv.JSON = true
		case w == "--help" || w == "-h":
			inv.Help = true
		case strings.HasPrefix(w, "--"):
			return nil, Usagef("%s: unknown flag %q (flags: --json, --help)", cmd.Name, w)
		case isOption(w):
			name, value, _ := strings.Cut(w, "=")
			opt := cmd.lookup(name)
			if opt == nil {
				return nil, unknownOption(cmd, name)
			}
			if err := opt.Check(value); err != nil {
				return nil, Usagef("%s: %v", cmd.Name, err)
			}
			inv.Options[opt.Name] = value
		default:
			if cmd.Args == "" {
				return nil, Usagef("%s takes no argument %q; options are key=value (see %q)", cmd.Name, w, cmd.Name+" --help")
			}
			inv.Args = append(inv.Args, w)
		}
	}
	return inv, nil
}

// isOption tells key=value from a positional argument that merely contains '='
// inside quotes or text: an option name is a plain identifier.
func isOption(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// matchCommand takes the longest registered name that prefixes the words
// ("bench attention" before "bench").
func matchCommand(words []string) (*Command, []string, error) {
	if len(words) >= 2 {
		if c, ok := registry[words[0]+" "+words[1]]; ok {
			return c, words[2:], nil
		}
	}
	if c, ok := registry[words[0]]; ok {
		return c, words[1:], nil
	}
	if subcommands := subcommands(words[0]); len(subcommands) > 0 {
		if len(words) >= 2 {
			msg := fmt.Sprintf("%s: unknown subcommand %q", words[0], words[1])
			if near := Nearest(words[1], subcommands); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", words[0]+" "+near)
			}
			return nil, nil, Usagef("%s; choose one of: %s", msg, strings.Join(subcommands, ", "))
		}
		return nil, nil, Usagef("%s needs a subcommand: %s", words[0], strings.Join(subcommands, ", "))
	}
	var names []string
	for name := range registry {
		names = append(names, strings.Fields(name)[0])
	}
	sort.Strings(names) // ties in Nearest go to the same name every run
	msg := fmt.Sprintf("unknown command %q", words[0])
	if near := Nearest(words[0], names); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return nil, nil, Usagef("%s; type \"help\" for the list", msg)
}

func unknownOption(c *Command, name string) error {
	var names []string
	for _, o := range c.AllOptions() {
		names = append(names, o.Name)
	}
	if len(names) == 0 {
		return Usagef("%s: unknown option %q; it takes no options", c.Name, name)
	}
	msg := fmt.Sprintf("%s: unknown option %q", c.Name, name)
	if near := Nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return Usagef("%s; options: %s", msg, strings.Join(names, ", "))
}
