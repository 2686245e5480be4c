package models

import (
	"math"

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
// Attention: context blocks of C/s that do not see each other.
// Compressed Double Attention runs it with s = 1 on the c compressed positions.
//
// Block form: one (C/s) x (C/s) block per context block, and one l x n block
// for the latents. Cost per head: C²/s + l·n scores.
type Split struct {
	Context       int // C: positions before the first latent
	Splits        int // s
	CausalContext bool
}

func (s Split) Name() string {
	if s.Splits == 1 {
		return "double"
	}
	return "ssplit"
}

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
	return int64(s.Context*s.blockSize()) + int64(latents)*int64(n)
}

func (s Split) Attend(q, k, v *graph.Node) *graph.Node {
	context := func(x *graph.Node) *graph.Node { return graph.SliceAxis(x, 2, graph.AxisRange(0, s.Context)) }
	contextOut := blockScores(context(q), context(k), context(v), blockSpec{size: s.blockSize()}, s.Allows, false).attend()
	latentQueries := graph.SliceAxis(q, 2, graph.AxisRangeToEnd(s.Context))
	latentOut := LatentAttention(latentQueries, k, v, s.Context)
	return graph.Concatenate([]*graph.Node{contextOut, latentOut}, 2)
}

// LatentAttention lets the l latent queries (absolute positions C..C+l-1) attend
// causally to all n keys: latent a sees keys j <= C + a. It is PerceiverAR's
// cross-attention and the latent half of Split. q: [B, H, l, d]; k, v: [B, H, n, d].
// Cost per head: l·n scores.
func LatentAttention(q, k, v *graph.Node, context int) *graph.Node {
	latents, n := q.Shape().Dim(2), k.Shape().Dim(2)
	scores := graph.Einsum("bhqd,bhkd->bhqk", q, k)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(q.Shape().Dim(3))))
	allows := func(_, latent, key int) bool { return key <= context+latent }
	mask := graph.InsertAxes(graph.Const(q.Graph(), maskTensor(1, latents, n, allows)), 0)
	return graph.Einsum("bhqk,bhkd->bhqd", softmaxWithin(scores, mask), v)
}
