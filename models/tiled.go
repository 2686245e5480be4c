package models

import (
	"math"
	"slices"

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
// 2026-12-01, tiles of 256; compiled code included), and n = 8192 runs 4x
// faster.
//
// Queries [B, H, nq, d] sit at positions queryStart, queryStart+1, ...; keys
// and values [B, H, nk, d] at 0, 1, .... Causal attention lets a query see the
// keys at or before its position. Tile pairs (query tile i, key tile j) are
// processed by diagonals o = j - i: all pairs of a diagonal are one batched
// matrix product, so the graph has O(tiles) nodes, and diagonals wholly above
// the causal boundary are skipped (half the work of full causal attention).
//
// GoMLX's Go backend needs two changes to keep memory linear in n, because it
// runs every op as soon as its inputs are ready and keeps freed buffers in one
// pool per size class (four classes per power of two). First, it gathered
// every band's keys and values, and hashed every band's dropout mask, at the
// start (n²/2 · d floats, n²/2 hashes): so there those, too, wait for the
// band before. Second, bands as long as their diagonals come in as many sizes
// as there are diagonals, each size keeping its own freed buffers: so there
// the diagonals are folded, longest with shortest, into bands of one length
// (a causal sequence's diagonals of a and T - a tile pairs make T): half as
// many bands, and no extra work. Peak memory growth at n = 1024, 2048, 4096
// and 8192 (B = 2, H = 4, d = 32, forward+backward; `make bench-peer`, dense
// only, 2026-12-02): 90, 177, 384 and 798 MB, n^1.05, against 121, 298, 687
// and 1642 MB (n^1.25) before; at n = 16384, 1.7 GB against 4.3 (`ecpi bench
// attention variants=full memory=true backend=go`); in about the same time
// (2.96-3.03 s against 2.87-3.00 s at n = 8192, side by side). XLA plans its
// buffers when it compiles and reuses one for bands of every size, so there a
// band stays one diagonal and the graph stays as it was (folding would change
// the order of the online softmax's sums, and with it every trained result).

// maskedScore stands for -∞ in a masked score: finite, so that a row whose
// keys are all masked so far keeps exp(score - maximum) finite.
const maskedScore = -1e30

// DenseTile is the tile size of the tiled dense attention on XLA, and
// DenseTileGo on GoMLX's Go backend: large enough for the matrix products to
// run near the machine's peak, small enough that one band of scores,
// [B, H, n/tile, tile, tile], stays a few tiles' worth of n·d. The memory a
// tiled layer holds grows as its query rows times the tile.
//
// XLA compiles every band's kernels apart, so its compile time grows with
// the number of bands, 2n/tile. One layer, forward+backward, B = 2, H = 4,
// d = 32, Intel Xeon, 2026-12-03, 5 interleaved rounds (medians): tiles of
// 512 against 256 took 49 against 68 ms at n = 1024, 131 against 128 at 2048,
// 444 against 445 at 4096 and 1738 against 1917 at 8192, and compiled in
// 0.8-0.9 against 1.6-3.2 s at n = 1024 and 3.9-5.5 against 11-14 s at 8192;
// the process's peak at 8192, compile included, was 1056 against 1947 MB.
// Tiles of 1024 were slower (73-74 ms at n = 1024). The Go backend keeps 256:
// its memory was made linear at that size, and train's memory estimate is
// fitted to it.
const (
	DenseTile   = 512
	DenseTileGo = 256
)

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
	goBackend    bool // fold the diagonals and chain every band's inputs (see above)
}

func newTiling(q, k *graph.Node, queryStart int, causal bool, drop Dropout, tile int, goBackend bool) tiling {
	dims := q.Shape().Dimensions
	t := tileLayout(dims[2], k.Shape().Dim(2), queryStart, causal, tile, goBackend)
	t.scale, t.drop, t.batch, t.heads = 1/math.Sqrt(float64(dims[3])), drop, dims[0], dims[1]
	return t
}

// tileLayout is the geometry of a tiling: its tiles and diagonals.
func tileLayout(nq, nk, queryStart int, causal bool, tile int, goBackend bool) tiling {
	tile = min(tile, max(nq, nk))
	t := tiling{tile: tile, nq: nq, nk: nk, queryStart: queryStart, causal: causal,
		queryTiles: ceilDiv(nq, tile), keyTiles: ceilDiv(nk, tile), goBackend: goBackend}
	t.firstOffset = -(t.queryTiles - 1)
	t.lastOffset = t.keyTiles - 1
	if causal { // the last key tile any query of tile i reaches is (queryStart + i·tile + tile - 1) / tile
		t.lastOffset = min(t.lastOffset, (queryStart+tile-1)/tile)
	}
	return t
}

