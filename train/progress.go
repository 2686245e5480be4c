package train

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Sparkline draws values as one line of block characters, resampled to at
// most width columns (each the mean of its share of values).
func Sparkline(values []float64, width int) string {
	if len(values) == 0 || width < 1 {
		return ""
	}
	cols := min(width, len(values))
	means := make([]float64, cols)
	lo, hi := math.Inf(1), math.Inf(-1)
	for c := range cols {
		from, to := c*len(values)/cols, (c+1)*len(values)/cols
		for _, v := range values[from:to] {
			means[c] += v / float64(to-from)
		}
		if !math.IsInf(means[c], 0) && !math.IsNaN(means[c]) {
			lo, hi = min(lo, means[c]), max(hi, means[c])
		}
	}
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	var b strings.Builder
	for _, m := range means {
		i := 0
		switch {
		case math.IsNaN(m) || math.IsInf(m, 0):
			i = len(levels) - 1 // a diverged loss shows as the top bar, not a crash
		case hi > lo:
			i = int(math.Round((m - lo) / (hi - lo) * float64(len(levels)-1)))
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

// ProgressBar returns a progress callback that redraws one line on w
// (normally stderr): step, bar, loss, learning rate, tokens/s and time left;
// evaluations get a line of their own.
func ProgressBar(w io.Writer) func(Progress) {
	return func(p Progress) {
		const width = 24
		done := width * p.Step / max(p.Steps, 1)
		bar := strings.Repeat("=", done) + strings.Repeat(" ", width-done)
		eta := time.Duration(0)
		if p.Step > 0 {
			eta = p.Elapsed / time.Duration(p.Step) * time.Duration(p.Steps-p.Step)
		}
		fmt.Fprintf(w, "\r%*d/%d [%s] loss %.4f  lr %.2e  |g| %.2f  %.0f tok/s  eta %s   ",
			len(fmt.Sprint(p.Steps)), p.Step, p.Steps, bar, p.Loss, p.LR, p.GradNorm, p.TokensPerS, eta.Round(time.Second))
		if p.Eval != nil {
			fmt.Fprintf(w, "\n  step %d: %s\n", p.Step, p.Eval.Summary())
		}
	}
}

// Summary is the evaluation on one line.
func (e *Eval) Summary() string {
	s := fmt.Sprintf("%s loss %.4f", e.Split, e.Loss)
	if e.PPL > 0 {
		s += fmt.Sprintf("  ppl %.3f", e.PPL)
	}
	if e.BPC > 0 {
		s += fmt.Sprintf("  bpc %.4f", e.BPC)
	}
	if e.Windows == 0 {
		s += fmt.Sprintf("  acc %.2f%%", 100*e.Acc)
	}
	return s
}
