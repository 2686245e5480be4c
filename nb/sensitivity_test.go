package nb

import (
	"slices"
	"testing"
)

// TestSensitivity: a row per π setting with its mean ± s.e., its difference
// from the baseline with Welch's interval and p, and its skip mass by layer.
func TestSensitivity(t *testing.T) {
	local := []float64{10, 12, 11, 10, 12}
	got := Sensitivity("claim 9", "", "local", local, []PiSetting{
		{Label: "M skips (default)", Values: []float64{40, 42, 41, 40, 42}, SkipMass: []float64{0.25, 0.125}},
		{Label: "one skip", Values: []float64{10, 12, 11, 10, 12}, SkipMass: []float64{0.004, 0}},
	})
	if want := []string{"π setting", "mean ± s.e.", "difference from local (95 % CI)", "p", "skip mass by layer"}; !slices.Equal(got.Header, want) {
		t.Errorf("header %q, want %q", got.Header, want)
	}
	if len(got.Rows) != 2 {
		t.Fatalf("rows %q, want 2", got.Rows)
	}
	// +30 exactly, the same spread on both sides: s.e. of the difference 0.632, t = 47.4 at 8 d.f. (quantile 2.306).
	if want := []string{"M skips (default)", "41.00 ± 0.45", "+30 [+28.5, +31.5]", "4.3e-11", "0.250 / 0.125"}; !slices.Equal(got.Rows[0], want) {
		t.Errorf("default row %q, want %q", got.Rows[0], want)
	}
	if want := []string{"one skip", "11.00 ± 0.45", "+0 [-1.46, +1.46]", "1", "0.004 / 0.000"}; !slices.Equal(got.Rows[1], want) {
		t.Errorf("one-skip row %q, want %q", got.Rows[1], want)
	}
}
