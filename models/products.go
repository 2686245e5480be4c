package models

import (
	"github.com/gomlx/gomlx/core/graph"
)

// This file holds the batched matrix products of the block forms and the
// tiled dense attention, with gradients written out for XLA's CPU backend.
//
// That backend hands a product to YNNPACK only when it contracts its left
// operand's last axis; any other product goes to Eigen, which repacks both
// operands of every block before multiplying. Autodiff of a product a·b
// gives b's gradient as aᵀ·dOut, contracting a's first axis, so every key and
// value gradient of a block form went to Eigen: `perf` put Eigen's packing
// at 17-25 % of an ECP layer's forward and backward (n = 4096, 2026-12-02).
// Here those gradients are computed as the transpose of (dOutᵀ·a) or
// (xᵀ·dScores), where only the small operand (n·d, not a block of scores)
// and the result are transposed. Dense attention at n = 4096 went from
// 424-499 to 286-315 ms.
//
// Tensors are [B, H, blocks, rows, columns].

// scoreProducts is q·kᵀ per block: q [B, H, nb, m, d], k [B, H, nb, keys, d]
// -> [B, H, nb, m, keys].
func scoreProducts(q, k *graph.Node) *graph.Node {
	if onGoBackend(q.Graph()) {
		return plainScoreProducts(q, k)
	}
	return withGradient([]*graph.Node{q, k}, func(in []*graph.Node) *graph.Node { return plainScoreProducts(in[0], in[1]) },
		func(_, dScores *graph.Node) []*graph.Node {
			q, k := graph.StopGradient(q), graph.StopGradient(k)
			return []*graph.Node{plainValueProducts(dScores, k), transposedProduct(dScores, q)}
		})
}

// valueProducts is w·v per block: w [B, H, nb, m, keys], v [B, H, nb, keys, d]
// -> [B, H, nb, m, d].
func valueProducts(w, v *graph.Node) *graph.Node {
	if onGoBackend(w.Graph()) {
		return plainValueProducts(w, v)
	}
	return withGradient([]*graph.Node{w, v}, func(in []*graph.Node) *graph.Node { return plainValueProducts(in[0], in[1]) },
		func(_, dOut *graph.Node) []*graph.Node {
			w, v := graph.StopGradient(w), graph.StopGradient(v)
			return []*graph.Node{plainScoreProducts(dOut, v), transposedProduct(w, dOut)}
		})
}

func plainScoreProducts(q, k *graph.Node) *graph.Node {
	return graph.Einsum("bhnqd,bhnkd->bhnqk", q, k)
}
func plainValueProducts(w, v *graph.Node) *graph.Node {
	return graph.Einsum("bhnqk,bhnkd->bhnqd", w, v)
}

// transposedProduct is wᵀ·x per block for w [B, H, nb, m, keys] and x
// [B, H, nb, m, d]: [B, H, nb, keys, d], computed as (xᵀ·w)ᵀ except on the Go
// backend (see above).
func transposedProduct(w, x *graph.Node) *graph.Node {
	if onGoBackend(w.Graph()) {
		return graph.Einsum("bhnqk,bhnqd->bhnkd", w, x)
	}
	xT := unfoldable(graph.TransposeAllAxes(x, 0, 1, 2, 4, 3))
	product := unfoldable(graph.Einsum("bhndq,bhnqk->bhndk", xT, w))
	return graph.TransposeAllAxes(product, 0, 1, 2, 4, 3)
}

// unfoldable is x, computed in its own layout. XLA would otherwise fold a
// transpose into the product that reads it, or a transposed product into its
// operands' order, and be back at the form that goes to Eigen.
func unfoldable(x *graph.Node) *graph.Node { return after(x, x) }

// withGradient is forward(inputs) with the given gradient: autodiff hands
// grads the forward's output and its adjoint, and grads returns the adjoint of
// every input. Inputs and output share their first axis, the batch.
//
// The gradient rides on an identity of [output | inputs...], flattened after
// the batch and joined: XLA folds the joins and their slices away.
func withGradient(inputs []*graph.Node, forward func(stopped []*graph.Node) *graph.Node, grads func(out, dOut *graph.Node) []*graph.Node) *graph.Node {
	stopped := make([]*graph.Node, len(inputs))
	for i, in := range inputs {
		stopped[i] = graph.StopGradient(in)
	}
	out := forward(stopped)
	parts := []*graph.Node{flatAfterBatch(graph.StopGradient(out))}
	for _, in := range inputs {
		parts = append(parts, flatAfterBatch(in))
	}
	outSize := parts[0].Shape().Dim(1)
	carrier := graph.IdentityWithCustomGradient(graph.Concatenate(parts, 1), func(_, adjoint *graph.Node) *graph.Node {
		dOut := graph.Reshape(graph.SliceAxis(adjoint, 1, graph.AxisRange(0, outSize)), out.Shape().Dimensions...)
		adjoints := []*graph.Node{graph.ZerosLike(parts[0])}
		for _, grad := range grads(out, dOut) {
			adjoints = append(adjoints, flatAfterBatch(grad))
		}
		return graph.Concatenate(adjoints, 1)
	})
	return graph.Reshape(graph.SliceAxis(carrier, 1, graph.AxisRange(0, outSize)), out.Shape().Dimensions...)
}

// flatAfterBatch reshapes [B, ...] to [B, rest].
func flatAfterBatch(x *graph.Node) *graph.Node {
	return graph.Reshape(x, x.Shape().Dim(0), x.Shape().Size()/x.Shape().Dim(0))
}
