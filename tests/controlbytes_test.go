package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// pwned retitles a terminal that is sent it raw; the NUL, the stray byte and
// the C1 CSI (U+009B) are the other kinds of byte a message must not pass on.
const pwned = "x \x1b]2;pwned\x07 \x00 \xff \u009b31m"

// pwnedShown is pwned as an error message quotes it.
const pwnedShown = `x \x1b]2;pwned\x07 \x00 \xff \u009b31m`

// checkQuoted fails unless msg (lines of text) shows shown and has no raw
// control or stray byte.
func checkQuoted(t *testing.T, how, msg, shown string) {
	t.Helper()
	if !utf8.ValidString(msg) || strings.ContainsFunc(strings.ReplaceAll(msg, "\n", ""), unicode.IsControl) {
		t.Errorf("%s: raw control or stray bytes in %q", how, msg)
	}
	if !strings.Contains(msg, shown) {
		t.Errorf("%s: %q does not show %s", how, msg, shown)
	}
}

// TestErrorsQuoteControlBytesSafely: a line with control bytes, piped, in a
// script file or on the command line, fails with a message that quotes it
// escaped.
func TestErrorsQuoteControlBytesSafely(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(home, "pwned.ecpi")
	if err := os.WriteFile(script, []byte(pwned+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		how, stdin string
		args       []string
	}{
		{"a pipe", pwned + "\n", nil},
		{"a script file", "", []string{"run", script}},
		// An argument cannot hold a NUL: the rest goes as arguments of model.
		{"the command line", "", append([]string{"model", "ecp"}, strings.Fields(strings.ReplaceAll(pwned, "\x00", `\x00`))...)},
	} {
		cmd := ecpiCommand(t, home, c.args...)
		cmd.Stdin = strings.NewReader(c.stdin)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: ecpi succeeded: %q", c.how, out)
			continue
		}
		checkQuoted(t, c.how, string(out), pwnedShown)
	}
}

// TestREPLQuotesControlBytesSafely: a line typed at the prompt with control
// bytes fails with an error line that quotes what reached the command
// escaped. go-prompt drops the BEL and the NUL (they are keys, not text).
func TestREPLQuotesControlBytesSafely(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.start()
	term.waitFor(0, "Tab to complete", 20*time.Second)
	m := term.mark()
	term.paste("model ecp " + pwned + "\r")
	term.waitFor(m, "error: ", 10*time.Second)
	term.waitFor(m+strings.Index(term.output(m), "error: "), "\n", 10*time.Second)
	out := term.output(m)
	line := out[strings.Index(out, "error: "):]
	line = line[:strings.Index(line, "\r\n")]
	checkQuoted(t, "the prompt", line, `(got ecp x \x1b]2;pwned \xff \u009b31m)`)
}
