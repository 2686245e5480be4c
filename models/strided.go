package models

import (
	"github.com/gomlx/gomlx/core/graph"
)

// strided is the layout that turns periodic keys into neighbours: each head's
// sequence is cut into rows of `period` positions and transposed, so channel
// (h, c) holds positions c, c+period, c+2·period, ... and the key
// i - m·period of query i sits m rows above it in the same channel. A block
// form along the rows then scores periodic keys (π-Attention's skips, dilated
// windows) at the cost of a local window. Keys of head h may be delayed by
// delay(h) positions, which shifts that head's lattice of keys.
type strided struct {
	period int
	rows   int                // rows of the view: ceil((n + largest delay) / period)
	delay  func(head int) int // nil: no delay
}

func newStrided(n, period, heads int, delay func(head int) int) strided {
	s := strided{period: period, delay: delay}
	s.rows = ceilDiv(n+s.delayOf(heads-1), period)
	return s
}

func (s strided) delayOf(head int) int {
	if s.delay == nil {
		return 0
	}
	return s.delay(head)
}

// view maps [B, H, n, d] to [B, H·period, rows, d]: position r·period + c goes
// to channel (h, c), row r; keys are first delayed by their head's delay.
func (s strided) view(x *graph.Node, delayed bool) *graph.Node {
	dims := x.Shape().Dimensions
	batch, heads, n, headDim := dims[0], dims[1], dims[2], dims[3]
	padded := s.rows * s.period
	if delayed && s.delay != nil {
		perHead := make([]*graph.Node, heads)
		for head := range heads {
			one := graph.SliceAxis(x, 1, graph.AxisRange(head, head+1))
			perHead[head] = padSeq(one, 2, s.delay(head), padded-n-s.delay(head))
		}
		x = graph.Concatenate(perHead, 1)
	} else {
		x = padSeq(x, 2, 0, padded-n)
	}
	x = graph.Reshape(x, batch, heads, s.rows, s.period, headDim)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	return graph.Reshape(x, batch, heads*s.period, s.rows, headDim)
}

// perQuery turns block-form scores of the view [B, H·period, nb, size, keys]
// into one row per query in sequence order [B, H, n, keys].
func (s strided) perQuery(x *graph.Node, n int) *graph.Node {
	dims := x.Shape().Dimensions
	batch, keys := dims[0], dims[4]
	heads := dims[1] / s.period
	x = graph.Reshape(x, batch, heads, s.period, dims[2]*dims[3], keys)
	x = graph.SliceAxis(x, 3, graph.AxisRange(0, s.rows))
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = graph.Reshape(x, batch, heads, s.rows*s.period, keys)
	return graph.SliceAxis(x, 2, graph.AxisRange(0, n))
}

// toBlocks is the inverse of perQuery for the block form b.
func (s strided) toBlocks(x *graph.Node, b *blocked, n int) *graph.Node {
	dims := b.scoreDims()
	batch, heads, keys := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(3)
	x = padSeq(x, 2, 0, s.rows*s.period-n)
	x = graph.Reshape(x, batch, heads, s.rows, s.period, keys)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = padSeq(x, 3, 0, dims[2]*dims[3]-s.rows)
	return graph.Reshape(x, batch, heads*s.period, dims[2], dims[3], keys)
}

// output weighs the view's value blocks and returns [B, H, n, d] in sequence order.
func (s strided) output(b *blocked, weights *graph.Node, n int) *graph.Node {
	view := b.weigh(weights) // [B, H·period, rows, d]
	dims := view.Shape().Dimensions
	batch, headDim := dims[0], dims[3]
	heads := dims[1] / s.period
	x := graph.Reshape(view, batch, heads, s.period, s.rows, headDim)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = graph.Reshape(x, batch, heads, s.rows*s.period, headDim)
	return graph.SliceAxis(x, 2, graph.AxisRange(0, n))
}

// positions are the sequence positions of a block form of the view: query
// rows [1, H·period, nb, size, 1] and key slots [1, H·period, nb, 1, keys]
// (keys delayed by their head's delay), from the rows the block form gives.
func (s strided) positions(queryRow, keyRow *graph.Node, heads int) (query, key *graph.Node) {
	g := queryRow.Graph()
	channel := graph.Iota(g, shapeInt32(1, heads*s.period, 1, 1, 1), 1)
	column := graph.Rem(channel, int32Scalar(g, s.period))
	query = graph.Add(graph.MulScalar(queryRow, s.period), column)
	key = graph.Add(graph.MulScalar(keyRow, s.period), column)
	if s.delay != nil {
		delays := make([]int32, heads*s.period)
		for c := range delays {
			delays[c] = int32(s.delay(c / s.period))
		}
		key = graph.Sub(key, graph.Reshape(graph.Const(g, delays), 1, heads*s.period, 1, 1, 1))
	}
	return query, key
}

// perQuery turns a block form's scores (or mask) [B, H, nb, size, keys] into
// one row per query [B, H, n, keys].
func (b *blocked) perQuery(x *graph.Node) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.Reshape(x, dims[0], dims[1], dims[2]*dims[3], dims[4])
	return graph.SliceAxis(x, 2, graph.AxisRange(0, b.n))
}

// fromPerQuery is the inverse of perQuery (padding rows get 0).
func (b *blocked) fromPerQuery(x *graph.Node) *graph.Node {
	dims := b.scoreDims()
	x = padSeq(x, 2, 0, dims[2]*dims[3]-x.Shape().Dim(2))
	return graph.Reshape(x, dims[0], dims[1], dims[2], dims[3], x.Shape().Dim(3))
}
