package models

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Pi is π-Attention (arXiv 2511.10696): ring-local windows, periodic skips of
// stride π, and a learned per-token, per-head gate α that fuses the two.
//
//	local:  N(i) = { j : i-k <= j <= i }                (bidirectional: |i-j| <= k)
//	skips:  P(i) = { i - φ_h - m·π : m = 1..M } ∩ [0,n)  (bidirectional: also i - φ_h + m·π)
//	K(i)   = N(i) ∪ P(i); a key in both counts once, as local.
//
// φ_h is the optional per-head phase (head-level sparsity coordination):
// φ_h = h·π/H spreads the heads' skip lattices evenly; 0 when off.
//
// Fusion "prior" (default): one softmax over K(i) with logits
// q·k/√d + log α for local keys and + log(1-α) for skip keys. Fusion "mix":
// α·softmax_local + (1-α)·softmax_skip (pure local where P(i) is empty).
//
// Block form: the local part is Local's block form; the skip part reshapes the
// sequence [n] -> [n/π, π] and transposes it, so the keys i - m·π become the M
// previous rows of query i's column: block-local attention along the strided
// axis with blocks of M rows. Cost per head: 2·k·n + 2·M·n scores (causal), so
// O(n·k) while M <= k.
type Pi struct {
	Window     int    // k
	SkipPeriod int    // π
	Skips      int    // M
	Heads      int    // H
	Causal     bool   // false for classification
	HeadPhase  bool   // φ_h = h·π/H instead of 0
	Fusion     string // FusionPrior or FusionMix
}

// The two fusion forms of π-Attention.
const (
	FusionPrior = "prior"
	FusionMix   = "mix"
)

func (p Pi) Name() string  { return "pi" }
func (p Pi) PerHead() bool { return p.HeadPhase }

func (p Pi) local() Local { return Local{Window: p.Window, Causal: p.Causal} }

// Phase is φ_h, the offset of head h's skip lattice.
func (p Pi) Phase(head int) int {
	if !p.HeadPhase {
		return 0
	}
	return head * p.SkipPeriod / p.Heads
}

// IsLocal reports j ∈ N(i).
func (p Pi) IsLocal(query, key int) bool { return p.local().Allows(0, query, key) }

// IsSkip reports j ∈ P(i) \ N(i): a skip key that is not also local.
func (p Pi) IsSkip(head, query, key int) bool {
	if p.IsLocal(query, key) || (p.Causal && key > query) {
		return false
	}
	distance := query - key - p.Phase(head) // = m·π for backward skips
	if key > query {
		distance = key - query + p.Phase(head) // forward skips, bidirectional only
	}
	return distance > 0 && distance%p.SkipPeriod == 0 && distance/p.SkipPeriod <= p.Skips
}

func (p Pi) Allows(head, query, key int) bool {
	return p.IsLocal(query, key) || p.IsSkip(head, query, key)
}

// skipSpec is the block form along the strided axis: blocks of M rows.
func (p Pi) skipSpec() blockSpec {
	spec := blockSpec{size: p.Skips, before: 1}
	if !p.Causal {
		spec.after = 1
	}
	return spec
}

// stridedRows is the number of rows of the [rows, π] strided view.
func (p Pi) stridedRows(n int) int {
	maxPhase := p.Phase(p.Heads - 1)
	return ceilDiv(n+maxPhase, p.SkipPeriod)
}

func (p Pi) ScoredPairs(n int) int64 {
	skipPairs := p.SkipPeriod * p.skipSpec().scoredPairs(p.stridedRows(n))
	return p.local().ScoredPairs(n) + int64(skipPairs)
}

// Attend is π-Attention without a learned gate (α = 1/2 for every token and
// head): the "no gate" ablation, and what probes use on a bare pattern.
func (p Pi) Attend(q, k, v *graph.Node) *graph.Node {
	return p.AttendGated(q, k, v, nil)
}

