package models

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// Fused says which attention may run as the backend's fused
// scaled-dot-product attention: on a CUDA plugin, cuDNN's flash attention,
// forward and backward (GoMLX's graph.BackendFusedScaledDotProductAttention,
// go-xla's compute/xla/flash.go). ChooseFused decides where it fits.
type Fused string

const (
	// FusedDense, the default (the zero value means it): dense attention
	// (model=full) where it fits; every other pattern in its block form.
	FusedDense Fused = "dense"
	// FusedMasked is FusedDense plus local, Longformer and ECP attention as
	// dense attention under their n×n mask (an additive bias), where the mask
	// fits: a setting to measure against their block forms, not a default,
	// since the mask makes the cost quadratic in n again.
	FusedMasked Fused = "masked"
	// FusedOff keeps ecpi's own forms everywhere.
	FusedOff Fused = "off"
)

// FusedModes are the values of fused=.
var FusedModes = []string{string(FusedDense), string(FusedMasked), string(FusedOff)}

// FusedMaskBytes bounds the n×n bias of FusedMasked, [B, H, n, n] in q's
// dtype: cuDNN takes it whole, and its backward returns a gradient of the
// same size. 1 GiB is B = 2, H = 4 at n = 8192 in bfloat16.
const FusedMaskBytes = 1 << 30

// maxFusedHeadDim is the widest head ChooseFused sends to cuDNN: wider heads
// depend on the cuDNN version and the GPU, which go-xla does not check.
const maxFusedHeadDim = 128

// FusedPlan is ChooseFused's verdict for one attention.
type FusedPlan struct {
	Fused  bool   `json:"fused"`
	Masked bool   `json:"masked,omitempty"` // through the pattern's n×n mask, as a bias
	Why    string `json:"why"`              // what runs, or why the fused op does not
}

// Form names what runs: "fused", "fused masked" or "own".
func (p FusedPlan) Form() string {
	switch {
	case p.Masked:
		return "fused masked"
	case p.Fused:
		return "fused"
	}
	return "own"
}

// masker is implemented by the patterns FusedMasked may run under their n×n
// mask: K(i) built in the graph from positions, [heads or 1, n, n] booleans.
type masker interface {
	denseMask(g *graph.Graph, heads, n int) *graph.Node
}

// ChooseFused is the one place that decides whether pattern p's attention over
// q and k [B, H, n, d] (their shapes as the layer computes them, dtype
// included) runs as the backend's fused op. It does where all of these hold:
//
//   - the backend says it has the fused op and its gradient (GoMLX's
//     capability query; go-xla sets both for CUDA plugins only, and the Go
//     backend has a forward op without the gradient, so the XLA CPU plugin
//     and the Go backend always keep ecpi's forms, bit for bit);
//   - q is bfloat16 or float16 (precision=bf16): cuDNN's flash attention takes
//     nothing else, and float32 attention rounded to bfloat16 would be
//     another model's numerics;
//   - no attention dropout: go-xla's fused op has none;
//   - self-attention over whole sequences (queries as long as keys, from
//     position 0): go-xla sizes cuDNN's score matrix n×n;
//   - a head width that is a multiple of 8 (go-xla's rule) and at most 128;
//   - the pattern is dense attention (Full, causal or not), or, with
//     FusedMasked, one with a masker (local, Longformer, ECP) whose bias
//     [B, H, n, n] fits FusedMaskBytes.
//
// go-xla's fused op takes no boolean mask (only sequence lengths, a causal
// flag and an additive bias), so a masked pattern's K(i) goes in as a bias of
// 0 and maskedScore.
func ChooseFused(backend compute.Backend, p Pattern, q, k shapes.Shape, drop Dropout, mode Fused) FusedPlan {
	not := func(format string, args ...any) FusedPlan { return FusedPlan{Why: fmt.Sprintf(format, args...)} }
	_, dense := p.(Full)
	_, maskable := p.(masker)
	switch {
	case mode == FusedOff:
		return not("fused=off")
	case !dense && !(maskable && mode == FusedMasked):
		return not("%s attention keeps its block form (fused=masked tries local, longformer and ecp under their n×n mask)", p.Name())
	case q.DType != dtypes.BFloat16 && q.DType != dtypes.Float16:
		return not("cuDNN's fused attention takes bfloat16 or float16, not %s (precision=bf16 reaches it)", q.DType)
	case drop.active():
		return not("attention dropout: the fused op has none")
	case q.Rank() != 4 || k.Rank() != 4 || q.Dim(2) != k.Dim(2):
		return not("queries %v and keys %v are not one sequence's", q.Dimensions, k.Dimensions)
	case q.Dim(3)%8 != 0 || q.Dim(3) > maxFusedHeadDim:
		return not("head width %d: the fused op takes multiples of 8 up to %d", q.Dim(3), maxFusedHeadDim)
	}
	n := int64(q.Dim(2))
	if bytes := int64(q.Dim(0)) * int64(q.Dim(1)) * n * n * int64(q.DType.Size()); !dense && bytes > FusedMaskBytes {
		return not("%s's n×n mask would take %d MiB, over the %d MiB fused=masked allows", p.Name(), bytes>>20, FusedMaskBytes>>20)
	}
	if !hasFusedAttention(backend) {
		return not("backend %s has no fused attention with a fused gradient (go-xla offers cuDNN's on CUDA plugins only)", backend.Name())
	}
	if dense {
		return FusedPlan{Fused: true, Why: "dense attention"}
	}
	return FusedPlan{Fused: true, Masked: true, Why: p.Name() + " under its n×n mask"}
}

