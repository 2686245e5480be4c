package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	prompt "github.com/c-bata/go-prompt"
	"golang.org/x/term"

	"github.com/ecpi-dev/ecpi/data"
)

// Interactive runs a session. On a terminal it is the go-prompt front end
// (completion, history in $ECPI_HOME/history, Ctrl-C interrupts the running
// command, Ctrl-D or quit leaves); otherwise (a pipe) it reads commands line
// by line like a script, stopping at the first failure, and Ctrl-C ends it.
func Interactive(ctx context.Context, s *Session, in io.Reader, out, errOut io.Writer) error {
	if tty, ok := terminal(in, out); ok {
		return runPrompt(ctx, s, tty, out, errOut)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	return RunScript(ctx, s, in, out, errOut, false)
}

// terminal returns in as a file when both ends of the session are a terminal:
// go-prompt draws on stdout, so a redirected stdout gets plain lines.
func terminal(in io.Reader, out io.Writer) (*os.File, bool) {
	inFile, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(inFile.Fd())) {
		return nil, false
	}
	outFile, ok := out.(*os.File)
	return inFile, ok && term.IsTerminal(int(outFile.Fd()))
}

const banner = `ecpi — type "help" for the commands, Tab to complete, Ctrl-C interrupts a command, Ctrl-D leaves.`

func runPrompt(ctx context.Context, s *Session, tty *os.File, out, errOut io.Writer) error {
	fd := int(tty.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return fmt.Errorf("reading the terminal settings: %w", err)
	}
	// go-prompt restores what it changed after each line, but not on every
	// path out (a panic, a signal): put back what the terminal had at the start.
	defer term.Restore(fd, saved)

	commands := &interrupter{}
	stopSignals := commands.handleSignals(func() { term.Restore(fd, saved) })
	defer stopSignals()

	history := openHistory(filepath.Join(data.Home(), "history"))
	reader, err := newLineReader(s, history.lines, out, nil)
	if err == nil {
		err = checkSize(fd)
	}
	if err != nil {
		fmt.Fprintf(errOut, "ecpi: no interactive prompt (%v); reading plain lines\n", err)
		return RunScript(ctx, s, tty, out, errOut, false)
	}
	fmt.Fprintln(out, banner)
	for failures := 0; ; {
		line, ok, err := reader.read()
		// go-prompt v0.2.6 "restores" a copy of the terminal settings that it
		// had itself switched to raw: put the real ones back so that commands
		// run with echo on and Ctrl-C as a signal.
		term.Restore(fd, saved)
		if err != nil {
			// The failed prompt's reader stops taking keys; a new prompt takes
			// over those it had read. One that keeps failing gives way to plain lines.
			fmt.Fprintf(errOut, "ecpi: the prompt failed (%v)\n", err)
			pending := reader.keys.retire()
			if failures++; failures < 3 {
				if reader, err = newLineReader(s, history.lines, out, pending); err == nil {
					continue
				}
			}
			fmt.Fprintln(errOut, "ecpi: reading plain lines")
			return RunScript(ctx, s, tty, out, errOut, false)
		}
		failures = 0
		if !ok {
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		history.add(line)
		err = commands.run(ctx, func(ctx context.Context) error { return Execute(ctx, s, line, out) })
		switch {
		case errors.Is(err, ErrQuit):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.Canceled):
			fmt.Fprintf(errOut, "interrupted: %s\n", OneLine(err))
		case err != nil:
			fmt.Fprintf(errOut, "error: %s\n", OneLine(err))
		}
	}
}

// lineReader is go-prompt used one line at a time, so that commands run
// with the terminal in its normal mode (Ctrl-C is then a signal).
type lineReader struct {
	p    *prompt.Prompt
	keys *keyReader
	// entered tells Enter on an empty line from Ctrl-D: go-prompt returns "" for both.
	entered bool
}

