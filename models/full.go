package models

import (
	"github.com/gomlx/gomlx/core/graph"
)

// Full is dense attention, the baseline every sparse variant is measured against.
//
//	causal:        K(i) = { j : j <= i }
//	bidirectional: K(i) = { j : 0 <= j < n }
//
// Cost: n² scores per head (the causal half is masked, not skipped).
type Full struct {
	Causal bool
}

func (f Full) Name() string  { return "full" }
func (f Full) PerHead() bool { return false }

func (f Full) Allows(_, query, key int) bool { return !f.Causal || key <= query }

func (f Full) ScoredPairs(n int) int64 { return int64(n) * int64(n) }

func (f Full) AllowedPairs(_, n int) int64 {
	if f.Causal {
		return causalPairs(n)
	}
	return int64(n) * int64(n)
}

// Attend scores every pair: one block covering the whole sequence.
func (f Full) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	n := q.Shape().Dim(2)
	return blockScores(q, k, v, blockSpec{size: n}, f.mask).attend(drop)
}

func (f Full) mask(query, key *graph.Node) *graph.Node {
	if f.Causal {
		return graph.LessOrEqual(key, query)
	}
	return graph.GreaterOrEqual(key, graph.ScalarZero(key.Graph(), key.DType()))
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
