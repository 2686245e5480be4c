package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one line of a script: a longer one is an error naming
// the line rather than a read failure.
const maxLineBytes = 16 << 20

// RunScript runs commands line by line (a pipe or `ecpi run FILE`). The first
// failing command stops the run unless keepGoing; errors are reported on
// errOut, one line each with their line number, and the first error is
// returned as a ReportedError. Ctrl-C (ctx) during a line stops the script
// after that line, which is reported as interrupted. `quit` ends the script
// there.
func RunScript(ctx context.Context, s *Session, script io.Reader, out, errOut io.Writer, keepGoing bool) error {
	lines := bufio.NewReaderSize(script, 64*1024)
	var firstErr error
	report := func(err error) error {
		fmt.Fprintf(errOut, "ecpi: %s\n", OneLine(err))
		if firstErr == nil {
			firstErr = &ReportedError{err}
		}
		return firstErr
	}
	for lineNum := 1; ; lineNum++ {
		line, err := readLine(lines)
		if errors.Is(err, io.EOF) {
			return firstErr
		}
		if err != nil {
			return report(fmt.Errorf("line %d: %w", lineNum, err))
		}
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if ctx.Err() != nil {
			return report(fmt.Errorf("line %d: interrupted before it ran (Ctrl-C)", lineNum))
		}
		err = Execute(ctx, s, line, out)
		switch {
		case errors.Is(err, ErrQuit):
			return firstErr
		case ctx.Err() != nil:
			return report(fmt.Errorf("line %d: %s: interrupted (Ctrl-C); the lines after it were not run", lineNum, quoteLine(line)))
		case err != nil:
			report(fmt.Errorf("line %d: %s: %w", lineNum, quoteLine(line), err))
			if !keepGoing {
				return firstErr
			}
		}
	}
}

// readLine reads one line without its end; io.EOF once the input is done.
func readLine(r *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return string(line), nil
			}
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("cannot read the script: %w", err)
			}
			return "", err
		}
		if len(line)+len(chunk) > maxLineBytes {
			return "", fmt.Errorf("longer than %d MiB; split it into lines", maxLineBytes>>20)
		}
		line = append(line, chunk...)
		if !isPrefix {
			return string(line), nil
		}
	}
}

// quoteLine shows a script line in a message, Printable and cut to a
// readable length.
func quoteLine(line string) string { return printableCut(line, 60) }

// ReportedError is an error RunScript has already written on its error output.
type ReportedError struct{ Err error }

func (e *ReportedError) Error() string { return e.Err.Error() }
func (e *ReportedError) Unwrap() error { return e.Err }