// AttendGated computes π-Attention in block form with gate alpha [B, H, n]
// (values in (0,1)); nil means α = 1/2.
func (p Pi) AttendGated(q, k, v, alpha *graph.Node) *graph.Node {
	n := q.Shape().Dim(2)
	local := blockScores(q, k, v, p.local().spec(), p.local().Allows, false)
	skip := p.skipScores(q, k, v)
	localScores, localMask := p.localPerQuery(local.scores, n), p.localPerQuery(local.mask, n)
	skipScores, skipMask := p.skipPerQuery(skip.scores, n), p.skipPerQuery(skip.mask, n)
	localPrior, skipPrior := p.priors(q, alpha)

	var localWeights, skipWeights *graph.Node
	switch p.Fusion {
	case FusionMix:
		localWeights = graph.Mul(maskedSoftmax(localScores, localMask), localPrior)
		skipWeights = graph.Mul(maskedSoftmax(skipScores, skipMask), skipPrior)
		// Where P(i) is empty the skip softmax is all zeros; renormalise so those
		// queries are purely local instead of shrunk by α.
		total := graph.Add(graph.ReduceAndKeep(localWeights, graph.ReduceSum, -1), graph.ReduceAndKeep(skipWeights, graph.ReduceSum, -1))
		localWeights, skipWeights = graph.Div(localWeights, total), graph.Div(skipWeights, total)
	case FusionPrior:
		logits := graph.Concatenate([]*graph.Node{
			graph.Add(localScores, graph.Log(localPrior)),
			graph.Add(skipScores, graph.Log(skipPrior)),
		}, -1)
		mask := graph.Concatenate([]*graph.Node{
			graph.BroadcastToDims(localMask, localScores.Shape().Dimensions...),
			graph.BroadcastToDims(skipMask, skipScores.Shape().Dimensions...),
		}, -1)
		weights := softmaxWithin(logits, mask) // every query has at least itself as a local key
		localKeys := localScores.Shape().Dim(-1)
		localWeights = graph.SliceAxis(weights, -1, graph.AxisRange(0, localKeys))
		skipWeights = graph.SliceAxis(weights, -1, graph.AxisRangeToEnd(localKeys))
	default:
		panic(fmt.Sprintf("pi: unknown fusion %q (want %q or %q)", p.Fusion, FusionPrior, FusionMix))
	}
	localOut := local.weigh(p.localToBlocks(localWeights, local))
	skipOut := p.skipOutput(skip, p.skipToBlocks(skipWeights, skip, n), n)
	return graph.Add(localOut, skipOut)
}

// priors returns α and 1-α as [B, H, n, 1] (or scalars 1/2 without a gate).
func (p Pi) priors(q, alpha *graph.Node) (localPrior, skipPrior *graph.Node) {
	if alpha == nil {
		half := graph.Scalar(q.Graph(), q.DType(), 0.5)
		return half, half
	}
	alpha = graph.InsertAxes(alpha, -1)
	return alpha, graph.OneMinus(alpha)
}

// localPerQuery turns block-form local scores [B, H, nb, k, 2k] into one row
// per query [B, H, n, 2k].
func (p Pi) localPerQuery(x *graph.Node, n int) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.Reshape(x, dims[0], dims[1], dims[2]*dims[3], dims[4])
	return graph.SliceAxis(x, 2, graph.AxisRange(0, n))
}

// localToBlocks is the inverse of localPerQuery.
func (p Pi) localToBlocks(x *graph.Node, local *blocked) *graph.Node {
	dims := local.scores.Shape().Dimensions
	x = padSeq(x, 2, 0, dims[2]*dims[3]-x.Shape().Dim(2))
	return graph.Reshape(x, dims...)
}

// skipScores scores the skip keys in the strided layout: channel (h, c) holds
// positions c, c+π, c+2π, ... of head h, with the keys of head h shifted by φ_h.
func (p Pi) skipScores(q, k, v *graph.Node) *blocked {
	n := q.Shape().Dim(2)
	rows := p.stridedRows(n)
	period := p.SkipPeriod
	allows := func(channel, queryRow, keyRow int) bool {
		head, column := channel/period, channel%period
		query := queryRow*period + column
		key := keyRow*period + column - p.Phase(head)
		return query < n && key >= 0 && key < n && p.IsSkip(head, query, key)
	}
	return blockScores(p.toStrided(q, rows, false), p.toStrided(k, rows, true), p.toStrided(v, rows, true),
		p.skipSpec(), allows, true)
}

// toStrided maps [B, H, n, d] to [B, H·π, rows, d]: position r·π + c goes to
// channel (h, c), row r. Keys are first delayed by their head's phase.
func (p Pi) toStrided(x *graph.Node, rows int, delayByPhase bool) *graph.Node {
	dims := x.Shape().Dimensions
	batch, heads, n, headDim := dims[0], dims[1], dims[2], dims[3]
	padded := rows * p.SkipPeriod
	if delayByPhase && p.HeadPhase {
		perHead := make([]*graph.Node, heads)
		for head := range heads {
			one := graph.SliceAxis(x, 1, graph.AxisRange(head, head+1))
			perHead[head] = padSeq(one, 2, p.Phase(head), padded-n-p.Phase(head))
		}
		x = graph.Concatenate(perHead, 1)
	} else {
		x = padSeq(x, 2, 0, padded-n)
	}
	x = graph.Reshape(x, batch, heads, rows, p.SkipPeriod, headDim)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	return graph.Reshape(x, batch, heads*p.SkipPeriod, rows, headDim)
}

