package repl

// Running a line: split it into words, parse them, run the command, and read
// whatever error comes back, a panic included, as one line.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ecpi-dev/ecpi/nb"
)

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
