// Package models holds ecpi's attention patterns and the model families built
// from them. A pattern is an index set K(i) (which keys query i may attend to:
// the definition, used by dense references, masks, pictures and pair counts)
// plus its efficient block form (used for training). A family, registered by
// its own file, says which pattern each layer runs, which positions carry the
// loss, its options and their rules. Nothing here knows about training, the
// REPL or notebooks.
package models

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// Pattern is a self-attention variant over a whole sequence.
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
	// AllowedPairs counts the pairs inside K(i) over all queries of a sequence
	// of n tokens, averaged over heads: arithmetic, so it answers at once for
	// any n (tests check it against counting Allows).
	AllowedPairs(heads, n int) int64
	// Attend computes attention in block form. q, k, v: [B, H, n, headDim];
	// drop is applied to the attention weights while training (the zero
	// Dropout drops nothing).
	Attend(q, k, v *graph.Node, drop Dropout) *graph.Node
}

// Recomputing is implemented by the patterns computed by TiledAttention,
// whose backward pass recomputes the scores instead of keeping them: a
// training step holds a band of tiles at a time, not every score.
type Recomputing interface {
	RecomputesScores() bool
}

// Dropout drops attention weights while training, as the ECP authors do. Its
// mask is a hash of a seed and of each weight's coordinates, so a pattern can
// draw the same mask twice: the tiled dense form does, in its backward pass.
// The zero value drops nothing.
type Dropout struct {
	Rate float64
	Seed *graph.Node // uint32 scalar, drawn anew for every layer and step
}

func (d Dropout) active() bool { return d.Rate > 0 && d.Seed != nil }

// salted is the same dropout with a different mask for each salt, for
// weights of one layer kept in several tensors (apply hashes flat indices,
// which would repeat from one tensor to the next). Salt 0 is d itself.
func (d Dropout) salted(salt int) Dropout {
	if salt == 0 || !d.active() {
		return d
	}
	d.Seed = mixHash(d.Seed, graph.Scalar(d.Seed.Graph(), dtypes.Uint32, uint32(salt)))
	return d
}

// apply drops weights of any shape, hashing each one's flat index.
func (d Dropout) apply(weights *graph.Node) *graph.Node {
	if !d.active() {
		return weights
	}
	index := graph.IotaFull(weights.Graph(), shapes.Make(dtypes.Uint32, weights.Shape().Dimensions...))
	return d.keep(weights, index)
}

// applyAt drops weights [B, H, ..., queries, keys] given the positions of
// their queries and keys (int32, broadcastable to the weights).
func (d Dropout) applyAt(weights, query, key *graph.Node) *graph.Node {
	return d.where(d.keptAt(weights.Shape().Dimensions, query, key), weights)
}

// keptAt is applyAt's mask for weights of shape dims, to apply with where to
// more than one tensor (nil when nothing is dropped).
func (d Dropout) keptAt(dims []int, query, key *graph.Node) *graph.Node {
	if !d.active() {
		return nil
	}
	batchHead := make([]int, len(dims))
	for i := range batchHead {
		batchHead[i] = 1
	}
	batchHead[0], batchHead[1] = dims[0], dims[1]
	index := graph.Reshape(graph.IotaFull(query.Graph(), shapes.Make(dtypes.Uint32, dims[0], dims[1])), batchHead...)
	coords := mixHash(mixHash(index, graph.ConvertDType(query, dtypes.Uint32)), graph.ConvertDType(key, dtypes.Uint32))
	return d.kept(coords)
}

// keep zeroes the weights whose hashed coordinates fall below the rate and
// scales the rest by 1/(1-rate).
func (d Dropout) keep(weights, coords *graph.Node) *graph.Node {
	return d.where(d.kept(coords), weights)
}

