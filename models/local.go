package models

import "github.com/gomlx/gomlx/core/graph"

// Local is sliding-window attention, which the π-Attention paper calls
// "RingAttention" (ring-local windows).
//
//	causal:        K(i) = { j : i-k <= j <= i }
//	bidirectional: K(i) = { j : |i-j| <= k }
//
// Block form: blocks of k positions; each block scores itself and the previous
// block (and the next one when bidirectional), masked to the exact window.
// Cost: 2·k·n scores per head causal, 3·k·n bidirectional: linear in n.
type Local struct {
	Window int // k
	Causal bool
}

func (l Local) Name() string  { return "local" }
func (l Local) PerHead() bool { return false }

func (l Local) Allows(_, query, key int) bool {
	if l.Causal {
		return key <= query && query-key <= l.Window
	}
	return abs(query-key) <= l.Window
}

func (l Local) spec() blockSpec {
	spec := blockSpec{size: l.Window, before: 1}
	if !l.Causal {
		spec.after = 1
	}
	return spec
}

func (l Local) ScoredPairs(n int) int64 { return int64(l.spec().scoredPairs(n)) }

func (l Local) Attend(q, k, v *graph.Node) *graph.Node {
	return blockScores(q, k, v, l.spec(), l.Allows, false).attend()
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
