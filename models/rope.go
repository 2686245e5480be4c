package models

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// rotary applies rotary position encoding with interleaved pairs (dimensions
// 2p and 2p+1 rotate together, as in the ECP authors' code) to x
// [B, H, len, d/H] whose rows sit at the absolute positions given by positions
// (int32 [len]). The angles position·θ^(-2p/d) are computed in float32 inside
// the graph, as PyTorch does, so that the position may be an input
// (incremental decoding).
func rotary(x, positions *graph.Node, theta float64) *graph.Node {
	g := x.Graph()
	length, headDim := x.Shape().Dim(2), x.Shape().Dim(3)
	angles := graph.Mul(graph.Reshape(graph.ConvertDType(positions, dtypes.Float32), length, 1),
		graph.Reshape(graph.Const(g, rotaryFrequencies(headDim, theta)), 1, headDim/2))
	angles = graph.ConvertDType(angles, x.DType())
	return rotate(x, graph.Cos(angles), graph.Sin(angles))
}

// rotaryFrom is rotary for rows at the fixed positions first, first+1, ...
// Their cosines and sines are a constant table computed here: inside the
// graph, XLA fuses the cosine into every product that reads it and so
// evaluates it once per batch row and head, 5 % of a small training step.
// The table rounds the same float32 angles as rotary; only the last bit of a
// cosine may differ.
func rotaryFrom(x *graph.Node, first int, theta float64) *graph.Node {
	length, headDim := x.Shape().Dim(2), x.Shape().Dim(3)
	frequencies := rotaryFrequencies(headDim, theta)
	cosines := make([][]float32, length)
	sines := make([][]float32, length)
	for row := range length {
		cosines[row] = make([]float32, len(frequencies))
		sines[row] = make([]float32, len(frequencies))
		for p, frequency := range frequencies {
			angle := float64(float32(first+row) * frequency)
			cosines[row][p], sines[row][p] = float32(math.Cos(angle)), float32(math.Sin(angle))
		}
	}
	g := x.Graph()
	return rotate(x, graph.ConvertDType(graph.Const(g, cosines), x.DType()),
		graph.ConvertDType(graph.Const(g, sines), x.DType()))
}

// rotaryFrequencies is θ^(-2p/d) for each pair p of a head of headDim.
func rotaryFrequencies(headDim int, theta float64) []float32 {
	frequencies := make([]float32, headDim/2)
	for p := range frequencies {
		frequencies[p] = float32(math.Pow(theta, -2*float64(p)/float64(headDim)))
	}
	return frequencies
}

// rotate turns each pair of x [B, H, len, d] by the angles whose cosines and
// sines are given per row and pair ([len, d/2]).
func rotate(x, cos, sin *graph.Node) *graph.Node {
	dims := x.Shape().Dimensions
	length, half := dims[2], dims[3]/2
	cos, sin = graph.Reshape(cos, 1, 1, length, half, 1), graph.Reshape(sin, 1, 1, length, half, 1)
	pairs := graph.Reshape(x, dims[0], dims[1], length, half, 2)
	even := graph.SliceAxis(pairs, 4, graph.AxisRange(0, 1))
	odd := graph.SliceAxis(pairs, 4, graph.AxisRange(1, 2))
	rotatedEven := graph.Sub(graph.Mul(even, cos), graph.Mul(odd, sin))
	rotatedOdd := graph.Add(graph.Mul(even, sin), graph.Mul(odd, cos))
	return graph.Reshape(graph.Concatenate([]*graph.Node{rotatedEven, rotatedOdd}, 4), dims...)
}
