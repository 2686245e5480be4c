package models

import (
	"github.com/gomlx/gomlx/core/graph"
)

// Full is dense attention, the baseline every sparse variant is measured against.
//
//	causal:        K(i) = { j : j <= i }
//	bidirectional: K(i) = { j : 0 <= j < n }
//
// Cost: n² scores per head counted (the tiled form skips the tiles wholly
// above the causal diagonal, about half).
type Full struct {
	Causal bool
}

func (f Full) Name() string  { return "full" }
func (f Full) PerHead() bool { return false }

func (f Full) Allows(_, query, key int) bool { return !f.Causal || key <= query }

func (f Full) ScoredPairs(n int) int64 { return int64(n) * int64(n) }
func (f Full) RecomputesScores() bool  { return true }

func (f Full) AllowedPairs(_, n int) int64 {
	if f.Causal {
		return causalPairs(n)
	}
	return int64(n) * int64(n)
}

// Attend is dense attention in tiles with an online softmax, forward and
// backward (TiledAttention): no n x n tensor, and causal tiles above the
// diagonal skipped.
func (f Full) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return TiledAttention(q, k, v, 0, f.Causal, drop)
}

// AttendSplit is Attend for a sequence split across devices
// (SplitTiledAttention): the same values, in a form XLA partitions.
func (f Full) AttendSplit(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return SplitTiledAttention(q, k, v, f.Causal, drop)
}

func init() {
	Register(Spec[struct{}]{
		Name: "full", Order: 1, Benchmark: true, Bidirectional: true,
		Paper:   "both (Transformer baseline)",
		Summary: "dense attention: every earlier position (every position with causal=false)",
		Layers: func(c Config, _ struct{}) []Layer {
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: Full{Causal: c.Causal}, SeqLen: c.SeqLen, RoPE: true}
			}
			return layers
		},
		ReceptiveField: func(_ Config, _ struct{}, i, _ int) int { return i },
	})
}