// skipPerQuery turns strided block scores [B, H·π, nb, M, keys] into one row per
// query in sequence order [B, H, n, keys].
func (p Pi) skipPerQuery(x *graph.Node, n int) *graph.Node {
	dims := x.Shape().Dimensions
	batch, keys := dims[0], dims[4]
	heads := dims[1] / p.SkipPeriod
	rows := p.stridedRows(n)
	x = graph.Reshape(x, batch, heads, p.SkipPeriod, dims[2]*dims[3], keys)
	x = graph.SliceAxis(x, 3, graph.AxisRange(0, rows))
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = graph.Reshape(x, batch, heads, rows*p.SkipPeriod, keys)
	return graph.SliceAxis(x, 2, graph.AxisRange(0, n))
}

// skipToBlocks is the inverse of skipPerQuery.
func (p Pi) skipToBlocks(x *graph.Node, skip *blocked, n int) *graph.Node {
	dims := skip.scores.Shape().Dimensions
	batch, heads, keys := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(3)
	rows := p.stridedRows(n)
	x = padSeq(x, 2, 0, rows*p.SkipPeriod-n)
	x = graph.Reshape(x, batch, heads, rows, p.SkipPeriod, keys)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = padSeq(x, 3, 0, dims[2]*dims[3]-rows)
	return graph.Reshape(x, batch, heads*p.SkipPeriod, dims[2], dims[3], keys)
}

// skipOutput weighs the strided value blocks and returns [B, H, n, d] in
// sequence order.
func (p Pi) skipOutput(skip *blocked, weights *graph.Node, n int) *graph.Node {
	strided := skip.weigh(weights) // [B, H·π, rows, d]
	dims := strided.Shape().Dimensions
	batch, rows, headDim := dims[0], dims[2], dims[3]
	heads := dims[1] / p.SkipPeriod
	x := graph.Reshape(strided, batch, heads, p.SkipPeriod, rows, headDim)
	x = graph.TransposeAllAxes(x, 0, 1, 3, 2, 4)
	x = graph.Reshape(x, batch, heads, rows*p.SkipPeriod, headDim)
	return graph.SliceAxis(x, 2, graph.AxisRange(0, n))
}

// ReferenceGated is π-Attention computed densely from its index sets, the
// ground truth for AttendGated. alpha: [B, H, n] or nil.
func (p Pi) ReferenceGated(q, k, v, alpha *graph.Node) *graph.Node {
	g := q.Graph()
	heads, n := q.Shape().Dim(1), q.Shape().Dim(2)
	localMask := graph.Const(g, DenseMask(func(_, i, j int) bool { return p.IsLocal(i, j) }, 1, n))
	skipMask := graph.Const(g, DenseMask(p.IsSkip, heads, n))
	localPrior, skipPrior := p.priors(q, alpha)
	if p.Fusion == FusionMix {
		localOut := denseAttention(q, k, v, func(_, i, j int) bool { return p.IsLocal(i, j) }, nil)
		skipOut := denseAttention(q, k, v, p.IsSkip, nil)
		hasSkip := graph.Const(g, p.hasSkips(heads, n))
		skipPrior = graph.Mul(skipPrior, hasSkip)
		total := graph.Add(localPrior, skipPrior)
		return graph.Add(graph.Mul(localOut, graph.Div(localPrior, total)), graph.Mul(skipOut, graph.Div(skipPrior, total)))
	}
	zero := graph.ScalarZero(g, q.DType())
	bias := graph.Where(graph.InsertAxes(localMask, 0), graph.Log(localPrior),
		graph.Where(graph.InsertAxes(skipMask, 0), graph.Log(skipPrior), zero))
	bias = graph.BroadcastToDims(bias, q.Shape().Dim(0), heads, n, n)
	return denseAttention(q, k, v, p.Allows, bias)
}

// hasSkips is 1 where P(i) \ N(i) is non-empty: [1, H, n, 1] float32.
func (p Pi) hasSkips(heads, n int) *tensors.Tensor {
	flat := make([]float32, heads*n)
	for head := range heads {
		for i := range n {
			for j := range n {
				if p.IsSkip(head, i, j) {
					flat[head*n+i] = 1
					break
				}
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(flat, 1, heads, n, 1)
}
