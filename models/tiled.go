package models

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// This file computes dense attention in tiles with an online softmax, forward
// and backward (FlashAttention): no n x n score or mask tensor is built, and
// the backward pass recomputes the weights from the saved row log-sum-exp
// instead of keeping them. Each band of tiles is a node of its own, and the
// bands share no data, so XLA's CPU scheduler would compute every band's
// scores first and keep them all (n^2/2 floats per head: 3.2 GB at n = 8192,
// B = 2, H = 4, d = 32, forward+backward). Each band's queries are therefore
// made to depend on the band before (after), which lets one buffer serve band
// after band: peak resident memory 390, 650 and 1328 MB at n = 2048, 4096,
// 8192 (`ecpi bench attention variants=full memory=true`, XLA CPU,
// 2026-12-01; compiled code included), and n = 8192 runs 4x faster.
//
// Queries [B, H, nq, d] sit at positions queryStart, queryStart+1, ...; keys
// and values [B, H, nk, d] at 0, 1, .... Causal attention lets a query see the
// keys at or before its position. Tile pairs (query tile i, key tile j) are
// processed by diagonals o = j - i: all pairs of a diagonal are one batched
// matrix product, so the graph has O(tiles) nodes, and diagonals wholly above
// the causal boundary are skipped (half the work of full causal attention).

// maskedScore stands for -∞ in a masked score: finite, so that a row whose
// keys are all masked so far keeps exp(score - maximum) finite.
const maskedScore = -1e30

// denseTile is the tile size of the tiled dense attention: large enough for
// the matrix products to run near the machine's peak, small enough that one
// band of scores, [B, H, n/tile, tile, tile], stays a few tiles' worth of n·d.
const denseTile = 256

// tiling describes one tiled attention.
type tiling struct {
	tile         int
	nq, nk       int
	queryStart   int
	causal       bool
	queryTiles   int
	keyTiles     int
	firstOffset  int // the most negative diagonal j - i
	lastOffset   int // the largest diagonal j - i with an unmasked pair
	scale        float64
	drop         Dropout
	batch, heads int
}

func newTiling(q, k *graph.Node, queryStart int, causal bool, drop Dropout, tile int) tiling {
	dims := q.Shape().Dimensions
	nq, nk := dims[2], k.Shape().Dim(2)
	tile = min(tile, max(nq, nk))
	t := tiling{tile: tile, nq: nq, nk: nk, queryStart: queryStart, causal: causal, scale: 1 / math.Sqrt(float64(dims[3])),
		queryTiles: ceilDiv(nq, tile), keyTiles: ceilDiv(nk, tile), drop: drop, batch: dims[0], heads: dims[1]}
	t.firstOffset = -(t.queryTiles - 1)
	t.lastOffset = t.keyTiles - 1
	if causal { // the last key tile any query of tile i reaches is (queryStart + i·tile + tile - 1) / tile
		t.lastOffset = min(t.lastOffset, (queryStart+tile-1)/tile)
	}
	return t
}

// band is the query tiles [from, to) paired with key tiles [from+offset, to+offset).
type band struct{ offset, from, to int }

func (t tiling) bands() []band {
	var out []band
	for o := t.firstOffset; o <= t.lastOffset; o++ {
		from, to := max(0, -o), min(t.queryTiles, t.keyTiles-o)
		if from < to {
			out = append(out, band{o, from, to})
		}
	}
	return out
}

// tiles pads the sequence axis to whole tiles and cuts it: [B, H, len, d] -> [B, H, tiles, tile, d].
func (t tiling) tiles(x *graph.Node, count int) *graph.Node {
	dims := x.Shape().Dimensions
	x = padSeq(x, 2, 0, count*t.tile-dims[2])
	return graph.Reshape(x, dims[0], dims[1], count, t.tile, dims[3])
}

func sliceTiles(x *graph.Node, from, to int) *graph.Node {
	return graph.SliceAxis(x, 2, graph.AxisRange(from, to))
}

// positions are the query positions [1, 1, P, tile, 1] and key positions
// [1, 1, P, 1, tile] of a band's tiles.
func (t tiling) positions(g *graph.Graph, b band) (query, key *graph.Node) {
	pairs := b.to - b.from
	pair := graph.Iota(g, shapeInt32(1, 1, pairs, 1, 1), 2)
	start := graph.MulScalar(graph.AddScalar(pair, b.from), t.tile)
	query = graph.Add(graph.AddScalar(start, t.queryStart), graph.Iota(g, shapeInt32(1, 1, 1, t.tile, 1), 3))
	key = graph.Add(graph.AddScalar(start, b.offset*t.tile), graph.Iota(g, shapeInt32(1, 1, 1, 1, t.tile), 4))
	return query, key
}

