// Package repl is ecpi's command language: one parser and one evaluator serve the
// command line (`ecpi CMD key=value ...`), scripts (`ecpi run FILE`), the
// interactive REPL and notebooks. A command is registered once, in a
// cmd_<area>.go file, and is then reachable in all of those ways with the same
// options, the same validation and the same output.
package repl

import (
	"context"
	"io"
	"sort"
	"strings"

	"github.com/ecpi-dev/ecpi/nb"
)

// Command is one verb of the language. Name may hold two words ("bench attention").
type Command struct {
	Name    string
	Summary string
	// Args describes positional arguments for help, e.g. "PROMPT"; empty means
	// the command takes none and a stray word is a usage error.
	Args    string
	Details string
	Options []Option
	// AnyOption makes the command accept every option any command declares
	// (`set`), with that command's check.
	AnyOption bool
	Run       func(c *Call) error
}

// Call is declared here, next to Command, because each names the other (Run
// takes a *Call): the two together are what a command is, and the files that
// read a call (call.go) or fill one in (execute.go) then depend on this one
// without it depending on them.

// Call is one invocation of a command: its options resolved against the
// session, where its output goes, and the context that Ctrl-C cancels.
type Call struct {
	Command *Command
	Session *Session
	Ctx     context.Context
	Out     io.Writer
	JSON    bool
	Args    []string
	// Events, in a notebook session (kernel.Serve), receives what the command
	// produces instead of Out: results, text, pictures and training progress.
	Events func(nb.Event)
	given  map[string]string
}

// registry holds every command by its full name ("bench attention").
var registry = map[string]*Command{}

// Register adds a command to the language; called from init functions.
func Register(c *Command) {
	if _, dup := registry[c.Name]; dup {
		panic("repl: command registered twice: " + c.Name)
	}
	registry[c.Name] = c
}

// Commands returns every registered command sorted by name.
func Commands() []*Command {
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	sort.Strings(names)
	cmds := make([]*Command, len(names))
	for i, name := range names {
		cmds[i] = registry[name]
	}
	return cmds
}

// Lookup returns the command of that exact name.
func Lookup(name string) (*Command, bool) {
	c, ok := registry[name]
	return c, ok
}

// subcommands are the second words of the commands named "group ...", sorted.
func subcommands(group string) []string {
	var out []string
	for name := range registry {
		if rest, ok := strings.CutPrefix(name, group+" "); ok {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

func (c *Command) hasOption(name string) bool { return c.lookup(name) != nil }

// lookup finds an option by name or alias.
func (c *Command) lookup(name string) *Option {
	opts := c.AllOptions()
	for i := range opts {
		if opts[i].Matches(name) {
			return &opts[i]
		}
	}
	return nil
}

// AllOptions is the command's options; for a command that takes any option
// (`set`), every option of every other command, once each by name.
func (c *Command) AllOptions() []Option {
	if !c.AnyOption {
		return c.Options
	}
	var out []Option
	seen := map[string]bool{}
	for _, cmd := range Commands() {
		if cmd.AnyOption {
			continue
		}
		for _, opt := range cmd.Options {
			if !seen[opt.Name] {
				seen[opt.Name] = true
				out = append(out, opt)
			}
		}
	}
	return out
}
