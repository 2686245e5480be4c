package train

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns text from a model as it can be printed on a terminal or in
// a notebook: a model of bytes writes any byte, and a raw \r, \b or escape
// sequence would rewrite the screen. Line breaks and tabs stay as they are;
// other control characters become their Unicode control pictures (\r is ␍,
// \x05 is ␅, DEL is ␡); a byte that is not UTF-8 becomes \xNN; any other
// invisible character (a bidirectional override, a zero-width space) becomes
// \uNNNN. Backslashes are not escaped: the model's own "\x05" reads the same.
func Visible(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, text[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case !unicode.IsGraphic(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}
