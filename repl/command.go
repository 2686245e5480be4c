// Package repl is ecpi's command language: one parser and one evaluator serve the
// command line (`ecpi CMD key=value ...`), scripts (`ecpi run FILE`), the
// interactive REPL and notebooks. A command is registered once, in a
// cmd_<area>.go file, and is then reachable in all of those ways with the same
// options, the same validation and the same output.
package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/option"
)

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

// UsageError is a mistake in what was typed (unknown command or option, a value
// that breaks a rule). The CLI exits 2 on it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

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

// Execute parses and runs one line of the language (REPL, scripts, notebooks).
func Execute(ctx context.Context, s *Session, line string, out io.Writer) error {
	words, err := SplitWords(line)
	if err != nil {
		return err
	}
	return ExecuteWords(ctx, s, words, out)
}

// ExecuteWords runs a command already split into words (the CLI's os.Args).
func ExecuteWords(ctx context.Context, s *Session, words []string, out io.Writer) error {
	return execute(ctx, s, words, &Call{Out: out})
}

// ExecuteEvents runs one line for a notebook session: what the command
// produces arrives as events (results, text, pictures, progress).
func ExecuteEvents(ctx context.Context, s *Session, line string, events func(nb.Event)) error {
	words, err := SplitWords(line)
	if err != nil {
		return err
	}
	return execute(ctx, s, words, &Call{Out: io.Discard, Events: events})
}

// execute parses words and runs the command with the call's output. Its
// error, whatever raised it, reads as one line (see OneLine).
func execute(ctx context.Context, s *Session, words []string, call *Call) (err error) {
	defer func() {
		if err != nil && !errors.Is(err, ErrQuit) {
			err = oneLineError{err}
		}
	}()
	inv, err := Parse(words)
	if err != nil || inv == nil {
		return err
	}
	if inv.Help {
		if call.Events != nil {
			call.Events(nb.Event{Text: inv.helpText()})
			return nil
		}
		_, err := fmt.Fprint(call.Out, inv.helpText())
		return err
	}
	call.Command, call.Session, call.Ctx, call.JSON, call.Args, call.given = inv.Command, s, ctx, inv.JSON, inv.Args, inv.Options
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s failed: %v", inv.Command.Name, firstLine(fmt.Sprint(r)))
		}
	}()
	return inv.Command.Run(call)
}

// firstLine keeps panics from inside GoMLX (which carry stack traces) to one line.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// maxErrorLength caps an error's line: a message that quotes what was typed
// (a 2 MB line) stays readable.
const maxErrorLength = 400

// OneLine is an error's message as one line of at most maxErrorLength bytes,
// made Printable: the lines of a multi-line message (joined errors, a
// backend's report) are joined with "; ".
func OneLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return printableCut(strings.Join(parts, "; "), maxErrorLength)
}

// Printable is s with every control character (C0, DEL, C1) and every byte
// that is not UTF-8 written as an escape (\x1b, \u009b, \xff), and a tab as
// a space. Messages quote what was typed, piped or read, and a terminal obeys
// what it is sent: a quoted ESC ] 2 ; … BEL would retitle it, ESC [ 31 m
// recolour it, U+009B (CSI) do the same where 8-bit controls are on.
// Backslashes are left alone, so Printable text passes through unchanged.
func Printable(s string) string { return printableCut(s, math.MaxInt) }

// printableCut is Printable(s) cut to at most limit bytes followed by "…",
// never inside an escape or a character.
func printableCut(s string, limit int) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		shown := s[i : i+size]
		switch {
		case r == utf8.RuneError && size == 1:
			shown = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\t':
			shown = " "
		case unicode.IsControl(r) && r < utf8.RuneSelf:
			shown = fmt.Sprintf(`\x%02x`, r)
		case unicode.IsControl(r):
			shown = fmt.Sprintf(`\u%04x`, r)
		}
		if out.Len()+len(shown) > limit {
			return out.String() + "…"
		}
		out.WriteString(shown)
		i += size
	}
	return out.String()
}

// oneLineError is what ExecuteWords returns: the error, read as one line, and
// still itself for errors.Is and errors.As.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return OneLine(e.err) }
func (e oneLineError) Unwrap() error { return e.err }

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

func (inv *Invocation) helpText() string {
	if inv.Command == nil {
		return GroupHelp(inv.Group)
	}
	return HelpText(inv.Command)
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
			if opt.Check != nil {
				if err := opt.Check(value); err != nil {
					return nil, Usagef("%s: %v", cmd.Name, err)
				}
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

func (c *Command) hasOption(name string) bool { return c.lookup(name) != nil }

// lookup finds an option by name or alias.
func (c *Command) lookup(name string) *Option {
	opts := c.AllOptions()
	for i := range opts {
		if opts[i].matches(name) {
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

// GroupHelp is the --help of a group of commands ("bench", "probe"): its
// subcommands and what each does.
func GroupHelp(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: ecpi %s SUBCOMMAND [key=value ...] [--json]\n\nsubcommands:\n", group)
	names := subcommands(group)
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, registry[group+" "+name].Summary)
	}
	fmt.Fprintf(&b, "\n`ecpi %s SUBCOMMAND --help` shows a subcommand's options.\n", group)
	return b.String()
}

// SplitWords splits a line like a shell: spaces separate words, double or
// single quotes group them (so `sample "The "` keeps its space), backslash
// escapes inside double quotes.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '"' || ch == '\'':
			quote := ch
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == quote {
					closed = true
					break
				}
				if quote == '"' && line[i] == '\\' && i+1 < len(line) {
					i++
					cur.WriteByte(unescape(line[i]))
					continue
				}
				cur.WriteByte(line[i])
			}
			if !closed {
				return nil, Usagef("unterminated %c quote in %q", quote, line)
			}
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '#' && !inWord:
			i = len(line) // a comment runs to the end of the line
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func unescape(ch byte) byte {
	switch ch {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return ch
}

// Nearest returns the candidate closest to word by edit distance, or "" when
// nothing is close enough to be a plausible typo.
func Nearest(word string, candidates []string) string {
	best, bestDist := "", len(word)/2+2
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// HelpText is the --help of one command.
func HelpText(c *Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n\nusage: ecpi %s", c.Name, c.Summary, c.Name)
	if c.Args != "" {
		fmt.Fprintf(&b, " %s", c.Args)
	}
	opts := c.AllOptions()
	if len(opts) > 0 {
		b.WriteString(" [key=value ...]")
	}
	b.WriteString(" [--json]\n")
	if c.Details != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.Details, "\n"))
	}
	if len(opts) > 0 {
		b.WriteString("\noptions:\n")
		width := 0
		for _, o := range opts {
			width = max(width, len(o.Name)+len(o.Default)+1)
		}
		for _, o := range opts {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, o.Name+"="+o.Default, o.Help)
		}
	}
	return b.String()
}

// IsUsage reports whether err is a usage mistake rather than a failure of the work.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}
