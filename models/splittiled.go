package models

import (
	"github.com/gomlx/gomlx/core/graph"
)

// SplitTiledAttention is TiledAttention for a sequence split across devices
// (train's parallel=sequence): the same online softmax and recomputing
// backward pass, in another order. TiledAttention's bands slice the sequence
// at offsets, which XLA's partitioner can only serve by gathering the whole
// sequence on every device; here the query tiles are a reshape of the
// sequence axis, which XLA keeps split, and each key tile in turn meets every
// query tile (the keys and values, n·d floats, are what the devices share).
// Causal tiles above the diagonal are computed and masked rather than
// skipped: twice TiledAttention's products, the price of the split. Dropout
// hashes the same (query, key) positions, so both forms drop the same weights.
// q, k, v: [B, H, n, d], queries and keys at positions 0, 1, ....
func SplitTiledAttention(q, k, v *graph.Node, causal bool, drop Dropout) *graph.Node {
	return splitTiledAttention(q, k, v, causal, drop, SplitTile)
}

// SplitTile is SplitTiledAttention's tile. A device holds one key tile's
// scores against its query tiles at a time, (n/N)·tile floats per head, so
// the tile is smaller than DenseTile: the training step of one dense layer
// at n = 4096 held 64.9 MiB per device on 2 devices and 38.2 on 4 with tiles
// of 128, 178.3 and 94.0 with tiles of 512 (B = 2, d = 64, 4 heads; one
// device, the tiled form: 219.7).
const SplitTile = 128

func splitTiledAttention(q, k, v *graph.Node, causal bool, drop Dropout, tile int) *graph.Node {
	t := newTiling(q, k, 0, causal, drop, tile, false)
	return onlineSoftmax(q, k, v, t.splitForward, t.splitBackward)
}

// keyTile is key tile j of x [B, H, tiles, tile, d]: [B, H, tile, d].
func keyTile(x *graph.Node, j int) *graph.Node {
	return graph.Squeeze(sliceTiles(x, j, j+1), 2)
}

// splitMask is true where the query tiles see key tile j (nil: everywhere),
// with the query positions [1, 1, tiles, tile, 1] and key positions
// [1, 1, 1, 1, tile] that dropout hashes.
func (t tiling) splitMask(chain *graph.Node, j int) (mask, query, key *graph.Node) {
	g := chain.Graph()
	query = graph.Add(graph.MulScalar(graph.Iota(g, shapeInt32(1, 1, t.queryTiles, 1, 1), 2), t.tile), graph.Iota(g, shapeInt32(1, 1, 1, t.tile, 1), 3))
	key = graph.AddScalar(graph.Iota(g, shapeInt32(1, 1, 1, 1, t.tile), 4), j*t.tile)
	paddedKeys := (j+1)*t.tile > t.nk
	if !t.causal && !paddedKeys {
		return nil, query, key
	}
	mask = within(key, t.nk)
	if t.causal {
		mask = graph.LogicalAnd(mask, graph.LessOrEqual(key, query))
	}
	return mask, query, key
}

// splitScores is q·kᵀ/√d of every query tile against key tile keys [B, H, tile, d]: [B, H, tiles, tile, tile].
func (t tiling) splitScores(qTiles, keys *graph.Node) *graph.Node {
	return graph.Einsum("bhpqd,bhkd->bhpqk", graph.MulScalar(qTiles, t.scale), keys)
}