// segment is the query tiles [from, to) paired with key tiles
// [from+offset, to+offset): a diagonal, or a run of one.
type segment struct{ offset, from, to int }

func (s segment) pairs() int { return s.to - s.from }

// band is one batched matrix product: its segments' tile pairs side by side,
// in order. Two segments of a band may share query or key tiles (every
// diagonal of a causal sequence ends at its last query tile), so the online
// softmax and the gradients update the tiles segment after segment.
type band []segment

func (b band) pairs() int {
	total := 0
	for _, s := range b {
		total += s.pairs()
	}
	return total
}

// diagonals lists the diagonals that have a pair to compute, in offset order.
func (t tiling) diagonals() []segment {
	var out []segment
	for o := t.firstOffset; o <= t.lastOffset; o++ {
		from, to := max(0, -o), min(t.queryTiles, t.keyTiles-o)
		if from < to {
			out = append(out, segment{o, from, to})
		}
	}
	return out
}

// bands is one band per diagonal, or, on the Go backend, the diagonals paired
// longest with shortest into bands of one length.
func (t tiling) bands() []band {
	diagonals := t.diagonals()
	if !t.goBackend {
		out := make([]band, len(diagonals))
		for i, d := range diagonals {
			out[i] = band{d}
		}
		return out
	}
	capacity := 0
	for _, d := range diagonals {
		capacity = max(capacity, d.pairs())
	}
	sorted := slices.Clone(diagonals)
	slices.SortStableFunc(sorted, func(a, b segment) int { return b.pairs() - a.pairs() })
	var out []band
	for long, short := 0, len(sorted)-1; long <= short; long++ {
		b := band{sorted[long]}
		for short > long && b.pairs()+sorted[short].pairs() <= capacity {
			b = append(b, sorted[short])
			short--
		}
		out = append(out, b)
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

// concatTiles joins parts along the tile axis.
func concatTiles(parts []*graph.Node) *graph.Node {
	if len(parts) == 1 {
		return parts[0]
	}
	return graph.Concatenate(parts, 2)
}

// queries gathers a band's query tiles of x [B, H, tiles, tile, d], pair by pair.
func (b band) queries(x *graph.Node) *graph.Node {
	parts := make([]*graph.Node, len(b))
	for i, s := range b {
		parts[i] = sliceTiles(x, s.from, s.to)
	}
	return concatTiles(parts)
}

// keys gathers a band's key tiles of x, pair by pair.
func (b band) keys(x *graph.Node) *graph.Node {
	parts := make([]*graph.Node, len(b))
	for i, s := range b {
		parts[i] = sliceTiles(x, s.from+s.offset, s.to+s.offset)
	}
	return concatTiles(parts)
}

// split cuts x, a tensor over the band's pairs, into its segments' parts.
func (b band) split(x *graph.Node) []*graph.Node {
	if len(b) == 1 {
		return []*graph.Node{x}
	}
	parts, first := make([]*graph.Node, len(b)), 0
	for i, s := range b {
		parts[i] = sliceTiles(x, first, first+s.pairs())
		first += s.pairs()
	}
	return parts
}

// positions are the query positions [1, 1, P, tile, 1] and key positions
// [1, 1, P, 1, tile] of a band's tile pairs. On the Go backend they wait for
// chain, the band's queries, or that backend would hash every band's dropout
// mask at the start.
func (t tiling) positions(chain *graph.Node, b band) (query, key *graph.Node) {
	g := chain.Graph()
	queryStarts, keyStarts := make([]*graph.Node, len(b)), make([]*graph.Node, len(b))
	for i, s := range b {
		pair := graph.Iota(g, shapeInt32(1, 1, s.pairs(), 1, 1), 2)
		if t.goBackend {
			pair = after(pair, chain)
		}
		start := graph.MulScalar(graph.AddScalar(pair, s.from), t.tile)
		queryStarts[i] = graph.AddScalar(start, t.queryStart)
		keyStarts[i] = graph.AddScalar(start, s.offset*t.tile)
	}
	query = graph.Add(concatTiles(queryStarts), graph.Iota(g, shapeInt32(1, 1, 1, t.tile, 1), 3))
	key = graph.Add(concatTiles(keyStarts), graph.Iota(g, shapeInt32(1, 1, 1, 1, t.tile), 4))
	return query, key
}

// mask is true where a band's query sees its key: both inside their
// sequences and, causally, the key at or before the query. It is nil for a
// band where every query sees every key (most bands of a long causal
// sequence), which then skips masking.
func (t tiling) mask(chain *graph.Node, b band) (mask, query, key *graph.Node) {
	g := chain.Graph()
	query, key = t.positions(chain, b)
	if !slices.ContainsFunc(b, t.masked) {
		// Padded queries may see keys here: their rows are cut off, and their output adjoint is zero.
		return nil, query, key
	}
	mask = graph.LogicalAnd(graph.LessThan(query, int32Scalar(g, t.queryStart+t.nq)), within(key, t.nk))
	if t.causal {
		mask = graph.LogicalAnd(mask, graph.LessOrEqual(key, query))
	}
	return mask, query, key
}

// masked reports whether some query of a segment must not see some key of it.
func (t tiling) masked(s segment) bool {
	// A tile's last key is at (i+offset)·tile + tile - 1, its first query at queryStart + i·tile.
	keyAfterQuery := t.causal && (s.offset+1)*t.tile-1 > t.queryStart
	paddedKeys := t.nk%t.tile != 0 && s.to+s.offset == t.keyTiles
	return keyAfterQuery || paddedKeys
}

// after returns x plus zero times one element of dep: the same values, which
// the compiler can no longer compute before dep (x·0 is not folded for
// floats: it is NaN for an infinite x; the Go backend folds nothing, so there
// x may be an integer).
func after(x, dep *graph.Node) *graph.Node {
	first := make([]graph.SliceAxisSpec, dep.Rank())
	for i := range first {
		first[i] = graph.AxisRange(0, 1)
	}
	one := graph.Reshape(graph.Slice(dep, first...))
	if one.DType() != x.DType() {
		one = graph.ConvertDType(one, x.DType())
	}
	return graph.Add(x, graph.MulScalar(one, 0))
}

// where is x where mask holds and otherwise (a scalar), or x when mask is nil.
func where(mask, x *graph.Node, otherwise float64) *graph.Node {
	if mask == nil {
		return x
	}
	return graph.Where(mask, x, graph.BroadcastToDims(graph.Scalar(x.Graph(), x.DType(), otherwise), x.Shape().Dimensions...))
}

// scores is q·kᵀ/√d of a band's gathered query and key tiles: [B, H, P, tile, tile].
func (t tiling) scores(queries, keys *graph.Node) *graph.Node {
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
	goBackend := onGoBackend(q.Graph())
	tile := DenseTile
	if goBackend {
		tile = DenseTileGo
	}
	return tiledAttention(q, k, v, queryStart, causal, drop, tile, goBackend)
}

func tiledAttention(q, k, v *graph.Node, queryStart int, causal bool, drop Dropout, tile int, goBackend bool) *graph.Node {
	t := newTiling(q, k, queryStart, causal, drop, tile, goBackend)
	return onlineSoftmax(q, k, v, t.forward, t.backward)
}

// onlineSoftmax is attention computed by forward, which also returns each
// query's log-sum-exp of scores, with its gradients from backward, which
// recomputes the weights from it (FlashAttention).
func onlineSoftmax(q, k, v *graph.Node,
	forward func(q, k, v *graph.Node) (out, logSumExp *graph.Node),
	backward func(q, k, v, out, logSumExp, dOut *graph.Node) (dq, dk, dv *graph.Node)) *graph.Node {
	var logSumExp *graph.Node
	return withGradient([]*graph.Node{q, k, v},
		func(in []*graph.Node) *graph.Node {
			var out *graph.Node
			out, logSumExp = forward(in[0], in[1], in[2])
			return out
		},
		func(out, dOut *graph.Node) []*graph.Node {
			stop := graph.StopGradient
			dq, dk, dv := backward(stop(q), stop(k), stop(v), out, logSumExp, dOut)
			return []*graph.Node{dq, dk, dv}
		})
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
		scores := t.scores(b.queries(qTiles), b.keys(kTiles))
		mask, query, key := t.mask(qTiles, b)
		scores = where(mask, scores, maskedScore)
		// Segment after segment, so that a segment sharing query tiles with an
		// earlier one starts from the maxima that one left.
		oldMax, newMax := make([]*graph.Node, len(b)), make([]*graph.Node, len(b))
		for i, rowMax := range b.split(graph.ReduceAndKeep(scores, graph.ReduceMax, -1)) {
			oldMax[i] = sliceTiles(running, b[i].from, b[i].to)
			newMax[i] = graph.Max(oldMax[i], rowMax)
			running = replaceTiles(running, newMax[i], b[i].from, b[i].to)
		}
		weights := where(mask, graph.Exp(graph.Sub(scores, concatTiles(newMax))), 0)
		rowSums := b.split(graph.ReduceAndKeep(weights, graph.ReduceSum, -1))
		weights = t.drop.applyAt(weights, query, key)
		weighted := b.split(graph.Einsum("bhpqk,bhpkd->bhpqd", weights, b.keys(vTiles)))
		var sum *graph.Node
		for i, s := range b {
			decay := graph.Exp(graph.Sub(oldMax[i], newMax[i]))
			sum = graph.Add(graph.Mul(sliceTiles(total, s.from, s.to), decay), rowSums[i])
			acc = replaceTiles(acc, graph.Add(graph.Mul(sliceTiles(acc, s.from, s.to), decay), weighted[i]), s.from, s.to)
			total = replaceTiles(total, sum, s.from, s.to)
		}
		qTiles = after(qTiles, sum) // the next band's scores wait for this one's
		if t.goBackend {
			kTiles, vTiles = after(kTiles, sum), after(vTiles, sum)
		}
	}
	out = t.untile(graph.Div(acc, total), t.nq)
	logSumExp = t.untile(graph.Add(running, graph.Log(total)), t.nq)
	return out, logSumExp
}

// backward is FlashAttention's backward pass: per band, the weights are
// recomputed from the log-sum-exp, and the gradients of q, k and v gathered.
func (t tiling) backward(q, k, v, out, logSumExp, dOut *graph.Node) (dq, dk, dv *graph.Node) {
	qTiles, kTiles, vTiles := t.tiles(q, t.queryTiles), t.tiles(k, t.keyTiles), t.tiles(v, t.keyTiles)
	dOutTiles := t.tiles(dOut, t.queryTiles)
	lseTiles := t.tiles(logSumExp, t.queryTiles)
	rowDot := t.tiles(graph.ReduceAndKeep(graph.Mul(dOut, out), graph.ReduceSum, -1), t.queryTiles) // D = rowsum(dO ∘ O)
	dqTiles, dkTiles, dvTiles := graph.ZerosLike(qTiles), graph.ZerosLike(kTiles), graph.ZerosLike(vTiles)
	for _, b := range t.bands() {
		queries, keys := b.queries(qTiles), b.keys(kTiles) // each gathered once, for the scores and a gradient
		scores := t.scores(queries, keys)
		mask, query, key := t.mask(qTiles, b)
		weights := where(mask, graph.Exp(graph.Sub(scores, b.queries(lseTiles))), 0)
		kept := t.drop.keptAt(weights.Shape().Dimensions, query, key)
		dropped := t.drop.where(kept, weights)
		dOutBand := b.queries(dOutTiles)
		dvBand := transposedProduct(dropped, dOutBand)
		dDropped := graph.Einsum("bhpqd,bhpkd->bhpqk", dOutBand, b.keys(vTiles))
		dWeights := t.drop.where(kept, dDropped) // the same mask and scale as the forward pass
		dScores := graph.Mul(weights, graph.Sub(dWeights, b.queries(rowDot)))
		dScores = graph.MulScalar(dScores, t.scale)
		dqBand := graph.Einsum("bhpqk,bhpkd->bhpqd", dScores, keys)
		dkBand := transposedProduct(dScores, queries)
		dqParts, dkParts, dvParts := b.split(dqBand), b.split(dkBand), b.split(dvBand)
		for i, s := range b {
			dqTiles = addTiles(dqTiles, dqParts[i], s.from, s.to)
			dkTiles = addTiles(dkTiles, dkParts[i], s.from+s.offset, s.to+s.offset)
			dvTiles = addTiles(dvTiles, dvParts[i], s.from+s.offset, s.to+s.offset)
		}
		// Both inputs of the next band's n·tile products wait: its scores (q) and dO·vᵀ (dOut).
		qTiles, dOutTiles = after(qTiles, dkBand), after(dOutTiles, dkBand)
		if t.goBackend {
			kTiles, vTiles = after(kTiles, dkBand), after(vTiles, dkBand)
		}
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
