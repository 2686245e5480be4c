package models

import "github.com/gomlx/gomlx/core/graph"

// ECP is the attention of the Efficient Context Propagating Perceiver
// (arXiv 2412.06106): the sequence is cut into half-segments of h tokens and
// every half-segment attends to the previous one fully and to itself causally.
//
//	K(i) = { j : floor(j/h) ∈ { floor(i/h)-1, floor(i/h) } and j <= i }
//
// Half-segment 0 attends causally to itself only. Each layer reaches one more
// half-segment back, so after L layers position i depends on tokens from
// half-segment floor(i/h)-L onward: the whole history is refined in every layer.
//
// Block form: one h x 2h score block per half-segment (its previous
// half-segment's keys, then its own); half-segment 0's previous half is padding.
// Cost: 2·h·n scores per head, i.e. 2h/n = 2/S of full attention (12.5 % at
// n = 4096, h = 256). Counting only the pairs inside K(i) gives 3hn/2 - h² + n/2.
type ECP struct {
	HalfSegment int // h
}

func (e ECP) Name() string  { return "ecp" }
func (e ECP) PerHead() bool { return false }

func (e ECP) Allows(_, query, key int) bool {
	queryHalf, keyHalf := query/e.HalfSegment, key/e.HalfSegment
	return key <= query && (keyHalf == queryHalf || keyHalf == queryHalf-1)
}

func (e ECP) spec() blockSpec { return blockSpec{size: e.HalfSegment, before: 1} }

func (e ECP) ScoredPairs(n int) int64 { return int64(e.spec().scoredPairs(n)) }

func (e ECP) Attend(q, k, v *graph.Node) *graph.Node {
	return blockScores(q, k, v, e.spec(), e.Allows, false).attend()
}
