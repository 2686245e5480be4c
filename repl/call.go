package repl

// What a running command sees: its options read back (typed on the call, else
// set in the session, else the default) and where its output goes (text,
// --json lines, or notebook events).

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/option"
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

// Reader reads typed option values of a call and keeps the first error, so a
// command reads all its options and checks once:
//
//	r := c.Read()
//	tokens, temperature := r.Int("tokens"), r.Float("temperature")
//	if err := r.Err(); err != nil { return err }
type Reader struct {
	call *Call
	err  error
}

// Read starts reading the call's options.
func (c *Call) Read() *Reader { return &Reader{call: c} }

func (r *Reader) keep(err error) {
	if err != nil && r.err == nil {
		r.err = Usagef("%v", err)
	}
}

// Err is the first error met, as a usage error.
func (r *Reader) Err() error { return r.err }

// Int reads an integer option.
func (r *Reader) Int(name string) int {
	n, err := option.ParseInt(name, r.call.String(name))
	r.keep(err)
	return n
}

// Ints reads a comma-separated list of integers ("1024,2048").
func (r *Reader) Ints(name string) []int {
	ns, err := option.ParseInts(name, r.call.String(name))
	r.keep(err)
	return ns
}

// Float reads a finite number.
func (r *Reader) Float(name string) float64 {
	f, err := option.ParseFloat(name, r.call.String(name))
	r.keep(err)
	return f
}

// Strings splits a comma-separated option, dropping empty parts.
func (c *Call) Strings(name string) []string {
	var out []string
	for _, part := range strings.Split(c.String(name), ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

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
