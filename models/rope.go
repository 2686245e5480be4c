package models

import (
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// rotary applies rotary position encoding with interleaved pairs (dimensions
// 2p and 2p+1 rotate together, as in the ECP authors' code) to x [B, H, len, d]
// whose rows sit at absolute positions first, first+1, ...
// Cross-attention needs queries and keys at different offsets, hence the
// explicit first position.
func rotary(x *graph.Node, first int, theta float64) *graph.Node {
	dims := x.Shape().Dimensions
	length, headDim := dims[2], dims[3]
	cos, sin := rotaryTables(first, length, headDim, theta)
	g := x.Graph()
	pairs := graph.Reshape(x, dims[0], dims[1], length, headDim/2, 2)
	even := graph.SliceAxis(pairs, 4, graph.AxisRange(0, 1))
	odd := graph.SliceAxis(pairs, 4, graph.AxisRange(1, 2))
	cosNode := graph.ConvertDType(graph.Const(g, cos), x.DType())
	sinNode := graph.ConvertDType(graph.Const(g, sin), x.DType())
	rotatedEven := graph.Sub(graph.Mul(even, cosNode), graph.Mul(odd, sinNode))
	rotatedOdd := graph.Add(graph.Mul(even, sinNode), graph.Mul(odd, cosNode))
	return graph.Reshape(graph.Concatenate([]*graph.Node{rotatedEven, rotatedOdd}, 4), dims...)
}

// rotaryTables holds cos and sin of position·θ^(-2p/d): [1, 1, len, d/2, 1].
func rotaryTables(first, length, headDim int, theta float64) (cos, sin *tensors.Tensor) {
	half := headDim / 2
	cosFlat := make([]float32, length*half)
	sinFlat := make([]float32, length*half)
	for pos := range length {
		for p := range half {
			angle := float64(first+pos) * math.Pow(theta, -2*float64(p)/float64(headDim))
			cosFlat[pos*half+p] = float32(math.Cos(angle))
			sinFlat[pos*half+p] = float32(math.Sin(angle))
		}
	}
	return tensors.FromFlatDataAndDimensions(cosFlat, 1, 1, length, half, 1),
		tensors.FromFlatDataAndDimensions(sinFlat, 1, 1, length, half, 1)
}
