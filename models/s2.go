package models

import "github.com/gomlx/gomlx/core/graph"

// S2 is LongLoRA's shifted sparse attention (arXiv 2309.12307) with group size G.
// Heads 0..H/2-1 attend causally within groups of G tokens; the other heads
// within groups shifted by G/2, so information crosses group borders:
//
//	heads <  H/2: K(i) = { j <= i : floor(j/G) = floor(i/G) }
//	heads >= H/2: K(i) = { j <= i : floor((j+G/2)/G) = floor((i+G/2)/G) }
//
// No wrap-around: LongLoRA's rolled variant lets the last group see the first
// tokens, which leaks the future in a causal model.
//
// Block form: one G x G causal block per group; the shifted heads use the same
// blocks on the sequence padded with G/2 empty positions in front.
// Cost: G·n scores per head (plus one group for the shifted heads' padding);
// with G = 2h it equals ECP's.
type S2 struct {
	Group int // G
	Heads int // H, to know which heads are shifted
}

func (s S2) Name() string  { return "s2" }
func (s S2) PerHead() bool { return true }

func (s S2) shifted(head int) bool { return head >= s.Heads/2 }

func (s S2) Allows(head, query, key int) bool {
	if key > query {
		return false
	}
	if s.shifted(head) {
		half := s.Group / 2
		return (key+half)/s.Group == (query+half)/s.Group
	}
	return key/s.Group == query/s.Group
}

func (s S2) plainSpec() blockSpec   { return blockSpec{size: s.Group} }
func (s S2) shiftedSpec() blockSpec { return blockSpec{size: s.Group, shift: s.Group / 2} }

// ScoredPairs counts per head, averaged over the two kinds of heads.
func (s S2) ScoredPairs(n int) int64 {
	plainHeads := s.Heads / 2
	total := plainHeads*s.plainSpec().scoredPairs(n) + (s.Heads-plainHeads)*s.shiftedSpec().scoredPairs(n)
	return int64(total / s.Heads)
}

func (s S2) Attend(q, k, v *graph.Node) *graph.Node {
	plainHeads := s.Heads / 2
	var outputs []*graph.Node
	if plainHeads > 0 {
		outputs = append(outputs, s.attendHeads(q, k, v, 0, plainHeads, s.plainSpec()))
	}
	outputs = append(outputs, s.attendHeads(q, k, v, plainHeads, s.Heads, s.shiftedSpec()))
	if len(outputs) == 1 {
		return outputs[0]
	}
	return graph.Concatenate(outputs, 1)
}

// attendHeads runs one kind of head (plain or shifted) on heads [from, to).
func (s S2) attendHeads(q, k, v *graph.Node, from, to int, spec blockSpec) *graph.Node {
	pick := func(x *graph.Node) *graph.Node { return graph.SliceAxis(x, 1, graph.AxisRange(from, to)) }
	allows := func(_, query, key int) bool { return s.Allows(from, query, key) }
	return blockScores(pick(q), pick(k), pick(v), spec, allows, false).attend()
}
