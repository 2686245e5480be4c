package models

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// rotary applies rotary position encoding with interleaved pairs (dimensions
// 2p and 2p+1 rotate together, as in the ECP authors' code) to x
// [B, H, len, d] whose rows sit at the absolute positions given by positions
// (int32 [len]). The angles position·θ^(-2p/d) are computed in float32 inside
// the graph, as PyTorch does, so no table is stored and the position may be
// an input (incremental decoding).
func rotary(x, positions *graph.Node, theta float64) *graph.Node {
	g := x.Graph()
	dims := x.Shape().Dimensions
	length, headDim := dims[2], dims[3]
	half := headDim / 2
	frequencies := make([]float32, half)
	for p := range frequencies {
		frequencies[p] = float32(math.Pow(theta, -2*float64(p)/float64(headDim)))
	}
	angles := graph.Mul(graph.Reshape(graph.ConvertDType(positions, dtypes.Float32), length, 1),
		graph.Reshape(graph.Const(g, frequencies), 1, half))
	angles = graph.ConvertDType(graph.Reshape(angles, 1, 1, length, half, 1), x.DType())
	cos, sin := graph.Cos(angles), graph.Sin(angles)
	pairs := graph.Reshape(x, dims[0], dims[1], length, half, 2)
	even := graph.SliceAxis(pairs, 4, graph.AxisRange(0, 1))
	odd := graph.SliceAxis(pairs, 4, graph.AxisRange(1, 2))
	rotatedEven := graph.Sub(graph.Mul(even, cos), graph.Mul(odd, sin))
	rotatedOdd := graph.Add(graph.Mul(even, sin), graph.Mul(odd, cos))
	return graph.Reshape(graph.Concatenate([]*graph.Node{rotatedEven, rotatedOdd}, 4), dims...)
}

// positionsFrom is the int32 positions first, first+1, ... of length rows.
func positionsFrom(g *graph.Graph, first, length int) *graph.Node {
	return graph.AddScalar(graph.Iota(g, shapeInt32(length), 0), first)
}
