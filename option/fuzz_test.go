package option

import (
	"strings"
	"testing"
)

// FuzzValues: every kind of option refuses a value with its name and rule,
// or accepts it, formats it, and accepts the formatted text as the same value.
func FuzzValues(f *testing.F) {
	for _, v := range []string{"", "0", "-1", "1e400", "nan", "inf", "abc", "3", "2, 8", "yes", "b", " ", "99999999999999999999", "1,,2"} {
		f.Add(uint8(0), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		field := table[int(which)%len(table)]
		var s sample
		if err := field.Set(&s, value); err != nil {
			if !strings.Contains(err.Error(), "option "+field.Name) {
				t.Errorf("%s=%q: error %q does not name the option", field.Name, value, err)
			}
			return
		}
		text := field.Get(s)
		var again sample
		if err := field.Set(&again, text); err != nil || field.Get(again) != text {
			t.Errorf("%s=%q formats as %q, which reads back as %q (%v)", field.Name, value, text, field.Get(again), err)
		}
	})
}
