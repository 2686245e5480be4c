package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

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
// n = 4096, h = 256). Counting only the pairs inside K(i) gives 3hn/2 - h² + n/2
// when h divides n.
//
// The family follows the authors' ECPAttentionTransformer: one projection
// serves as keys and values (no bias, no norm), RoPE on queries and keys/values
// in layer 0 only, two output projections (one for half-segment 0, which has
// no previous half, one for the rest), loss on every position. Two options
// undo those choices one at a time, to measure what each costs against dense
// attention (which rotates every layer and projects keys and values apart):
// rope=every and kv=separate.
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

func (e ECP) ScoredPairs(n int) int64 { return e.spec().scoredPairs(n) }

// AllowedPairs: each half-segment sees itself causally and, after the first,
// the whole previous half-segment.
func (e ECP) AllowedPairs(_, n int) int64 {
	h, full, rest := int64(e.HalfSegment), int64(n/e.HalfSegment), int64(n%e.HalfSegment)
	total := full*causalPairs(e.HalfSegment) + causalPairs(int(rest))
	if full > 0 {
		total += (full-1)*h*h + rest*h
	}
	return total
}

func (e ECP) mask(query, key *graph.Node) *graph.Node {
	h := int32Scalar(query.Graph(), e.HalfSegment)
	queryHalf, keyHalf := graph.Div(query, h), graph.Div(key, h)
	return graph.LogicalAnd(graph.LessOrEqual(key, query), graph.GreaterOrEqual(keyHalf, graph.AddScalar(queryHalf, -1)))
}

func (e ECP) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return blockForm(q, k, v, e.spec(), e.mask).attend(drop)
}

// ecpOptions are the ECP family's own options.
type ecpOptions struct {
	HalfSegment int
	RoPE        string // ropeFirst (the authors') or ropeEvery
	KV          string // kvShared (the authors') or kvSeparate
}

// The values of the ECP options that depart from the authors' code.
const (
	ropeFirst, ropeEvery = "first", "every"
	kvShared, kvSeparate = "shared", "separate"
)

// kvOption is the kv option of ECP and PerceiverAR: the authors' one projection
// for keys and values, or one each.
func kvOption[O any](field func(*O) *string) option.Field[O] {
	return option.Choice("kv", "one projection serves as keys and values (the authors' code), or one each", []string{kvShared, kvSeparate}, field)
}

func init() {
	Register(Spec[ecpOptions]{
		Name: "ecp", Order: 4, Benchmark: true, Headline: true, Default: true,
		Paper:    "ECP (arXiv 2412.06106)",
		Summary:  "Efficient Context Propagating Perceiver: paired half-segments, history refined every layer",
		Defaults: ecpOptions{HalfSegment: 64, RoPE: ropeFirst, KV: kvShared},
		Options: option.Table[ecpOptions]{
			option.Int("half_segment", "half-segment h: a query sees its own half-segment causally and the previous one whole (must divide n; the authors' code calls it a segment)",
				func(o *ecpOptions) *int { return &o.HalfSegment }, option.AtLeast(1)).Alias("segment"),
			option.Choice("rope", "rotary positions in the first layer only (the authors' code) or in every layer", []string{ropeFirst, ropeEvery},
				func(o *ecpOptions) *string { return &o.RoPE }),
			kvOption(func(o *ecpOptions) *string { return &o.KV }),
		},
		Validate: func(c Config, o ecpOptions) error {
			if c.SeqLen%o.HalfSegment != 0 {
				return fmt.Errorf("half-segment half_segment=%d must divide sequence length n=%d", o.HalfSegment, c.SeqLen)
			}
			return nil
		},
		Layers: func(c Config, o ecpOptions) []Layer {
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: ECP{HalfSegment: o.HalfSegment}, SeqLen: c.SeqLen, RoPE: i == 0 || o.RoPE == ropeEvery,
					Attention: ecpAttention(o.KV == kvSeparate)}
			}
			return layers
		},
		BenchWindow: func(o *ecpOptions, w int) { o.HalfSegment = w },
		ReceptiveField: func(c Config, o ecpOptions, i, layers int) int {
			first := max(0, i/o.HalfSegment-layers) * o.HalfSegment
			return i - first
		},
	})
}

// ecpAttention is the authors' ECPAttention: one projection serves as keys and
// values (unless separateKV), RoPE on both where the layer rotates, and two
// output projections.
func ecpAttention(separateKV bool) func(b *Block, x *graph.Node) *graph.Node {
	return func(b *Block, x *graph.Node) *graph.Node {
		q := b.Rotate(b.Heads(b.Project("query", x)))
		var k, v *graph.Node
		if separateKV {
			k, v = b.Rotate(b.Heads(b.Project("key", x))), b.Heads(b.Project("value", x))
		} else {
			k = b.Rotate(b.Heads(b.Project("key_value", x)))
			v = k
		}
		b.Observe(q, k, nil)
		return ecpOutputs(b, x, b.Attend(q, k, v))
	}
}

// ecpOutputs projects half-segment 0's rows (which have no previous half) with
// their own output projection and the rest with another.
func ecpOutputs(b *Block, x, out *graph.Node) *graph.Node {
	halfSegment := b.Layer.Pattern.(ECP).HalfSegment
	if b.Decoding() { // one row: the projection of its half-segment
		first := b.Output("output_first", out)
		if b.Model.Config.SeqLen == halfSegment {
			return first
		}
		rest := b.Output("output_rest", out)
		inFirst := graph.LessThan(b.Row(), int32Scalar(x.Graph(), halfSegment))
		return graph.Where(inFirst, first, rest)
	}
	first := b.Output("output_first", graph.SliceAxis(out, 2, graph.AxisRange(0, halfSegment)))
	if out.Shape().Dim(2) == halfSegment {
		return first
	}
	rest := b.Output("output_rest", graph.SliceAxis(out, 2, graph.AxisRangeToEnd(halfSegment)))
	return graph.Concatenate([]*graph.Node{first, rest}, 1)
}
