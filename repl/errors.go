package repl

// The language's errors and how any error or quoted text is shown: as one line
// with no control characters. This file uses nothing else of the package, so
// every other file (the word splitter and the parser included) can use it.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// UsageError is a mistake in what was typed (unknown command or option, a value
// that breaks a rule). The CLI exits 2 on it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is a usage mistake rather than a failure of the work.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// ErrQuit is returned by `quit` and `exit`: the reader that runs the session
// stops without reporting an error.
var ErrQuit = errors.New("quit")

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
