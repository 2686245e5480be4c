package repl

import (
	"bytes"
	"io"
	"sync"
	"syscall"
	"unicode/utf8"

	prompt "github.com/c-bata/go-prompt"
)

// keyReader is go-prompt's input, handed out one key at a time.
//
// go-prompt v0.2.6 takes each read of the terminal for one key, and inserts
// a read it does not know as text. A pasted block, or a command and its
// Enter written at once, arrives in one read: it became one line with the
// line breaks inside it, nothing ran, and the completion menu was drawn
// where the text was not. keyReader splits what it reads into keys (text,
// control keys, escape sequences), gives every line break as Enter, and
// turns on bracketed paste so that a pasted Tab is a space rather than a
// completion. After an Enter it gives nothing until the next line's Setup:
// go-prompt drops whatever it has read when a line ends, so the rest of a
// paste waits here and runs as the next lines.
type keyReader struct {
	tty prompt.ConsoleParser
	out io.Writer // the terminal, for bracketed-paste mode

	mu      sync.Mutex
	pending []byte // read from the terminal, not yet handed out
	pasting bool   // between the terminal's paste-start and paste-end markers
	held    bool   // an Enter was handed out and this line is over
	retired bool   // a failed prompt's reader: it gives nothing more
}

const (
	pasteOn    = "\x1b[?2004h"
	pasteOff   = "\x1b[?2004l"
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	enter      = "\r"
)

// errNoKey tells go-prompt's reading loop that no key is ready.
var errNoKey = syscall.EAGAIN

func (k *keyReader) Setup() error {
	k.mu.Lock()
	k.held = false
	k.mu.Unlock()
	io.WriteString(k.out, pasteOn)
	return k.tty.Setup()
}

func (k *keyReader) TearDown() error {
	io.WriteString(k.out, pasteOff)
	return k.tty.TearDown()
}

func (k *keyReader) GetWinSize() *prompt.WinSize { return k.tty.GetWinSize() }

// Read returns the next key, reading the terminal when nothing is pending.
func (k *keyReader) Read() ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held || k.retired {
		return nil, errNoKey
	}
	for {
		key, n, pasting := nextKey(k.pending, k.pasting)
		k.pending, k.pasting = k.pending[n:], pasting
		switch {
		case key != nil:
			k.held = string(key) == enter
			return key, nil
		case n > 0: // a paste marker or a dropped byte: look further
			continue
		}
		b, err := k.tty.Read()
		if err != nil || len(b) == 0 {
			return nil, errNoKey
		}
		k.pending = append(k.pending, b...)
	}
}

// retire stops the reader of a prompt that failed: go-prompt's reading
// goroutine outlives a panic and would go on taking keys from the terminal.
// It returns the keys read but not handed out, for the next reader.
func (k *keyReader) retire() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.retired = true
	return k.pending
}

// nextKey splits the first key off buf. It returns the key to hand out (nil
// when the bytes consumed make none: a paste marker, a control byte inside a
// paste, or too few bytes to tell yet), how many bytes it consumed, and
// whether a paste is under way after them.
func nextKey(buf []byte, pasting bool) (key []byte, n int, stillPasting bool) {
	switch {
	case len(buf) == 0, splitMarker(buf, pasting):
		return nil, 0, pasting
	case bytes.HasPrefix(buf, []byte(pasteStart)):
		return nil, len(pasteStart), true
	case bytes.HasPrefix(buf, []byte(pasteEnd)):
		return nil, len(pasteEnd), false
	case bytes.HasPrefix(buf, []byte("\r\n")):
		return []byte(enter), 2, pasting
	case buf[0] == '\r' || buf[0] == '\n':
		return []byte(enter), 1, pasting
	case pasting && buf[0] == '\t':
		return []byte(" "), 1, pasting
	case pasting && isControl(buf[0]):
		return nil, 1, pasting
	case buf[0] == 0x1b:
		n := escapeLength(buf)
		return buf[:n], n, pasting
	case isControl(buf[0]):
		return buf[:1], 1, pasting
	}
	text := textLength(buf)
	if text == 0 {
		return nil, 0, pasting // the start of a character: wait for its other bytes
	}
	return buf[:text], text, pasting
}

func isControl(b byte) bool { return b < 0x20 || b == 0x7f }

// splitMarker reports whether buf is the start of a paste marker cut by the
// end of a read: a lone ESC outside a paste is the Esc key, inside one it
// can only begin the end marker.
func splitMarker(buf []byte, pasting bool) bool {
	marker, shortest := pasteStart, 2
	if pasting {
		marker, shortest = pasteEnd, 1
	}
	return len(buf) >= shortest && len(buf) < len(marker) && bytes.HasPrefix([]byte(marker), buf)
}

// escapeLength is the length of the escape sequence at the start of buf:
// ESC [ parameters final (CSI), ESC O x (SS3), ESC x (Alt+x), or a lone ESC.
func escapeLength(buf []byte) int {
	switch {
	case len(buf) >= 2 && buf[1] == '[':
		for i := 2; i < len(buf); i++ {
			if buf[i] >= 0x40 && buf[i] <= 0x7e {
				return i + 1
			}
		}
		return len(buf)
	case len(buf) >= 3 && buf[1] == 'O':
		return 3
	case len(buf) >= 2 && !isControl(buf[1]):
		return 2
	}
	return 1
}

// textLength is the length of the run of text at the start of buf, ending
// before a control byte and never inside a character.
func textLength(buf []byte) int {
	n := 0
	for n < len(buf) && !isControl(buf[n]) {
		n++
	}
	if n == len(buf) {
		for cut := n - 1; cut >= 0 && cut >= n-utf8.UTFMax; cut-- {
			if utf8.RuneStart(buf[cut]) {
				if !utf8.FullRune(buf[cut:n]) {
					n = cut
				}
				break
			}
		}
	}
	return n
}
