package train

import (
	"math"
	"testing"
	"unicode/utf8"
)

func TestSparklineSurvivesDivergedLosses(t *testing.T) {
	line := Sparkline([]float64{3, 2, math.Inf(1), 1, math.NaN()}, 10)
	if utf8.RuneCountInString(line) != 5 {
		t.Fatalf("sparkline %q: want 5 columns", line)
	}
	runes := []rune(line)
	if runes[0] != '█' || runes[3] != '▁' || runes[2] != '█' || runes[4] != '█' {
		t.Fatalf("sparkline %q: want highest and non-finite values at the top bar, lowest at the bottom", line)
	}
}
