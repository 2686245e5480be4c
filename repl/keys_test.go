package repl

import (
	"errors"
	"io"
	"slices"
	"testing"

	prompt "github.com/c-bata/go-prompt"
)

// keysOf splits input as keyReader does, until it needs more bytes.
func keysOf(input string, pasting bool) (keys []string, rest string) {
	buf := []byte(input)
	for {
		key, n, p := nextKey(buf, pasting)
		if n == 0 {
			return keys, string(buf)
		}
		buf, pasting = buf[n:], p
		if key != nil {
			keys = append(keys, string(key))
		}
	}
}

func TestNextKeySplitsBurstsIntoKeys(t *testing.T) {
	cases := []struct {
		name, input string
		pasting     bool
		want        []string
		rest        string
	}{
		{"three lines in one read", "status\rmask n=64\rhelp\r", false, []string{"status", "\r", "mask n=64", "\r", "help", "\r"}, ""},
		{"a command and its Enter", "model ecp\r", false, []string{"model ecp", "\r"}, ""},
		{"CRLF and LF line breaks", "a\r\nb\nc", false, []string{"a", "\r", "b", "\r", "c"}, ""},
		{"Tab then a space typed fast", "mod\t ", false, []string{"mod", "\t", " "}, ""},
		{"arrow, Alt-b and a lone Esc", "\x1b[A\x1bb\x1b", false, []string{"\x1b[A", "\x1bb", "\x1b"}, ""},
		{"bracketed paste: Tab is a space, controls dropped, Tab after it a Tab",
			"\x1b[200~a\tb\x03\nc\x1b[201~\t", false, []string{"a", " ", "b", "\r", "c", "\t"}, ""},
		{"a character cut by the end of a read", "a π\xcf", false, []string{"a π"}, "\xcf"},
		{"a paste end marker cut by the end of a read", "x\x1b[20", true, []string{"x"}, "\x1b[20"},
		{"a paste start marker cut by the end of a read", "\x1b[20", false, nil, "\x1b[20"},
	}
	for _, c := range cases {
		keys, rest := keysOf(c.input, c.pasting)
		if !slices.Equal(keys, c.want) || rest != c.rest {
			t.Errorf("%s: keys %q, rest %q; want %q, rest %q", c.name, keys, rest, c.want, c.rest)
		}
	}
}

// burst is a terminal whose reads return the given chunks, then nothing.
type burst struct{ chunks []string }

func (b *burst) Setup() error                { return nil }
func (b *burst) TearDown() error             { return nil }
func (b *burst) GetWinSize() *prompt.WinSize { return &prompt.WinSize{Row: 24, Col: 80} }
func (b *burst) Read() ([]byte, error) {
	if len(b.chunks) == 0 {
		return nil, errNoKey
	}
	c := b.chunks[0]
	b.chunks = b.chunks[1:]
	return []byte(c), nil
}

func TestKeyReaderHoldsTheNextLineUntilItsPromptStarts(t *testing.T) {
	k := &keyReader{tty: &burst{chunks: []string{"status\rmod", "el ecp\r"}}, out: io.Discard}
	read := func() string {
		b, err := k.Read()
		if err != nil {
			if !errors.Is(err, errNoKey) {
				t.Fatal(err)
			}
			return "(none)"
		}
		return string(b)
	}
	var got []string
	for range 3 {
		got = append(got, read())
	}
	k.Setup() // the next line's prompt
	for range 4 {
		got = append(got, read())
	}
	want := []string{"status", "\r", "(none)", "mod", "el ecp", "\r", "(none)"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	k = &keyReader{tty: &burst{chunks: []string{"a\rleft over"}}, out: io.Discard}
	k.Read()
	k.Read()
	k.Setup()
	if pending := k.retire(); string(pending) != "left over" || read() != "(none)" {
		t.Errorf("a retired reader passed on %q and must give nothing more", pending)
	}
}
