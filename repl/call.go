package repl

// What a running command sees: its options read back (typed on the call, else
// set in the session, else the default; a command's own options arrive typed
// through Options.Read, those it forwards to a model or a run by name) and where its output goes (text,
// --json lines, or notebook events).

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/nb"
)

// Has reports whether the option was typed or set in the session (as opposed to
// falling back to its default).
func (c *Call) Has(name string) bool {
	if _, ok := c.given[name]; ok {
		return true
	}
	_, ok := c.Session.Get(name)
	return ok
}

// String returns the option's value: typed on this call, else set in the
// session, else the command's default.
func (c *Call) String(name string) string {
	if v, ok := c.given[name]; ok {
		return v
	}
	if v, ok := c.Session.Get(name); ok {
		return v
	}
	if opt := c.option(name); opt != nil {
		return opt.Default
	}
	panic(fmt.Sprintf("repl: command %q has no option %q", c.Command.Name, name))
}

func (c *Call) option(name string) *Option { return c.Command.lookup(name) }

// Given returns the options typed on this call, for commands that forward
// them (e.g. model options to a model config).
func (c *Call) Given() map[string]string {
	out := make(map[string]string, len(c.given))
	for k, v := range c.given {
		out[k] = v
	}
	return out
}

// Texter is implemented by results that have a human-readable form besides JSON.
type Texter interface{ Text() string }

// Emit writes a result: one JSON object per line with --json, else its text
// form; in a notebook session both, as events.
func (c *Call) Emit(v any) error {
	if c.Events != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		c.Events(nb.Event{Result: &nb.Result{Command: c.Command.Name, JSON: b}})
		if t, ok := v.(Texter); ok {
			c.Events(nb.Event{Text: strings.TrimRight(t.Text(), "\n") + "\n"})
		}
		return nil
	}
	if c.JSON {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(c.Out, string(b))
		return err
	}
	if t, ok := v.(Texter); ok {
		_, err := fmt.Fprintln(c.Out, strings.TrimRight(t.Text(), "\n"))
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.Out, string(b))
	return err
}

// Printf writes human-oriented progress; it is silent with --json so scripts
// read only JSON objects from stdout.
func (c *Call) Printf(format string, args ...any) {
	switch {
	case c.Events != nil:
		c.Events(nb.Event{Text: fmt.Sprintf(format, args...)})
	case !c.JSON:
		fmt.Fprintf(c.Out, format, args...)
	}
}

// Show sends a picture to a notebook session; elsewhere the text form of the
// command's result stands for it.
func (c *Call) Show(f nb.Figure) {
	if c.Events != nil {
		c.Events(nb.Event{Figure: &f})
	}
}