// kept is true for the weights keep keeps. The seed stays a scalar into the
// hash, whose first step multiplies it: broadcast first, the Go backend would
// fill and multiply a tensor of the weights' size.
func (d Dropout) kept(coords *graph.Node) *graph.Node {
	hash := mixHash(d.Seed, coords)
	threshold := graph.Scalar(coords.Graph(), dtypes.Uint32, uint32(d.Rate*math.MaxUint32))
	return graph.GreaterOrEqual(hash, threshold)
}

// where scales the weights that kept keeps by 1/(1-rate) and zeroes the rest
// (all weights as they are when kept is nil).
func (d Dropout) where(kept, weights *graph.Node) *graph.Node {
	if kept == nil {
		return weights
	}
	scaled := graph.MulScalar(weights, 1/(1-d.Rate))
	return graph.Where(kept, scaled, graph.ZerosLike(weights))
}

// mixHash combines two uint32 values (broadcast) into a well-mixed one:
// a multiply-xor step and MurmurHash3's finaliser.
func mixHash(a, b *graph.Node) *graph.Node {
	x := graph.BitwiseXor(graph.MulScalar(a, 0x9e3779b1), b)
	x = graph.BitwiseXor(x, graph.BitwiseShiftRightLogicalScalar(x, 16))
	x = graph.MulScalar(x, 0x85ebca6b)
	x = graph.BitwiseXor(x, graph.BitwiseShiftRightLogicalScalar(x, 13))
	x = graph.MulScalar(x, 0xc2b2ae35)
	return graph.BitwiseXor(x, graph.BitwiseShiftRightLogicalScalar(x, 16))
}

// SkipKeys is implemented by patterns with a second kind of key besides the
// local ones (π-Attention's skips): pictures colour them, probes measure the
// attention mass on them.
type SkipKeys interface {
	// IsSkip reports j ∈ K(i) as a key of the second kind.
	IsSkip(head, query, key int) bool
}

// Gated is implemented by patterns whose attention a per-token, per-head gate
// α ∈ (0,1) [B, H, n] reshapes (π-Attention's fusion gate). Families that use
// one build the gate themselves; probes and references read it through here.
type Gated interface {
	// AttendGated is Attend with a gate (nil: α = 1/2).
	AttendGated(q, k, v, alpha *graph.Node, drop Dropout) *graph.Node
	// DenseWeightsGated is the attention as a dense [B, H, n, n] matrix, zero
	// outside K(i): the ground truth of AttendGated.
	DenseWeightsGated(q, k, alpha *graph.Node) *graph.Node
	// RowWeights are the weights of rows of scores [B, H, Q, K] over the keys
	// marked valid, of which those marked skip are of the second kind; alpha
	// [B, H, Q] or nil. Incremental decoding uses it on gathered keys.
	RowWeights(scores, alpha, valid, skip *graph.Node) *graph.Node
}

// DenseWeights is a pattern's attention as a dense [B, H, queries, keys]
// matrix, zero outside K(i); alpha is the gate of a Gated pattern (nil
// otherwise). Queries may be fewer than keys (PerceiverAR's latents, which sit
// at the end): query row r is position keys-queries+r. Tests and probes only.
func DenseWeights(p Pattern, q, k, alpha *graph.Node) *graph.Node {
	if g, ok := p.(Gated); ok {
		return g.DenseWeightsGated(q, k, alpha)
	}
	return denseWeights(q, k, p.Allows, nil)
}

// Reference computes a pattern with the dense n x n mask of its index set:
// the ground truth the block forms are tested against.
func Reference(p Pattern, q, k, v *graph.Node) *graph.Node {
	return graph.Einsum("bhqk,bhkd->bhqd", DenseWeights(p, q, k, nil), v)
}

// CountAllowed counts the pairs of K(i) one by one, averaged over heads: the
// definition AllowedPairs is tested against (small n only: it is O(H·n²)).
func CountAllowed(p Pattern, heads, n int) int64 {
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

// causalPairs is the number of pairs j <= i among n positions.
func causalPairs(n int) int64 { return int64(n) * int64(n+1) / 2 }
