package models

import "github.com/gomlx/gomlx/core/graph"

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

// Attend is the dense computation itself: for full attention the reference is
// the efficient form.
func (f Full) Attend(q, k, v *graph.Node) *graph.Node {
	return denseAttention(q, k, v, f.Allows, nil)
}
