package models

import "math/bits"

// Cost counts what one model's attention computes, so cost claims are
// computed rather than asserted.
//
// Counting: Pairs is the number of query-key scores the block form computes
// per head in the first layer, padding slots of its blocks included (for ECP,
// one h x 2h block per half-segment: 2·h·n). CausalPairs counts only the pairs
// inside K(i), the ones that can carry weight (for ECP 3hn/2 - h² + n/2).
// The ratios divide by n² and by the n(n+1)/2 pairs of full causal attention.
// FLOPs are multiply-adds counted as 2: q·k (2·dh) and weights·v (2·dh) per
// pair and head, so 4·dh·H·pairs per layer.
//
// Pair counts are exact integers: n <= MaxSeqLen keeps every family's counts
// (a few n² at most) inside int64. FLOPs multiply them by widths and layers
// the options do not bound, so they are float64: never wrapped, exact up to
// 2^53 and then rounded.
type Cost struct {
	Model            string  `json:"model"`
	N                int     `json:"n"`
	Heads            int     `json:"heads"`
	HeadDim          int     `json:"head_dim"`
	Layers           int     `json:"layers"`
	Pairs            int64   `json:"pairs"`
	DensePairs       int64   `json:"dense_pairs"`
	Ratio            float64 `json:"ratio"`
	CausalPairs      int64   `json:"causal_pairs"`
	CausalDensePairs int64   `json:"causal_dense_pairs"`
	CausalRatio      float64 `json:"causal_ratio"`
	AttentionFLOPs   float64 `json:"attention_flops"`
	LayerPairs       []int64 `json:"layer_pairs"`
	ModelFLOPs       float64 `json:"model_attention_flops"`
	DenseModelFLOPs  float64 `json:"dense_model_attention_flops"`
}

// CostOf counts a validated config's attention cost.
func CostOf(cfg Config) Cost {
	r := cfg.Resolved()
	n := int64(r.SeqLen)
	headDim := r.Dim / r.Heads
	flopsPerPair := 4 * float64(headDim) * float64(r.Heads)
	layers := r.LayerPatterns()
	c := Cost{
		Model: r.Model, N: r.SeqLen, Heads: r.Heads, HeadDim: headDim, Layers: r.Layers,
		Pairs:            layers[0].Pattern.ScoredPairs(r.SeqLen),
		DensePairs:       n * n,
		CausalPairs:      layers[0].Pattern.AllowedPairs(r.Heads, r.SeqLen),
		CausalDensePairs: causalPairs(r.SeqLen),
	}
	c.Ratio = float64(c.Pairs) / float64(c.DensePairs)
	c.CausalRatio = float64(c.CausalPairs) / float64(c.CausalDensePairs)
	c.AttentionFLOPs = flopsPerPair * float64(c.Pairs)
	for _, layer := range layers {
		pairs := layer.Pattern.ScoredPairs(layer.SeqLen)
		c.LayerPairs = append(c.LayerPairs, pairs)
		c.ModelFLOPs += flopsPerPair * float64(pairs)
	}
	c.DenseModelFLOPs = flopsPerPair * float64(c.DensePairs) * float64(r.Layers)
	return c
}

// exactMean averages non-negative per-head counts, rounded down, summing
// them in 128 bits: a mean over any number of heads never overflows.
type exactMean struct{ hi, lo, weight uint64 }

// add counts value weight times.
func (m *exactMean) add(value, weight int64) {
	hi, lo := bits.Mul64(uint64(value), uint64(weight))
	var carry uint64
	m.lo, carry = bits.Add64(m.lo, lo, 0)
	m.hi, _ = bits.Add64(m.hi, hi, carry)
	m.weight += uint64(weight)
}

func (m *exactMean) mean() int64 {
	// The mean is at most the largest value (< 2^63), so the quotient fits and Div64 cannot panic.
	mean, _ := bits.Div64(m.hi, m.lo, m.weight)
	return int64(mean)
}
