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

// TestMode: ECPI_QUICK=1 (CI's switch) is quick whatever ECPI_MODE says;
// otherwise ECPI_MODE names the mode, full by default.
func TestMode(t *testing.T) {
	for _, c := range []struct{ quick, mode, want string }{
		{"", "", "full"}, {"1", "", "quick"}, {"1", "paper", "quick"}, {"", "paper", "paper"}, {"", "quick", "quick"}, {"", "full", "full"},
	} {
		t.Setenv("ECPI_QUICK", c.quick)
		t.Setenv("ECPI_MODE", c.mode)
		if got := Mode(); got != c.want {
			t.Errorf("ECPI_QUICK=%q ECPI_MODE=%q: mode %q, want %q", c.quick, c.mode, got, c.want)
		}
	}
}
