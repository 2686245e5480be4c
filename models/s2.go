package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

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
	return s.overHeads(s.plainSpec().scoredPairs(n), s.shiftedSpec().scoredPairs(n))
}

// AllowedPairs: causal pairs within each group, averaged over the two kinds of heads.
func (s S2) AllowedPairs(heads, n int) int64 {
	plain := groupPairs(n, s.Group, 0)
	shifted := groupPairs(n, s.Group, s.Group/2)
	return s.overHeads(plain, shifted)
}

// overHeads averages a count of the plain heads (the first half) and one of
// the shifted heads over all heads.
func (s S2) overHeads(plain, shifted int64) int64 {
	var m exactMean
	plainHeads := int64(s.Heads / 2)
	m.add(plain, plainHeads)
	m.add(shifted, int64(s.Heads)-plainHeads)
	return m.mean()
}

// groupPairs counts the causal pairs inside groups of `size` positions that
// start at -shift, over n positions.
func groupPairs(n, size, shift int) int64 {
	first := min(n, size-shift) // the first group is cut by the shift
	rest := n - first
	return causalPairs(first) + int64(rest/size)*causalPairs(size) + causalPairs(rest%size)
}

func (s S2) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	plainHeads := s.Heads / 2
	var outputs []*graph.Node
	if plainHeads > 0 {
		outputs = append(outputs, s.attendHeads(q, k, v, 0, plainHeads, s.plainSpec(), drop))
	}
	outputs = append(outputs, s.attendHeads(q, k, v, plainHeads, s.Heads, s.shiftedSpec(), drop))
	if len(outputs) == 1 {
		return outputs[0]
	}
	return graph.Concatenate(outputs, 1)
}

// attendHeads runs one kind of head (plain or shifted) on heads [from, to):
// within a block every earlier position of the group is allowed.
func (s S2) attendHeads(q, k, v *graph.Node, from, to int, spec blockSpec, drop Dropout) *graph.Node {
	pick := func(x *graph.Node) *graph.Node { return graph.SliceAxis(x, 1, graph.AxisRange(from, to)) }
	causal := func(query, key *graph.Node) *graph.Node { return graph.LessOrEqual(key, query) }
	return blockForm(pick(q), pick(k), pick(v), spec, causal).attend(drop)
}

// s2Options are the S2 family's own options.
type s2Options struct {
	Group int
}

func init() {
	Register(Spec[s2Options]{
		Name: "s2", Order: 3, Benchmark: true,
		Paper:   "LongLoRA (arXiv 2309.12307)",
		Summary: "shifted sparse attention: groups of G, half the heads shifted by G/2 (same cost as ECP at G = 2h)",
		Options: option.Table[s2Options]{
			option.Int("group", "group size G (even, must divide n; 0 = n/4)", func(o *s2Options) *int { return &o.Group }, option.AtLeast(0)),
		},
		Resolve: func(c Config, o *s2Options) {
			if o.Group == 0 {
				o.Group = c.SeqLen / 4
			}
		},
		Validate: func(c Config, o s2Options) error {
			if o.Group < 2 || o.Group%2 != 0 || c.SeqLen%o.Group != 0 {
				return fmt.Errorf("group size group=%d must be even and divide sequence length n=%d", o.Group, c.SeqLen)
			}
			return nil
		},
		Layers: func(c Config, o s2Options) []Layer {
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: S2{Group: o.Group, Heads: c.Heads}, SeqLen: c.SeqLen, RoPE: true}
			}
			return layers
		},
		BenchWindow: func(o *s2Options, w int) { o.Group = 2 * w },
	})
}
