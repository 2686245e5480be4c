package models

import (
	"math"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// This file holds the block form that every sparse variant shares: cut the
// sequence into blocks, let each block of queries score only a few
// neighbouring blocks of keys, and mask inside those blocks to the exact index
// set K(i). No n x n tensor is ever built, so the cost is
// n * (before+1+after) * blockSize score entries per head: linear in n at fixed
// block size. Masks are computed in the graph from the positions of each
// query row and key slot (iota comparisons), never stored as constants.
//
// Tensors use the [batch, heads, seq, headDim] layout throughout.

// IndexSet is K(i) for one head: whether query position i may attend to key
// position j. Positions are those of the unpadded sequence.
type IndexSet func(head, query, key int) bool

// blockSpec says which key blocks a query block scores.
type blockSpec struct {
	size   int // positions per block
	before int // how many previous blocks each query block sees
	after  int // how many following blocks (bidirectional patterns)
}

func (s blockSpec) keysPerBlock() int { return (s.before + 1 + s.after) * s.size }

// productsAsSums reports blocks of so few scores that their products are
// better done as broadcast multiplies and sums: XLA's CPU backend runs a
// batched dot as one small matrix product per block, whose fixed cost then
// dominates (π's skip blocks are M rows by 2M keys). The Go backend, which
// fuses nothing, is faster with its dot.
func (s blockSpec) productsAsSums(g *graph.Graph) bool {
	return tinyBlocks(s.size, s.keysPerBlock(), g)
}

// tinyBlocks is productsAsSums for blocks of rows x keys scores.
func tinyBlocks(rows, keys int, g *graph.Graph) bool {
	return rows*keys <= tinyBlockScores && !onGoBackend(g)
}

const tinyBlockScores = 64

// onGoBackend reports whether g is built for GoMLX's pure-Go backend.
func onGoBackend(g *graph.Graph) bool { return g.Backend().String() == "go" }

// windowSpec is the block form of a window of k keys behind each query (and k
// ahead when bidirectional). Query blocks of s positions see the ceil(k/s)
// blocks before them, so each query scores about k+s keys: blocks of k waste
// half the scores of a causal window on keys out of reach. Smaller blocks
// waste less but make smaller products, so s stays at least minWindowBlock.
func windowSpec(window int, causal bool) blockSpec {
	size := ceilDiv(window, max(1, window/minWindowBlock))
	spec := blockSpec{size: size, before: ceilDiv(window, size)}
	if !causal {
		spec.after = spec.before
	}
	return spec
}

// minWindowBlock is where smaller blocks stop paying on XLA's CPU backend,
// which runs a batched product as one small matrix product per block. Measured
// 2026-12-02 (one local layer, forward+backward, B = 2, H = 4, dh = 32): with
// window 256 at n = 4096, blocks of 256, 128, 64 and 32 took 126-133, 82-87,
// 75-76 and 98-103 ms; with window 32 at n = 256 (B = 8, dh = 16), blocks of
// 32 took 4.0-4.3 ms and of 16, 4.6-6.4.
const minWindowBlock = 64

// numBlocks is the number of blocks covering n positions.
func (s blockSpec) numBlocks(n int) int { return ceilDiv(n, s.size) }

// scoredPairs counts the score entries the block form computes per head.
func (s blockSpec) scoredPairs(n int) int64 {
	return int64(s.numBlocks(n)) * int64(s.size) * int64(s.keysPerBlock())
}

// maskFunc is K(i) in the graph: given the int32 positions of the query rows
// [1, 1, nb, size, 1] and of the key slots [1, 1, nb, 1, keys] of a block
// form, the boolean mask (broadcastable to the scores; it may add a head or
// channel axis 1). Positions outside the sequence are masked by the caller.
type maskFunc func(query, key *graph.Node) *graph.Node

// blocked is one block form: its query, key and value blocks and the mask of
// their scores. The scores themselves are made where they are used
// (jointAttention writes its own products; see scores).
type blocked struct {
	spec   blockSpec
	n      int
	mask   *graph.Node // broadcastable to the scores; true where key ∈ K(query)
	values *graph.Node // [B, H, numBlocks, keysPerBlock, headDim]
	// queries (scaled by 1/√d) and keys the scores are made of, in blocks.
	queries, keys *graph.Node
}

// blockForm cuts q, k, v [B, H, n, headDim] into query blocks, each with its
// neighbour key and value blocks, and masks their scores to K(i).
func blockForm(q, k, v *graph.Node, spec blockSpec, allows maskFunc) *blocked {
	n := q.Shape().Dim(2)
	headDim := q.Shape().Dim(3)
	qBlocks := toBlocks(graph.MulScalar(q, 1/math.Sqrt(float64(headDim))), spec)
	kBlocks := neighbourBlocks(toBlocks(k, spec), spec)
	vBlocks := neighbourBlocks(toBlocks(v, spec), spec)
	query, key := spec.positions(q.Graph(), n)
	inside := graph.LogicalAnd(within(query, n), within(key, n))
	mask := graph.LogicalAnd(inside, allows(query, key))
	return &blocked{spec: spec, n: n, mask: mask, values: vBlocks, queries: qBlocks, keys: kBlocks}
}

// scores are the block form's scaled query-key products [B, H, numBlocks,
// size, keysPerBlock], with autodiff's gradient, for the attentions that take
// softmax and product apart (π's mix fusion, the tests' references).
func (b *blocked) scores() *graph.Node {
	if b.spec.productsAsSums(b.queries.Graph()) {
		return summedScoreProducts(b.queries, b.keys)
	}
	return scoreProducts(b.queries, b.keys)
}

// scoreDims are the dimensions of the scores: [B, H, numBlocks, size, keysPerBlock].
func (b *blocked) scoreDims() []int {
	return append(slices.Clone(b.queries.Shape().Dimensions[:4]), b.keys.Shape().Dim(3))
}

// positions are the sequence positions of a block form's query rows
// [1, 1, nb, size, 1] and key slots [1, 1, nb, 1, keysPerBlock] (padding
// slots get positions outside [0, n)).
func (s blockSpec) positions(g *graph.Graph, n int) (query, key *graph.Node) {
	nb := s.numBlocks(n)
	block := graph.Iota(g, shapes.Make(dtypes.Int32, 1, 1, nb, 1, 1), 2)
	row := graph.Iota(g, shapes.Make(dtypes.Int32, 1, 1, 1, s.size, 1), 3)
	slot := graph.Iota(g, shapes.Make(dtypes.Int32, 1, 1, 1, 1, s.keysPerBlock()), 4)
	start := graph.MulScalar(block, s.size)
	query = graph.Add(start, row)
	key = graph.AddScalar(graph.Add(start, slot), -s.before*s.size)
	return query, key
}

// within is 0 <= position < n.
func within(position *graph.Node, n int) *graph.Node {
	g := position.Graph()
	return graph.LogicalAnd(graph.GreaterOrEqual(position, graph.Scalar(g, dtypes.Int32, 0)),
		graph.LessThan(position, graph.Scalar(g, dtypes.Int32, n)))
}

// toBlocks pads the sequence axis with zeros at the end and cuts it into
// blocks: [B, H, n, d] -> [B, H, numBlocks, size, d].
func toBlocks(x *graph.Node, spec blockSpec) *graph.Node {
	dims := x.Shape().Dimensions
	n := dims[2]
	padded := spec.numBlocks(n) * spec.size
	x = padSeq(x, 2, 0, padded-n)
	return graph.Reshape(x, dims[0], dims[1], spec.numBlocks(n), spec.size, dims[3])
}

// neighbourBlocks concatenates, for every block, the `before` previous blocks,
// itself and the `after` next ones (zero blocks beyond the ends):
// [B, H, nb, size, d] -> [B, H, nb, keysPerBlock, d].
func neighbourBlocks(blocks *graph.Node, spec blockSpec) *graph.Node {
	numBlocks := blocks.Shape().Dim(2)
	padded := padSeq(blocks, 2, spec.before, spec.after)
	parts := make([]*graph.Node, 0, spec.before+1+spec.after)
	for offset := 0; offset <= spec.before+spec.after; offset++ {
		parts = append(parts, graph.SliceAxis(padded, 2, graph.AxisRange(offset, offset+numBlocks)))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return graph.Concatenate(parts, 3)
}

// padSeq adds `front` and `back` zero entries along axis.
func padSeq(x *graph.Node, axis, front, back int) *graph.Node {
	if front == 0 && back == 0 {
		return x
	}
	dims := x.Shape().Dimensions
	var parts []*graph.Node
	if front > 0 {
		frontDims := append([]int(nil), dims...)
		frontDims[axis] = front
		parts = append(parts, graph.Zeros(x.Graph(), shapes.Make(x.DType(), frontDims...)))
	}
	parts = append(parts, x)
	if back > 0 {
		backDims := append([]int(nil), dims...)
		backDims[axis] = back
		parts = append(parts, graph.Zeros(x.Graph(), shapes.Make(x.DType(), backDims...)))
	}
	return graph.Concatenate(parts, axis)
}

// weigh multiplies attention weights (shaped like the scores) with the value
// blocks and returns [B, H, n, headDim] in sequence order.
func (b *blocked) weigh(weights *graph.Node) *graph.Node {
	var out *graph.Node
	if b.spec.productsAsSums(weights.Graph()) {
		out = summedValueProducts(weights, b.values)
	} else {
		out = valueProducts(weights, b.values)
	}
	return fromBlocks(out, b.n)
}

// fromBlocks undoes toBlocks: [B, H, nb, size, d] -> [B, H, n, d].
func fromBlocks(x *graph.Node, n int) *graph.Node {
	dims := x.Shape().Dimensions
	seq := graph.Reshape(x, dims[0], dims[1], dims[2]*dims[3], dims[4])
	return graph.SliceAxis(seq, 2, graph.AxisRange(0, n))
}

// attend is plain softmax attention over the block form.
func (b *blocked) attend(drop Dropout) *graph.Node {
	return jointAttention([]attentionPart{b.part(drop)})
}

// part is the block form as one part of a joint attention.
func (b *blocked) part(drop Dropout) attentionPart {
	rows := queryRows{toQueries: b.perQuery, fromQueries: b.fromPerQuery}
	return attentionPart{queries: b.queries, keys: b.keys, values: b.values, mask: b.mask, rows: rows, drop: drop}
}

// attendBlocks is softmax attention within each block, the mask's keys only:
// queries [B, H, nb, m, d] (already scaled by 1/√d) against keys and values
// [B, H, nb, keys, d], dropout on the weights; it returns [B, H, nb, m, d].
func attendBlocks(queries, keys, values, mask *graph.Node, drop Dropout) *graph.Node {
	return jointAttention([]attentionPart{{queries: queries, keys: keys, values: values, mask: mask, rows: sameRows, drop: drop}})
}

// attentionPart is one block form's share of every query's keys in
// jointAttention, in its own layout: queries [B, H', nb, m, d] (scaled by
// 1/√d), keys and values [B, H', nb, keys, d], the mask broadcastable to
// their scores, rows mapping per-query tensors [B, H, n, x] to and from the
// layout, and an optional per-query logit offset [B, H, n, 1] (a scalar is a
// constant).
type attentionPart struct {
	queries, keys, values, mask *graph.Node
	bias                        *graph.Node
	rows                        queryRows
	drop                        Dropout
}

// learnsBias reports whether the part's bias is a tensor that takes a gradient.
func (p attentionPart) learnsBias() bool { return p.bias != nil && p.bias.Rank() > 0 }

// inputs are the part's differentiable tensors; bind is its inverse.
func (p attentionPart) inputs() []*graph.Node {
	in := []*graph.Node{p.queries, p.keys, p.values}
	if p.learnsBias() {
		in = append(in, p.bias)
	}
	return in
}

func (p attentionPart) bind(in []*graph.Node) (attentionPart, []*graph.Node) {
	p.queries, p.keys, p.values, in = in[0], in[1], in[2], in[3:]
	if p.learnsBias() {
		p.bias, in = in[0], in[1:]
	}
	return p, in
}

// jointAttention is one softmax over the keys of all parts, each scored and
// weighed in its own layout, and the product with their values: [B, H, n, d].
//
// Forward and backward are written out as FlashAttention's, without tiles,
// for fewer passes over the score blocks than autodiff of softmax then
// product makes: the exponentials are left unnormalised (the output rows
// are divided instead), and the backward takes each row's Σ w·dw as
// dOut·out, so every row scaling lands on [n, d] tensors; only one number
// per query (maximum, sum) moves between the layouts. A row with no allowed
// key in any part (padding, which the layouts cut off) gets meaningless
// weights, as in softmaxWithin.
func jointAttention(parts []attentionPart) *graph.Node {
	var inputs []*graph.Node
	for _, p := range parts {
		inputs = append(inputs, p.inputs()...)
	}
	exps := make([]*graph.Node, len(parts))
	dropped := make([]*graph.Node, len(parts)) // exps after dropout, which the backward reads again
	var inverse *graph.Node                    // 1 / Σ exp, per query
	return withGradient(inputs,
		func(in []*graph.Node) *graph.Node {
			bound := make([]attentionPart, len(parts))
			logits := make([]*graph.Node, len(parts))
			var highest *graph.Node
			for i, p := range parts {
				bound[i], in = p.bind(in)
				logits[i] = blockProducts(bound[i].queries, bound[i].keys)
				if p.bias != nil {
					logits[i] = graph.Add(logits[i], p.rows.from(bound[i].bias))
				}
				logits[i] = maskedLogits(logits[i], p.mask)
				partHighest := p.rows.toQueries(graph.ReduceAndKeep(logits[i], graph.ReduceMax, -1))
				if highest == nil {
					highest = partHighest
				} else {
					highest = graph.Max(highest, partHighest)
				}
			}
			var total, out *graph.Node
			for i, p := range bound {
				exps[i] = graph.Exp(graph.Sub(logits[i], p.rows.fromQueries(highest)))
				dropped[i] = p.drop.apply(exps[i])
				partOut := p.rows.toQueries(weighBlocks(dropped[i], p.values))
				if total == nil {
					total, out = p.rows.sum(exps[i]), partOut
				} else {
					total, out = graph.Add(total, p.rows.sum(exps[i])), graph.Add(out, partOut)
				}
			}
			inverse = graph.Reciprocal(total)
			return graph.Mul(out, inverse)
		},
		func(out, dOut *graph.Node) []*graph.Node {
			scaled := graph.Mul(dOut, inverse)                                         // dOut / Σ exp
			rowDot := graph.ReduceAndKeep(graph.Mul(scaled, out), graph.ReduceSum, -1) // Σ w·dw / Σ exp
			var grads []*graph.Node
			for i, p := range parts {
				queries, keys, values := graph.StopGradient(p.queries), graph.StopGradient(p.keys), graph.StopGradient(p.values)
				partDOut := p.rows.fromQueries(scaled)
				dDropped := blockProducts(partDOut, values)
				dScores := graph.Mul(exps[i], graph.Sub(p.drop.apply(dDropped), p.rows.fromQueries(rowDot)))
				grads = append(grads, weighBlocks(dScores, keys), transposedBlocks(dScores, queries), transposedBlocks(dropped[i], partDOut))
				if p.learnsBias() {
					grads = append(grads, p.rows.sum(dScores))
				}
			}
			return grads
		})
}

// blockProducts is a·bᵀ per block, a [B, H, nb, m, d], b [B, H, nb, keys, d];
// weighBlocks is w·v, w [B, H, nb, m, keys]; transposedBlocks is wᵀ·x, x
// [B, H, nb, m, d]. Blocks of at most tinyBlockScores scores are broadcast
// multiplies and sums on XLA (see productsAsSums).
func blockProducts(a, b *graph.Node) *graph.Node {
	if tinyBlocks(a.Shape().Dim(3), b.Shape().Dim(3), a.Graph()) {
		return summedScoreProducts(a, b)
	}
	return plainScoreProducts(a, b)
}

func weighBlocks(w, v *graph.Node) *graph.Node {
	if tinyBlocks(w.Shape().Dim(3), w.Shape().Dim(4), w.Graph()) {
		return summedValueProducts(w, v)
	}
	return plainValueProducts(w, v)
}

func transposedBlocks(w, x *graph.Node) *graph.Node {
	if tinyBlocks(w.Shape().Dim(3), w.Shape().Dim(4), w.Graph()) {
		return graph.ReduceSum(graph.Mul(graph.InsertAxes(w, -1), graph.InsertAxes(x, 4)), 3)
	}
	return transposedProduct(w, x)
}

// summedScoreProducts and summedValueProducts are plainScoreProducts and
// plainValueProducts as broadcast multiplies and sums, for tiny blocks.
func summedScoreProducts(a, b *graph.Node) *graph.Node {
	return graph.ReduceSum(graph.Mul(graph.InsertAxes(a, 4), graph.InsertAxes(b, 3)), -1)
}

func summedValueProducts(w, v *graph.Node) *graph.Node {
	return graph.ReduceSum(graph.Mul(graph.InsertAxes(w, -1), graph.InsertAxes(v, 3)), 4)
}

// softmaxWithin is the training-path softmax over the keys a mask allows: the
// mask becomes an additive bias of -1e9 and the backend's fused softmax does the
// rest, a few passes over the scores instead of MaskedSoftmax's eight. A row
// with no allowed key (only padding rows, which are sliced away) gets
// meaningless weights rather than zeros.
func softmaxWithin(scores, mask *graph.Node) *graph.Node {
	return graph.Softmax(maskedLogits(scores, mask), -1)
}

// maskedLogits adds -1e9 to the scores the mask leaves out.
func maskedLogits(scores, mask *graph.Node) *graph.Node {
	g := scores.Graph()
	bias := graph.Where(mask, graph.ScalarZero(g, scores.DType()), graph.Scalar(g, scores.DType(), -1e9))
	return graph.Add(scores, bias)
}

// queryRows maps one value per query, [B, H, n, 1], to and from a block
// form's own layout (padding rows get 0 there).
type queryRows struct {
	toQueries, fromQueries func(*graph.Node) *graph.Node
}

// from puts per-query values into the layout; a scalar stays as it is.
func (r queryRows) from(perQuery *graph.Node) *graph.Node {
	if perQuery.Rank() == 0 {
		return perQuery
	}
	return r.fromQueries(perQuery)
}

// sum adds up each query's row of x (in the layout) and returns [B, H, n, 1].
func (r queryRows) sum(x *graph.Node) *graph.Node {
	return r.toQueries(graph.ReduceAndKeep(x, graph.ReduceSum, -1))
}

// sameRows is a layout that is its own per-query form.
var sameRows = queryRows{
	toQueries:   func(x *graph.Node) *graph.Node { return x },
	fromQueries: func(x *graph.Node) *graph.Node { return x },
}

// normalize divides every part, each in its own layout rows[i], by its
// query's total over all parts, which must be positive (padding rows get 0).
func normalize(parts []*graph.Node, rows []queryRows) []*graph.Node {
	var total *graph.Node
	for i, part := range parts {
		if partTotal := rows[i].sum(part); total == nil {
			total = partTotal
		} else {
			total = graph.Add(total, partTotal)
		}
	}
	inverse := graph.Reciprocal(total)
	normalized := make([]*graph.Node, len(parts))
	for i, part := range parts {
		normalized[i] = graph.Mul(part, rows[i].fromQueries(inverse))
	}
	return normalized
}

// denseWeights is the reference every block form is tested against: the full
// score matrix with the index set as mask, plus an optional additive bias
// [B, H, queries, keys] (π-Attention's log-priors); weights are zero outside
// K(i). Query row r sits at position keys-queries+r. Tests and probes only,
// never training: it holds n x n tensors.
func denseWeights(q, k *graph.Node, allows IndexSet, bias *graph.Node) *graph.Node {
	heads, queries, keys := q.Shape().Dim(1), q.Shape().Dim(2), k.Shape().Dim(2)
	scores := graph.Einsum("bhqd,bhkd->bhqk", q, k)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(q.Shape().Dim(3))))
	if bias != nil {
		scores = graph.Add(scores, bias)
	}
	mask := graph.Const(q.Graph(), DenseMask(allows, heads, queries, keys))
	mask = graph.BroadcastToDims(graph.InsertAxes(mask, 0), scores.Shape().Dimensions...)
	return graph.MaskedSoftmax(scores, mask, -1) // rows with no key (none in a valid K) get zeros, not NaN
}

// DenseMask materialises K(i) as a [heads, queries, keys] boolean tensor; query
// row r is position keys-queries+r. Pictures, tests and references only.
func DenseMask(allows IndexSet, heads, queries, keys int) *tensors.Tensor {
	offset := keys - queries
	flat := make([]bool, heads*queries*keys)
	for head := range heads {
		for i := range queries {
			for j := range keys {
				flat[(head*queries+i)*keys+j] = allows(head, offset+i, j)
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(flat, heads, queries, keys)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// int32Scalar is a constant int32 for mask arithmetic.
func int32Scalar(g *graph.Graph, v int) *graph.Node { return graph.Scalar(g, dtypes.Int32, v) }

// shapeInt32 is an int32 shape, for positions.
func shapeInt32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Int32, dims...) }
