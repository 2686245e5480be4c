package train

import (
	"fmt"
	"math"
	"strings"
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

// Summary is the evaluation on one line.
func (e *Eval) Summary() string {
	if e.Recall != nil {
		return fmt.Sprintf("%s %s", e.Split, e.recallText())
	}
	s := fmt.Sprintf("%s loss %.4f", e.Split, e.Loss)
	if e.PPL > 0 {
		s += fmt.Sprintf("  ppl %.3f", e.PPL)
	}
	s += e.bitsText()
	if e.Windows == 0 {
		s += fmt.Sprintf("  acc %.2f%%", 100*e.Acc)
	}
	return s
}

// bitsText is a language model's loss in bits: per character at byte level,
// per token and per byte of text with a tokenizer of words.
func (e *Eval) bitsText() string {
	switch {
	case e.BPC > 0:
		return fmt.Sprintf("  bpc %.4f", e.BPC)
	case e.BPB > 0:
		return fmt.Sprintf("  bits/token %.4f  bits/byte %.4f", e.BitsPerToken, e.BPB)
	}
	return ""
}

// recallText is image-text retrieval's recall in both directions.
func (e *Eval) recallText() string {
	return fmt.Sprintf("recall@1 image→text %.1f%% text→image %.1f%%, recall@5 %.1f%% %.1f%% (pool of %d)",
		100*e.Recall["image_to_text@1"], 100*e.Recall["text_to_image@1"], 100*e.Recall["image_to_text@5"], 100*e.Recall["text_to_image@5"], e.Count)
}
