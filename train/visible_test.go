package train

import (
	"testing"
	"unicode/utf8"
)

func TestVisibleShowsWhatATerminalWouldAct(t *testing.T) {
	cases := map[string]string{
		"plain text, 2 lines\n\tindented": "plain text, 2 lines\n\tindented",
		"line\r\nend":                     "line␍\nend",
		"back\bspace \x05 \x00 \x7f":      "back␈space ␅ ␀ ␡",
		"\x1b[2Jcleared":                  "␛[2Jcleared",
		"bad \xff\xfe utf8 \xe2\x82":      `bad \xff\xfe utf8 \xe2\x82`,
		"π ≤ 2π, Ünïcödé":                 "π ≤ 2π, Ünïcödé",
		"left\u202eright\u200b":           `left\u202eright\u200b`,
		"\u0085next line":                 `\u0085next line`,
	}
	for in, want := range cases {
		got := Visible(in)
		if got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Visible(%q) is not valid UTF-8", in)
		}
	}
}

func TestSampleResultPrintsVisibly(t *testing.T) {
	r := &SampleResult{Prompt: "The ", Text: "cat\rdog\x05"}
	if got := r.String(); got != "The cat␍dog␅" {
		t.Errorf("String() = %q", got)
	}
}
