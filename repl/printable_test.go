package repl

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// inert reports whether a terminal would show s as it is: valid UTF-8
// without a control character.
func inert(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x \x1b]2;pwned\x07", `x \x1b]2;pwned\x07`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\x00b", `a\x00b`},
		{"\r\n\x7f", `\x0d\x0a\x7f`},
		{"\xff\xfe", `\xff\xfe`},
		{"é"[:1] + "x", `\xc3x`},
		{"\u009b31m\u0085", `\u009b31m\u0085`},
		{"a\tb", "a b"},
		{`already \x1b "quoted"`, `already \x1b "quoted"`},
		{"é π ∑ ✓ \ufffd", "é π ∑ ✓ \ufffd"},
	} {
		got := Printable(c.in)
		if got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
		if Printable(got) != got {
			t.Errorf("Printable(%q) changes Printable's own output %q", c.in, got)
		}
	}
	var every []byte
	for b := range 256 {
		every = append(every, byte(b))
	}
	for _, s := range []string{string(every), string([]rune{0x80, 0x9f, 0xa0, 0x2028})} {
		if got := Printable(s); !inert(got) {
			t.Errorf("Printable(%q) = %q leaves a control character or a stray byte", s, got)
		}
	}
}

// TestMessagesAreCutBetweenEscapes: the cut of a long line or message keeps
// an escape or a character whole.
func TestMessagesAreCutBetweenEscapes(t *testing.T) {
	line := strings.Repeat("a", 58) + "\x1b[2J" + strings.Repeat("b", 10)
	if got, want := quoteLine(line), strings.Repeat("a", 58)+"…"; got != want {
		t.Errorf("quoteLine = %q, want %q", got, want)
	}
	if got, want := quoteLine(strings.Repeat("a", 59)+"πx"), strings.Repeat("a", 59)+"…"; got != want {
		t.Errorf("quoteLine cuts inside π: %q, want %q", got, want)
	}
	if got, want := quoteLine("x \x1b]2;pwned\x07"), `x \x1b]2;pwned\x07`; got != want {
		t.Errorf("quoteLine of a short line = %q, want %q", got, want)
	}
	msg := OneLine(errors.New("bad \x1b[31mred\n\n second " + strings.Repeat("\x00", maxErrorLength)))
	if !strings.HasPrefix(msg, `bad \x1b[31mred; second \x00\x00`) || !strings.HasSuffix(msg, `\x00…`) || len(msg) > maxErrorLength+len("…") {
		t.Errorf("OneLine = %q", msg)
	}
}

// TestScriptQuotesControlBytes: a script's failing line is quoted with its
// control bytes and stray bytes escaped.
func TestScriptQuotesControlBytes(t *testing.T) {
	script := "x \x1b]2;pwned\x07 \x00 \xff\nmodel ecp x \x1b[31m\u009b\n"
	var out, errOut bytes.Buffer
	if err := RunScript(context.Background(), NewSession(), strings.NewReader(script), &out, &errOut, true); err == nil {
		t.Fatal("the script's lines should fail")
	}
	got := errOut.String()
	if !inert(strings.ReplaceAll(got, "\n", "")) {
		t.Errorf("error output has raw control or stray bytes: %q", got)
	}
	for _, want := range []string{`line 1: x \x1b]2;pwned\x07 \x00 \xff: `, `line 2: model ecp x \x1b[31m\u009b: `, `(got ecp x \x1b[31m\u009b)`} {
		if !strings.Contains(got, want) {
			t.Errorf("error output %q does not show %q", got, want)
		}
	}
}

// TestSetAndStatusEchoSettingsPrintable: set takes any text as a value, and
// set and status show it back.
func TestSetAndStatusEchoSettingsPrintable(t *testing.T) {
	s := NewSession()
	for _, line := range []string{"set run=\"x \x1b]2;pwned\x07 \x00 \xff\" checkpoint=\x1b[2J", "status"} {
		var out bytes.Buffer
		if err := Execute(context.Background(), s, line, &out); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if got := out.String(); !inert(strings.ReplaceAll(got, "\n", "")) || !strings.Contains(got, `run=x \x1b]2;pwned\x07 \x00 \xff`) || !strings.Contains(got, `\x1b[2J`) {
			t.Errorf("%q printed %q", line, got)
		}
	}
}