// splitForward runs the online softmax over the key tiles and returns the
// output and each query's log-sum-exp of scores [B, H, n, 1].
func (t tiling) splitForward(q, k, v *graph.Node) (out, logSumExp *graph.Node) {
	g := q.Graph()
	qTiles, kTiles, vTiles := t.tiles(q, t.queryTiles), t.tiles(k, t.keyTiles), t.tiles(v, t.keyTiles)
	running := graph.BroadcastToDims(graph.Scalar(g, q.DType(), maskedScore), t.batch, t.heads, t.queryTiles, t.tile, 1)
	total := graph.Zeros(g, shapeF32(t.batch, t.heads, t.queryTiles, t.tile, 1))
	acc := graph.Zeros(g, shapeF32(t.batch, t.heads, t.queryTiles, t.tile, q.Shape().Dim(3)))
	for j := range t.keyTiles {
		mask, query, key := t.splitMask(qTiles, j)
		scores := where(mask, t.splitScores(qTiles, keyTile(kTiles, j)), maskedScore)
		newMax := graph.Max(running, graph.ReduceAndKeep(scores, graph.ReduceMax, -1))
		weights := where(mask, graph.Exp(graph.Sub(scores, newMax)), 0)
		decay := graph.Exp(graph.Sub(running, newMax))
		total = graph.Add(graph.Mul(total, decay), graph.ReduceAndKeep(weights, graph.ReduceSum, -1))
		weighted := graph.Einsum("bhpqk,bhkd->bhpqd", t.drop.applyAt(weights, query, key), keyTile(vTiles, j))
		acc = graph.Add(graph.Mul(acc, decay), weighted)
		running = newMax
		qTiles = after(qTiles, acc) // the next key tile's scores wait until this one's weights are spent
	}
	return t.untile(graph.Div(acc, total), t.nq), t.untile(graph.Add(running, graph.Log(total)), t.nq)
}

// splitBackward is FlashAttention's backward pass over the key tiles: the
// weights recomputed from the log-sum-exp, each key tile's gradients summed
// over every query tile.
func (t tiling) splitBackward(q, k, v, out, logSumExp, dOut *graph.Node) (dq, dk, dv *graph.Node) {
	qTiles, kTiles, vTiles := t.tiles(q, t.queryTiles), t.tiles(k, t.keyTiles), t.tiles(v, t.keyTiles)
	dOutTiles, lseTiles := t.tiles(dOut, t.queryTiles), t.tiles(logSumExp, t.queryTiles)
	rowDot := t.tiles(graph.ReduceAndKeep(graph.Mul(dOut, out), graph.ReduceSum, -1), t.queryTiles) // D = rowsum(dO ∘ O)
	dqTiles := graph.ZerosLike(qTiles)
	dkTiles, dvTiles := make([]*graph.Node, t.keyTiles), make([]*graph.Node, t.keyTiles)
	for j := range t.keyTiles {
		keys, values := keyTile(kTiles, j), keyTile(vTiles, j)
		mask, query, key := t.splitMask(qTiles, j)
		weights := where(mask, graph.Exp(graph.Sub(t.splitScores(qTiles, keys), lseTiles)), 0)
		kept := t.drop.keptAt(weights.Shape().Dimensions, query, key)
		dvTiles[j] = graph.Einsum("bhpqk,bhpqd->bhkd", t.drop.where(kept, weights), dOutTiles)
		dWeights := t.drop.where(kept, graph.Einsum("bhpqd,bhkd->bhpqk", dOutTiles, values))
		dScores := graph.MulScalar(graph.Mul(weights, graph.Sub(dWeights, rowDot)), t.scale)
		dqTiles = graph.Add(dqTiles, graph.Einsum("bhpqk,bhkd->bhpqd", dScores, keys))
		dkTiles[j] = graph.Einsum("bhpqk,bhpqd->bhkd", dScores, qTiles)
		// The next key tile's products wait until this one's weights are spent.
		for _, spent := range []*graph.Node{dqTiles, dkTiles[j], dvTiles[j]} {
			qTiles, dOutTiles = after(qTiles, spent), after(dOutTiles, spent)
		}
	}
	stack := func(parts []*graph.Node) *graph.Node { return graph.Stack(parts, 2) }
	return t.untile(dqTiles, t.nq), t.untile(stack(dkTiles), t.nk), t.untile(stack(dvTiles), t.nk)
}