// mask is true where a band's query sees its key: both inside their
// sequences and, causally, the key at or before the query. It is nil for a
// band where every query sees every key (most bands of a long causal
// sequence), which then skips masking.
func (t tiling) mask(g *graph.Graph, b band) (mask, query, key *graph.Node) {
	query, key = t.positions(g, b)
	// A tile's last key is at (i+offset)·tile + tile - 1, its first query at queryStart + i·tile.
	keyAfterQuery := t.causal && (b.offset+1)*t.tile-1 > t.queryStart
	paddedKeys := t.nk%t.tile != 0 && b.to+b.offset == t.keyTiles
	if !keyAfterQuery && !paddedKeys {
		// Padded queries may see keys here: their rows are cut off, and their output adjoint is zero.
		return nil, query, key
	}
	mask = graph.LogicalAnd(graph.LessThan(query, int32Scalar(g, t.queryStart+t.nq)), within(key, t.nk))
	if t.causal {
		mask = graph.LogicalAnd(mask, graph.LessOrEqual(key, query))
	}
	return mask, query, key
}

// after returns x plus zero times one element of dep: the same values, which
// the compiler can no longer compute before dep (x·0 is not folded for
// floats: it is NaN for an infinite x).
func after(x, dep *graph.Node) *graph.Node {
	one := graph.Reshape(graph.Slice(dep, graph.AxisRange(0, 1), graph.AxisRange(0, 1), graph.AxisRange(0, 1), graph.AxisRange(0, 1), graph.AxisRange(0, 1)))
	return graph.Add(x, graph.MulScalar(one, 0))
}

// where is x where mask holds and otherwise (a scalar), or x when mask is nil.
func where(mask, x *graph.Node, otherwise float64) *graph.Node {
	if mask == nil {
		return x
	}
	return graph.Where(mask, x, graph.BroadcastToDims(graph.Scalar(x.Graph(), x.DType(), otherwise), x.Shape().Dimensions...))
}

// scores is q·kᵀ/√d of a band: [B, H, P, tile, tile].
func (t tiling) scores(qTiles, kTiles *graph.Node, b band) *graph.Node {
	queries := sliceTiles(qTiles, b.from, b.to)
	keys := sliceTiles(kTiles, b.from+b.offset, b.to+b.offset)
	return graph.Einsum("bhpqd,bhpkd->bhpqk", graph.MulScalar(queries, t.scale), keys)
}

