package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// RunScript runs commands line by line (a pipe or `ecpi run FILE`). The first
// failing command stops the run unless keepGoing; errors are reported on
// errOut with their line number, and the first error is returned. `quit`
// ends the script there.
func RunScript(ctx context.Context, s *Session, script io.Reader, out, errOut io.Writer, keepGoing bool) error {
	scanner := bufio.NewScanner(script)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	var firstErr error
	for lineNum := 1; scanner.Scan(); lineNum++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := Execute(ctx, s, line, out)
		if errors.Is(err, ErrQuit) {
			return firstErr
		}
		if err != nil {
			err = fmt.Errorf("line %d: %s: %w", lineNum, line, err)
			fmt.Fprintf(errOut, "ecpi: %v\n", err)
			if firstErr == nil {
				firstErr = err
			}
			if !keepGoing {
				return firstErr
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	return firstErr
}
