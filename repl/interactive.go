package repl

import (
	"context"
	"io"
)

// Interactive runs a session on in. Without a terminal it reads commands line
// by line like a script, stopping at the first failure.
func Interactive(ctx context.Context, s *Session, in io.Reader, out, errOut io.Writer) error {
	return RunScript(ctx, s, in, out, errOut, false)
}