// replaceTiles returns acc with tiles [from, to) replaced by update.
func replaceTiles(acc, update *graph.Node, from, to int) *graph.Node {
	parts := []*graph.Node{}
	if from > 0 {
		parts = append(parts, sliceTiles(acc, 0, from))
	}
	parts = append(parts, update)
	if to < acc.Shape().Dim(2) {
		parts = append(parts, sliceTiles(acc, to, acc.Shape().Dim(2)))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return graph.Concatenate(parts, 2)
}

// addTiles returns acc with update added to tiles [from, to).
func addTiles(acc, update *graph.Node, from, to int) *graph.Node {
	return replaceTiles(acc, graph.Add(sliceTiles(acc, from, to), update), from, to)
}

// TiledAttention is softmax(q·kᵀ/√d)·v over every key (causal: every key at or
// before the query's position), computed in tiles with an online softmax and
// a backward pass that recomputes the weights: no n x n tensor in either.
// q: [B, H, nq, d] at positions queryStart...; k, v: [B, H, nk, d].
func TiledAttention(q, k, v *graph.Node, queryStart int, causal bool, drop Dropout) *graph.Node {
	return tiledAttention(q, k, v, queryStart, causal, drop, denseTile)
}

func tiledAttention(q, k, v *graph.Node, queryStart int, causal bool, drop Dropout, tile int) *graph.Node {
	t := newTiling(q, k, queryStart, causal, drop, tile)
	stop := graph.StopGradient
	out, logSumExp := t.forward(stop(q), stop(k), stop(v))
	nq := t.nq
	// The custom gradient rides on an identity of [out | q | k | v] along the
	// sequence axis: autodiff hands it the adjoint of out, it returns those of
	// q, k and v, and never looks inside the forward tiles.
	packed := graph.Concatenate([]*graph.Node{stop(out), q, k, v}, 2)
	carrier := graph.IdentityWithCustomGradient(packed, func(_, adjoint *graph.Node) *graph.Node {
		dOut := graph.SliceAxis(adjoint, 2, graph.AxisRange(0, nq))
		dq, dk, dv := t.backward(stop(q), stop(k), stop(v), out, logSumExp, dOut)
		return graph.Concatenate([]*graph.Node{graph.ZerosLike(out), dq, dk, dv}, 2)
	})
	return graph.SliceAxis(carrier, 2, graph.AxisRange(0, nq))
}

// forward runs the online softmax over the bands and returns the output and
// each query's log-sum-exp of scores [B, H, nq, 1].
func (t tiling) forward(q, k, v *graph.Node) (out, logSumExp *graph.Node) {
	g := q.Graph()
	qTiles, kTiles, vTiles := t.tiles(q, t.queryTiles), t.tiles(k, t.keyTiles), t.tiles(v, t.keyTiles)
	headDim := q.Shape().Dim(3)
	lowest := graph.Scalar(g, q.DType(), maskedScore)
	running := graph.BroadcastToDims(lowest, t.batch, t.heads, t.queryTiles, t.tile, 1) // row maximum
	total := graph.Zeros(g, shapeF32(t.batch, t.heads, t.queryTiles, t.tile, 1))        // Σ exp(score - maximum)
	acc := graph.Zeros(g, shapeF32(t.batch, t.heads, t.queryTiles, t.tile, headDim))
	for _, b := range t.bands() {
		scores := t.scores(qTiles, kTiles, b)
		mask, query, key := t.mask(g, b)
		scores = where(mask, scores, maskedScore)
		oldMax := sliceTiles(running, b.from, b.to)
		newMax := graph.Max(oldMax, graph.ReduceAndKeep(scores, graph.ReduceMax, -1))
		weights := where(mask, graph.Exp(graph.Sub(scores, newMax)), 0)
		decay := graph.Exp(graph.Sub(oldMax, newMax))
		sum := graph.Add(graph.Mul(sliceTiles(total, b.from, b.to), decay), graph.ReduceAndKeep(weights, graph.ReduceSum, -1))
		weights = t.drop.applyAt(weights, query, key)
		values := sliceTiles(vTiles, b.from+b.offset, b.to+b.offset)
		weighted := graph.Einsum("bhpqk,bhpkd->bhpqd", weights, values)
		acc = replaceTiles(acc, graph.Add(graph.Mul(sliceTiles(acc, b.from, b.to), decay), weighted), b.from, b.to)
		running = replaceTiles(running, newMax, b.from, b.to)
		total = replaceTiles(total, sum, b.from, b.to)
		qTiles = after(qTiles, sum) // the next band's scores wait for this one's
	}
	out = t.untile(graph.Div(acc, total), t.nq)
	logSumExp = t.untile(graph.Add(running, graph.Log(total)), t.nq)
	return out, logSumExp
}

// backward is FlashAttention's backward pass: per band, the weights are
// recomputed from the log-sum-exp, and the gradients of q, k and v gathered.
func (t tiling) backward(q, k, v, out, logSumExp, dOut *graph.Node) (dq, dk, dv *graph.Node) {
	g := q.Graph()
	qTiles, kTiles, vTiles := t.tiles(q, t.queryTiles), t.tiles(k, t.keyTiles), t.tiles(v, t.keyTiles)
	dOutTiles := t.tiles(dOut, t.queryTiles)
	lseTiles := t.tiles(logSumExp, t.queryTiles)
	rowDot := t.tiles(graph.ReduceAndKeep(graph.Mul(dOut, out), graph.ReduceSum, -1), t.queryTiles) // D = rowsum(dO ∘ O)
	dqTiles, dkTiles, dvTiles := graph.ZerosLike(qTiles), graph.ZerosLike(kTiles), graph.ZerosLike(vTiles)
	for _, b := range t.bands() {
		keysFrom, keysTo := b.from+b.offset, b.to+b.offset
		scores := t.scores(qTiles, kTiles, b)
		mask, query, key := t.mask(g, b)
		weights := where(mask, graph.Exp(graph.Sub(scores, sliceTiles(lseTiles, b.from, b.to))), 0)
		dropped := t.drop.applyAt(weights, query, key)
		dOutBand := sliceTiles(dOutTiles, b.from, b.to)
		dvTiles = addTiles(dvTiles, graph.Einsum("bhpqk,bhpqd->bhpkd", dropped, dOutBand), keysFrom, keysTo)
		dDropped := graph.Einsum("bhpqd,bhpkd->bhpqk", dOutBand, sliceTiles(vTiles, keysFrom, keysTo))
		dWeights := t.drop.applyAt(dDropped, query, key) // the same mask and scale as the forward pass
		dScores := graph.Mul(weights, graph.Sub(dWeights, sliceTiles(rowDot, b.from, b.to)))
		dScores = graph.MulScalar(dScores, t.scale)
		dqBand := graph.Einsum("bhpqk,bhpkd->bhpqd", dScores, sliceTiles(kTiles, keysFrom, keysTo))
		dkBand := graph.Einsum("bhpqk,bhpqd->bhpkd", dScores, sliceTiles(qTiles, b.from, b.to))
		dqTiles = addTiles(dqTiles, dqBand, b.from, b.to)
		dkTiles = addTiles(dkTiles, dkBand, keysFrom, keysTo)
		// Both inputs of the next band's n·tile products wait: its scores (q) and dO·vᵀ (dOut).
		qTiles, dOutTiles = after(qTiles, dkBand), after(dOutTiles, dkBand)
	}
	return t.untile(dqTiles, t.nq), t.untile(dkTiles, t.nk), t.untile(dvTiles, t.nk)
}

// untile is the inverse of tiles: [B, H, tiles, tile, d] -> [B, H, length, d].
func (t tiling) untile(x *graph.Node, length int) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.Reshape(x, dims[0], dims[1], dims[2]*dims[3], dims[4])
	return graph.SliceAxis(x, 2, graph.AxisRange(0, length))
}

func shapeF32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