// newLineReader builds the prompt, drawing on out and starting with the keys
// pending; go-prompt opens /dev/tty and panics when there is none (a
// terminal without a controlling tty), which is an error here.
func newLineReader(s *Session, history []string, out io.Writer, pending []byte) (r *lineReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-prompt: %v", p)
		}
	}()
	r = &lineReader{keys: &keyReader{tty: prompt.NewStandardInputParser(), out: out, pending: pending}}
	markEntered := func(*prompt.Buffer) { r.entered = true }
	r.p = prompt.New(
		func(string) {}, // unused: lines are read with Input, not Run
		completer(s),
		prompt.OptionPrefix("ecpi> "),
		prompt.OptionTitle("ecpi"),
		prompt.OptionHistory(history),
		prompt.OptionCompletionWordSeparator(WordSeparators),
		prompt.OptionMaxSuggestion(8),
		prompt.OptionParser(r.keys),
		prompt.OptionAddKeyBind(
			prompt.KeyBind{Key: prompt.Enter, Fn: markEntered},
			prompt.KeyBind{Key: prompt.ControlM, Fn: markEntered},
			prompt.KeyBind{Key: prompt.ControlJ, Fn: markEntered},
		),
	)
	return r, nil
}

// read returns the next line; false on Ctrl-D at an empty prompt. A panic
// inside go-prompt (it divides by the terminal width, which can become 0) is
// an error, so the session can go on without it.
func (r *lineReader) read() (line string, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-prompt: %v", p)
		}
	}()
	r.entered = false
	line = r.p.Input()
	return line, line != "" || r.entered, nil
}

// checkSize refuses terminals that report no width (some pseudo-terminals
// and editor shells): go-prompt cannot lay out a line in zero columns.
func checkSize(fd int) error {
	width, height, err := term.GetSize(fd)
	if err != nil {
		return fmt.Errorf("reading the terminal size: %w", err)
	}
	if width == 0 || height == 0 {
		return fmt.Errorf("the terminal reports a size of %dx%d", width, height)
	}
	return nil
}

// completer adapts Complete to go-prompt. Option values come from every
// command's own Values function; a panic in one must not take the terminal
// down with it, so it just yields no suggestions.
func completer(s *Session) prompt.Completer {
	return func(d prompt.Document) (out []prompt.Suggest) {
		defer func() {
			if recover() != nil {
				out = nil
			}
		}()
		for _, sg := range Complete(s, d.TextBeforeCursor()) {
			out = append(out, prompt.Suggest{Text: sg.Text, Description: sg.Description})
		}
		return out
	}
}

// interrupter runs one command at a time with a context that Ctrl-C cancels.
type interrupter struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the running command; nil at the prompt
}

func (r *interrupter) run(ctx context.Context, command func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
	}()
	return command(ctx)
}

// interrupt cancels the running command, if any.
func (r *interrupter) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

// handleSignals routes SIGINT to the running command (at the prompt the
// terminal is raw, so Ctrl-C is a key, not a signal). SIGTERM and SIGHUP
// restore the terminal and then end the process as they would have.
func (r *interrupter) handleSignals(restoreTerminal func()) (stop func()) {
	signals := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				if sig == os.Interrupt {
					r.interrupt()
					continue
				}
				restoreTerminal()
				signal.Reset(sig)
				syscall.Kill(os.Getpid(), sig.(syscall.Signal))
			}
		}
	}()
	return func() {
		signal.Stop(signals)
		close(done)
	}
}

// history is the REPL's command history, kept across sessions in one file.
type history struct {
	path  string
	lines []string
}

// historyKept is how many past lines a session starts with.
const historyKept = 1000

// openHistory reads past lines; a missing or unreadable file is an empty history.
func openHistory(path string) *history {
	h := &history{path: path}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if line := scanner.Text(); line != "" {
			h.lines = append(h.lines, line)
		}
	}
	h.lines = h.lines[max(0, len(h.lines)-historyKept):]
	return h
}

// add appends a line to the file at once, so a killed session keeps its history.
// History is a convenience: when it cannot be written the session goes on.
func (h *history) add(line string) {
	if len(h.lines) > 0 && h.lines[len(h.lines)-1] == line {
		return
	}
	h.lines = append(h.lines, line)
	if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}