// hasFusedAttention asks the backend for the fused op and its gradient.
func hasFusedAttention(backend compute.Backend) bool {
	ops := backend.Capabilities().Operations
	return ops[compute.OpTypeFusedScaledDotProductAttention] && ops[compute.OpTypeFusedScaledDotProductAttentionVJP]
}

// Attend runs pattern p on q, k, v [B, H, n, d], which may be bfloat16 (mixed
// precision): as the backend's fused op where ChooseFused allows, else in p's
// own form in float32, so that scores and softmax statistics stay float32.
// The output has q's dtype. It returns what ran: should the backend refuse
// the fused op after all, p's own form runs and the plan says so.
func Attend(p Pattern, q, k, v *graph.Node, drop Dropout, mode Fused) (*graph.Node, FusedPlan) {
	own := func() *graph.Node {
		return graph.ConvertDType(p.Attend(toFloat32(q), toFloat32(k), toFloat32(v), drop), q.DType())
	}
	plan := ChooseFused(q.Graph().Backend(), p, q.Shape(), k.Shape(), drop, mode)
	if !plan.Fused {
		return own(), plan
	}
	out, fused := graph.InternalFusedOpCaller(func() *graph.Node { return fusedAttention(p, q, k, v, plan.Masked) }, own, false)
	if !fused {
		plan = FusedPlan{Why: "the backend refused the fused op for these shapes"}
	}
	return out, plan
}

// fusedAttention is the backend's fused op on [B, H, n, d] tensors, causal
// where p is, and under p's mask as a bias when masked.
func fusedAttention(p Pattern, q, k, v *graph.Node, masked bool) *graph.Node {
	config := &compute.ScaledDotProductAttentionConfig{Causal: isCausalPattern(p)}
	if masked {
		dims := q.Shape().Dimensions
		mask := p.(masker).denseMask(q.Graph(), dims[1], dims[2])
		bias := where(mask, graph.Zeros(q.Graph(), shapes.Make(q.DType(), mask.Shape().Dimensions...)), maskedScore)
		config.Bias = graph.InternalBackendOutputs(graph.BroadcastToDims(graph.InsertAxes(bias, 0), dims[0], dims[1], dims[2], dims[2]))[0]
	}
	out, _ := graph.BackendFusedScaledDotProductAttention(q, k, v, compute.AttentionAxesLayoutBHSD, config)
	return out
}

// isCausalPattern reports the patterns whose keys never follow their query,
// for the fused op's causal flag (which lets cuDNN skip the tiles above the
// diagonal).
func isCausalPattern(p Pattern) bool {
	switch p := p.(type) {
	case Full:
		return p.Causal
	case Local:
		return p.Causal
	case Longformer:
		return p.Causal
	case ECP:
		return true
	}
	return false
}

// positionGrid is the query positions [1, n, 1] and key positions [1, 1, n].
func positionGrid(g *graph.Graph, n int) (query, key *graph.Node) {
	return graph.Iota(g, shapeInt32(1, n, 1), 1), graph.Iota(g, shapeInt32(1, 1, n), 2)
}

func (l Local) denseMask(g *graph.Graph, _, n int) *graph.Node { return l.mask(positionGrid(g, n)) }

func (e ECP) denseMask(g *graph.Graph, _, n int) *graph.Node { return e.mask(positionGrid(g, n)) }

// denseMask is Allows for every head at once: each head's dilation d_h is a
// [H, 1, 1] constant.
func (l Longformer) denseMask(g *graph.Graph, heads, n int) *graph.Node {
	query, key := positionGrid(g, n)
	dilations := make([]int32, heads)
	for h := range dilations {
		dilations[h] = int32(l.dilation(h))
	}
	dilation := graph.Reshape(graph.Const(g, dilations), heads, 1, 1)
	distance := graph.Sub(query, key)
	apart := graph.Abs(distance)
	local := graph.LogicalAnd(graph.Equal(graph.Rem(apart, dilation), int32Scalar(g, 0)),
		graph.LessOrEqual(graph.Div(apart, dilation), int32Scalar(g, l.Window)))
	global := graph.LessThan(key, int32Scalar(g, l.Global))
	if !l.Causal {
		global = graph.LogicalOr(global, graph.LessThan(query, int32Scalar(g, l.Global)))
	}
	mask := graph.LogicalOr(local, global)
	if l.Causal {
		mask = graph.LogicalAnd(mask, graph.GreaterOrEqual(distance, int32Scalar(g, 0)))
	}
	return mask
}
