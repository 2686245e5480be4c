package nb

import "testing"

func TestInts(t *testing.T) {
	for _, c := range []struct {
		values []int
		want   string
	}{{nil, ""}, {[]int{7}, "7"}, {[]int{6, 24, -40}, "6,24,-40"}} {
		if got := Ints(c.values); got != c.want {
			t.Errorf("Ints(%v) = %q, want %q", c.values, got, c.want)
		}
	}
}
