package models

import (
	"math"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// This file holds the block form that every sparse variant shares: cut the
// sequence into blocks, let each block of queries score only a few
// neighbouring blocks of keys, and mask inside those blocks to the exact index
// set K(i). No n x n tensor is ever built, so the cost is
// n * (before+1+after) * blockSize score entries per head: linear in n at fixed
// block size.
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
	// shift puts `shift` empty positions in front of the sequence before it is
	// cut into blocks, so blocks start at position -shift (LongLoRA's shifted groups).
	shift int
}

func (s blockSpec) keysPerBlock() int { return (s.before + 1 + s.after) * s.size }

// numBlocks is the number of blocks covering n positions after the shift.
func (s blockSpec) numBlocks(n int) int { return ceilDiv(n+s.shift, s.size) }

// scoredPairs counts the score entries the block form computes per head.
func (s blockSpec) scoredPairs(n int) int {
	return s.numBlocks(n) * s.size * s.keysPerBlock()
}

// blocked is one block form's scores with their mask, and the value blocks the
// attention weights multiply.
type blocked struct {
	spec   blockSpec
	n      int
	scores *graph.Node // [B, H, numBlocks, size, keysPerBlock]
	mask   *graph.Node // broadcastable to scores; true where key ∈ K(query)
	values *graph.Node // [B, H, numBlocks, keysPerBlock, headDim]
}

// blockScores scores each query block against its neighbour key blocks.
// q, k, v: [B, H, n, headDim]. The index set decides the mask; when
// perHead is false it is evaluated for head 0 only and broadcast.
func blockScores(q, k, v *graph.Node, spec blockSpec, allows IndexSet, perHead bool) *blocked {
	n := q.Shape().Dim(2)
	headDim := q.Shape().Dim(3)
	qBlocks := toBlocks(q, spec)
	kBlocks := neighbourBlocks(toBlocks(k, spec), spec)
	vBlocks := neighbourBlocks(toBlocks(v, spec), spec)
	scores := graph.Einsum("bhnqd,bhnkd->bhnqk", qBlocks, kBlocks)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(headDim)))
	heads := 1
	if perHead {
		heads = q.Shape().Dim(1)
	}
	mask := graph.Const(q.Graph(), blockMask(spec, n, heads, allows))
	return &blocked{spec: spec, n: n, scores: scores, mask: mask, values: vBlocks}
}

// toBlocks pads the sequence axis (shift in front, zeros at the end) and cuts
// it into blocks: [B, H, n, d] -> [B, H, numBlocks, size, d].
func toBlocks(x *graph.Node, spec blockSpec) *graph.Node {
	dims := x.Shape().Dimensions
	n := dims[2]
	padded := spec.numBlocks(n) * spec.size
	x = padSeq(x, 2, spec.shift, padded-n-spec.shift)
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

// blockMask evaluates the index set on every (query, key) slot of the block
// form: [1, heads, numBlocks, size, keysPerBlock]. Slots outside the sequence
// (padding) are false.
func blockMask(spec blockSpec, n, heads int, allows IndexSet) *tensors.Tensor {
	numBlocks := spec.numBlocks(n)
	keys := spec.keysPerBlock()
	flat := make([]bool, heads*numBlocks*spec.size*keys)
	idx := 0
	for head := range heads {
		for block := range numBlocks {
			for row := range spec.size {
				query := block*spec.size + row - spec.shift
				for slot := range keys {
					key := (block-spec.before)*spec.size + slot - spec.shift
					flat[idx] = query >= 0 && query < n && key >= 0 && key < n && allows(head, query, key)
					idx++
				}
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(flat, 1, heads, numBlocks, spec.size, keys)
}

// weigh multiplies attention weights (shaped like the scores) with the value
// blocks and returns [B, H, n, headDim] in sequence order.
func (b *blocked) weigh(weights *graph.Node) *graph.Node {
	out := graph.Einsum("bhnqk,bhnkd->bhnqd", weights, b.values)
	return fromBlocks(out, b.spec, b.n)
}

// fromBlocks undoes toBlocks: [B, H, nb, size, d] -> [B, H, n, d].
func fromBlocks(x *graph.Node, spec blockSpec, n int) *graph.Node {
	dims := x.Shape().Dimensions
	seq := graph.Reshape(x, dims[0], dims[1], dims[2]*dims[3], dims[4])
	return graph.SliceAxis(seq, 2, graph.AxisRange(spec.shift, spec.shift+n))
}

// attend is plain softmax attention over the block form.
func (b *blocked) attend() *graph.Node {
	return b.weigh(softmaxWithin(b.scores, b.mask))
}

// softmaxWithin is the training-path softmax over the keys a mask allows: the
// mask becomes an additive bias of -1e9 and the backend's fused softmax does the
// rest, a few passes over the scores instead of MaskedSoftmax's eight. A row
// with no allowed key (only padding rows, which are sliced away) gets
// meaningless weights rather than zeros.
func softmaxWithin(scores, mask *graph.Node) *graph.Node {
	g := scores.Graph()
	bias := graph.Where(mask, graph.ScalarZero(g, scores.DType()), graph.Scalar(g, scores.DType(), -1e9))
	return graph.Softmax(graph.Add(scores, bias), -1)
}

// maskedSoftmax is a softmax over the last axis restricted to mask; rows with no
// allowed key (padding) get all-zero weights instead of NaN.
func maskedSoftmax(scores, mask *graph.Node) *graph.Node {
	mask = graph.BroadcastToDims(mask, scores.Shape().Dimensions...)
	return graph.MaskedSoftmax(scores, mask, -1)
}

// denseAttention is the reference every block form is tested against: the full
// n x n score matrix with the index set as mask, plus an optional additive
// bias [B, H, n, n] (π-Attention's log-priors). Used in tests and probes only,
// never in training.
func denseAttention(q, k, v *graph.Node, allows IndexSet, bias *graph.Node) *graph.Node {
	n := q.Shape().Dim(2)
	heads := q.Shape().Dim(1)
	scores := graph.Einsum("bhqd,bhkd->bhqk", q, k)
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(q.Shape().Dim(3))))
	if bias != nil {
		scores = graph.Add(scores, bias)
	}
	mask := graph.Const(q.Graph(), DenseMask(allows, heads, n))
	weights := maskedSoftmax(scores, graph.InsertAxes(mask, 0))
	return graph.Einsum("bhqk,bhkd->bhqd", weights, v)
}

// DenseMask materialises K(i) as a [heads, n, n] boolean tensor (row = query).
func DenseMask(allows IndexSet, heads, n int) *tensors.Tensor {
	return maskTensor(heads, n, n, allows)
}

// maskTensor evaluates an index set on a [heads, rows, cols] grid.
func maskTensor(heads, rows, cols int, allows IndexSet) *tensors.Tensor {
	flat := make([]bool, heads*rows*cols)
	for head := range heads {
		for i := range rows {
			for j := range cols {
				flat[(head*rows+i)*cols+j] = allows(head, i, j)
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(flat, heads, rows, cols)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
