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
// Block form: ECP's, for every head at once. Blocks of G/2 positions each
// score themselves and the block before, and any group, shifted or not, is
// two such blocks, so a query's group-mates all lie in those 2·(G/2) keys;
// a mask with a head axis keeps each head's own group. One block form serves
// both kinds of heads, with no padding for the shifted ones.
// Cost: G·n scores per head, ECP's at G = 2h.
type S2 struct {
	Group int // G
	Heads int // H, to know which heads are shifted
}

func (s S2) Name() string  { return "s2" }
func (s S2) PerHead() bool { return true }

func (s S2) shifted(head int) bool { return head >= s.Heads/2 }

// shift is where head's groups start: G/2 before the plain ones for the shifted heads.
func (s S2) shift(head int) int {
	if s.shifted(head) {
		return s.Group / 2
	}
	return 0
}

func (s S2) Allows(head, query, key int) bool {
	shift := s.shift(head)
	return key <= query && (key+shift)/s.Group == (query+shift)/s.Group
}

func (s S2) spec() blockSpec { return blockSpec{size: s.Group / 2, before: 1} }

func (s S2) ScoredPairs(n int) int64 { return s.spec().scoredPairs(n) }

// AllowedPairs: causal pairs within each group, averaged over the two kinds of heads.
func (s S2) AllowedPairs(heads, n int) int64 {
	var m exactMean
	plainHeads := int64(s.Heads / 2)
	m.add(groupPairs(n, s.Group, 0), plainHeads)
	m.add(groupPairs(n, s.Group, s.Group/2), int64(s.Heads)-plainHeads)
	return m.mean()
}

// groupPairs counts the causal pairs inside groups of `size` positions that
// start at -shift, over n positions.
func groupPairs(n, size, shift int) int64 {
	first := min(n, size-shift) // the first group is cut by the shift
	rest := n - first
	return causalPairs(first) + int64(rest/size)*causalPairs(size) + causalPairs(rest%size)
}

// mask is K(i) for every head: query and key positions come with a head axis
// of 1, and the result has one of H. The per-head shifts come from shift, the
// rule Allows states.
func (s S2) mask(query, key *graph.Node) *graph.Node {
	g := query.Graph()
	shifts := make([]int32, s.Heads)
	for head := range shifts {
		shifts[head] = int32(s.shift(head))
	}
	shift := graph.Reshape(graph.Const(g, shifts), 1, s.Heads, 1, 1, 1)
	group := func(position *graph.Node) *graph.Node {
		return graph.Div(graph.Add(position, shift), int32Scalar(g, s.Group))
	}
	// Padding keys sit at negative positions, where Div truncates towards zero; the block form masks them.
	return graph.LogicalAnd(graph.LessOrEqual(key, query), graph.Equal(group(key), group(query)))
}

func (s S2) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return blockForm(q, k, v, s.spec(), s.mask).attend(drop)
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
