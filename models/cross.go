package models

import "github.com/gomlx/gomlx/core/graph"

// Cross is PerceiverAR's layer-0 cross-attention: only the l latents
// (positions C..n-1) are queries, and latent i sees every key j <= i.
//
//	K(i) = { j : j <= i } for i >= C; no queries below C.
//
// Cost per head: l·n scores.
type Cross struct {
	Context int // C
}

func (x Cross) Name() string                  { return "cross" }
func (x Cross) PerHead() bool                 { return false }
func (x Cross) Allows(_, query, key int) bool { return query >= x.Context && key <= query }
func (x Cross) ScoredPairs(n int) int64       { return int64(n-x.Context) * int64(n) }
func (x Cross) RecomputesScores() bool        { return true }

// AllowedPairs: latent at position i sees i+1 keys.
func (x Cross) AllowedPairs(_, n int) int64 { return causalPairs(n) - causalPairs(x.Context) }

// Attend takes the queries of all n positions, or of the l latents only (the
// rows PerceiverAR projects), and returns the l latent rows.
func (x Cross) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	if q.Shape().Dim(2) == k.Shape().Dim(2) {
		q = graph.SliceAxis(q, 2, graph.AxisRangeToEnd(x.Context))
	}
	return LatentAttention(q, k, v, x.Context, drop)
}
