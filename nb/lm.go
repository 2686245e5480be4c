package nb

import (
	"cmp"
	"fmt"
	"math"

	"github.com/ecpi-dev/ecpi/figure"
)

// LM is the language-model training that notebooks 01, 02, 04, 07 and 09 share at their own sizes: three layers of four
// heads (Heads, where set), a tenth of the steps warm-up to the peak learning rate and then a cosine decay, no dropout,
// and one evaluation of 64 batches at the end, on bytes or on the tokens of Tokenizer. The peak rate is each model's own,
// from its sweep over LMLearningRates (Experiment.Tune), so it is not part of the recipe.
type LM struct {
	Data                   string // the corpus (ecpi data list)
	Tokenizer              string // "" for bytes, or wordpiece: the corpus's own vocabulary of 8,192 (ecpi data baselines)
	N, Batch, Width, Steps int    // window length, windows a step, model width, training steps
	Heads                  int    // attention heads; 0 for four
}

// Recipe is the lm's training options. In quick mode they are a smoke test of the same code: 6 steps at n = 64 on the
// small opticks corpus, a quarter of the width, on the Go backend (for models this small XLA's compiling is most of a
// run).
func (lm LM) Recipe() string {
	tokens := ""
	if lm.Tokenizer != "" {
		tokens = " tokenizer=" + lm.Tokenizer
	}
	if Quick() {
		return fmt.Sprintf("data=%s%s n=%d dim=%d heads=2 layers=2 batch=4 steps=6 warmup=2 eval_every=0 eval_batches=2 reuse=true backend=go",
			lm.Corpus(), tokens, lm.WindowLength(), lm.Width/4)
	}
	return fmt.Sprintf("data=%s%s n=%d dim=%d heads=%d layers=3 batch=%d steps=%d warmup=%d schedule=cosine dropout=0 eval_every=0 eval_batches=64 reuse=true",
		lm.Corpus(), tokens, lm.WindowLength(), lm.Width, cmp.Or(lm.Heads, 4), lm.Batch, lm.Steps, lm.Steps/10)
}

// Corpus is the corpus the recipe trains on: Data, or opticks in quick mode.
func (lm LM) Corpus() string { return Pick("opticks", lm.Data) }

// WindowLength is the window length n the recipe trains at: N, or 64 in quick mode.
func (lm LM) WindowLength() int { return Pick(64, lm.N) }

// LMLearningRates are the peak learning rates every language model of the notebooks is swept over (Experiment.Tune,
// which extends the grid past an edge that wins), log-spaced around 8e-3, the rate that every model trained at before
// the protocol (an earlier sweep on dense attention put 8e-3 and 1.6e-2 within 0.01 bits per byte of each other).
func LMLearningRates() []float64 { return []float64{2e-3, 4e-3, 8e-3, 1.6e-2} }

// ByteBaselines are a corpus's byte n-gram bits per byte on its validation split, unigram to 4-gram (counts, from
// `data baselines`): the scale every language model's bits per byte is read against.
func ByteBaselines(corpus string) []float64 {
	var baselines struct {
		Bits []float64 `json:"bits_per_byte"`
	}
	found := Query("data baselines " + corpus)
	Must(0, found[len(found)-1].Decode(&baselines))
	return baselines.Bits
}

// TokenBaselines are a corpus's interpolated Kneser-Ney token n-gram bits per token on its validation split, unigram to
// 4-gram, in the WordPiece vocabulary trained on the corpus (`data baselines CORPUS tokenizer=wordpiece`): the floor of
// the token-level runs.
func TokenBaselines(corpus string) []float64 {
	var baselines struct {
		Bits []float64 `json:"bits_per_token"`
	}
	found := Query("data baselines " + corpus + " tokenizer=wordpiece")
	Must(0, found[len(found)-1].Decode(&baselines))
	return baselines.Bits
}

// BitsFrom is a run's validation loss on window positions from..n-1, in bits per byte (per token, for a run on
// tokens): the metric of the models that predict only the last positions of a window (the PerceiverAR family's
// latents), and of the others on the same positions.
func BitsFrom(from int) func(Trained) float64 {
	return func(r Trained) float64 { return r.LossFrom(from) / math.Ln2 }
}

// AllBits is a run's validation loss on every position it scores, in bits per byte.
func AllBits(r Trained) float64 { return cmp.Or(r.ValidBPC, r.ValidBPB) }

// ECPSizes fit ECP and the PerceiverAR family to a window of N positions as notebooks 01 and 02 compare them, in the
// authors' ratios, so that a small window keeps the papers' balance of cost and context.
type ECPSizes struct{ N int }

// HalfSegment is ECP's h: n/h = 16 half-segments, so ECP scores about 2h·n pairs, 12.5 % of dense attention's n²: the
// paper's ratio (n = 4096, h = 256), where at n = 256 and h = 64 it was 50 %.
func (s ECPSizes) HalfSegment() int { return s.N / 16 }

// Latents is the PerceiverAR family's number of latents l: a quarter of the window, the authors' PerceiverAR default
// (256 latents of 1,024 positions).
func (s ECPSizes) Latents() int { return s.N / 4 }

// FirstLatent is where the PerceiverAR family's latents start, n − l: the first position that every model of a
// comparison with that family is scored on (BitsFrom), the only ones it predicts.
func (s ECPSizes) FirstLatent() int { return s.N - s.Latents() }

// LossByPosition is the mean over runs of the valid loss (bits per byte, or
// per token for a run on tokens) by window position, averaged over bins of bin
// positions, each drawn at its first position. One position's loss swings by
// tenths of a bit with the bytes that happen to sit there, the same bytes under
// every model, while models differ by hundredths: unbinned, their curves cover
// one another.
func LossByPosition(label string, runs []Trained, bin int) figure.Series {
	if bin < 1 {
		panic(fmt.Sprintf("loss by position: bin %d must be at least 1", bin))
	}
	s := figure.Series{Name: label}
	if len(runs) == 0 || runs[0].Eval == nil {
		return s
	}
	positions := len(runs[0].Eval.ByPosition)
	for start := 0; start < positions; start += bin {
		end := min(start+bin, positions)
		var sum float64
		for _, r := range runs {
			for _, loss := range r.Eval.ByPosition[start:end] {
				sum += loss
			}
		}
		s.X = append(s.X, float64(runs[0].Eval.FirstPosition+start))
		s.Y = append(s.Y, sum/float64(len(runs)*(end-start))/math.Ln2)
	}
	return s
}
