package models

import "github.com/gomlx/gomlx/core/graph"

// Pattern is a self-attention variant over a whole sequence: its index set
// K(i) (the definition, used by dense references, masks and diagrams) and its
// efficient block form (used for training).
type Pattern interface {
	// Name is the variant's name as the command language spells it.
	Name() string
	// Allows is K(i): whether query i attends to key j in head h.
	Allows(head, query, key int) bool
	// PerHead reports whether K(i) differs between heads.
	PerHead() bool
	// ScoredPairs is the number of query-key scores the block form computes
	// per head for a sequence of n tokens (padding slots included).
	ScoredPairs(n int) int64
	// Attend computes attention in block form. q, k, v: [B, H, n, headDim].
	Attend(q, k, v *graph.Node) *graph.Node
}

// Reference computes a pattern with the dense n x n mask of its index set:
// the ground truth the block forms are tested against.
func Reference(p Pattern, q, k, v *graph.Node) *graph.Node {
	if pi, ok := p.(Pi); ok {
		return pi.ReferenceGated(q, k, v, nil) // the mix fusion is not a plain softmax over K(i)
	}
	return denseAttention(q, k, v, p.Allows, nil)
}

// AllowedPairs counts the query-key pairs inside K(i) over all queries (the
// pairs that can carry attention weight), averaged over heads when K(i)
// differs between heads.
func AllowedPairs(p Pattern, heads, n int) int64 {
	if !p.PerHead() {
		heads = 1
	}
	var count int64
	for head := range heads {
		for i := range n {
			for j := range n {
				if p.Allows(head, i, j) {
					count++
				}
			}
		}
	}
	return count / int64(heads)
}
