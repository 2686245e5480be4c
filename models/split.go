package models

import (
	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// Split is the attention of the ECP paper's intermediate designs, which keep all
// n = C + l tokens (C of history, then l latents) in every layer:
//
//	latent  i >= C: K(i) = { j : j <= i }
//	context i <  C: K(i) = { j : floor(j/b) = floor(i/b) }, b = C/s   (and j <= i with CausalContext)
//
// With s = 1 it is Double Attention (the context attends to all of itself;
// the authors' code leaves it bidirectional). With s > 1 it is s-Split Double
// Attention: context blocks of C/s that do not see each other. Compressed
// Double Attention runs it with s = 1 on the c compressed positions.
//
// Block form: one (C/s) x (C/s) block per context block, and one l x n block
// for the latents. Cost per head: C²/s + l·n scores.
type Split struct {
	Context       int // C: positions before the first latent
	Splits        int // s
	CausalContext bool
	// KeepContextWeights turns dropout off on the context's attention weights
	// (Compressed Double Attention's authors drop only the latents').
	KeepContextWeights bool
}

func (s Split) Name() string  { return "split" }
func (s Split) PerHead() bool { return false }

func (s Split) blockSize() int { return s.Context / s.Splits }

func (s Split) Allows(_, query, key int) bool {
	if query >= s.Context {
		return key <= query
	}
	if s.CausalContext && key > query {
		return false
	}
	return key < s.Context && key/s.blockSize() == query/s.blockSize()
}

func (s Split) ScoredPairs(n int) int64 {
	latents := n - s.Context
	return int64(s.Context)*int64(s.blockSize()) + int64(latents)*int64(n)
}

func (s Split) AllowedPairs(_, n int) int64 {
	block := int64(s.blockSize())
	context := int64(s.Splits) * block * block
	if s.CausalContext {
		context = int64(s.Splits) * causalPairs(s.blockSize())
	}
	return context + causalPairs(n) - causalPairs(s.Context)
}

func (s Split) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	context := func(x *graph.Node) *graph.Node { return graph.SliceAxis(x, 2, graph.AxisRange(0, s.Context)) }
	contextDrop := drop
	if s.KeepContextWeights {
		contextDrop = Dropout{}
	}
	contextOut := blockForm(context(q), context(k), context(v), blockSpec{size: s.blockSize()}, s.contextMask).attend(contextDrop)
	latentQueries := graph.SliceAxis(q, 2, graph.AxisRangeToEnd(s.Context))
	latentOut := LatentAttention(latentQueries, k, v, s.Context, drop)
	return graph.Concatenate([]*graph.Node{contextOut, latentOut}, 2)
}

// contextMask: within one block every key is allowed, or every earlier one.
func (s Split) contextMask(query, key *graph.Node) *graph.Node {
	if s.CausalContext {
		return graph.LessOrEqual(key, query)
	}
	return graph.GreaterOrEqual(key, int32Scalar(key.Graph(), 0))
}

// contextOptions are the options the designs with a context part share.
type contextOptions struct {
	latentOptions
	CausalContext bool
}

func contextTable[O any](field func(*O) *contextOptions) option.Table[O] {
	return option.Table[O]{
		latentsOption(func(o *O) *int { return &field(o).Latents }),
		option.Bool("causal_context", "context queries attend causally (the authors' code: bidirectional)", func(o *O) *bool { return &field(o).CausalContext }),
	}
}

// splitAttention is the authors' attention of Double and s-Split Double
// Attention: shared normalised keys/values, the layer's Split pattern, one
// output projection.
func splitAttention(b *Block, x *graph.Node) *graph.Node {
	q, kv := sharedKeyValues(b, x, x, 0)
	b.Observe(q, kv, nil)
	return b.Output("output", b.Attend(q, kv, kv))
}
