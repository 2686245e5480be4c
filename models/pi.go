package models

import (
	"fmt"
	"math"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers/activation"
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
// axis with blocks of M rows. The fusion works on each part in its own layout
// (jointAttention): only a few numbers per query cross between the two. Cost per
// head: (k+s)·n + 2·M·n scores (causal, s the window's block), or
// (k+s)·n + ⌈n/π⌉·n when M reaches every earlier row; O(n·k) while M <= k.
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

// skipSpec is the block form along the strided axis, whose channels have
// `rows` rows: blocks of M rows that also see the block before (and after,
// bidirectional). When M reaches every other row of a channel, as the default
// M does, one block of all rows scores rows keys per query instead of 2·M,
// with no padding rows and no copies of neighbour blocks: on XLA's CPU backend
// that made the skip part 1.8x faster at n = 1024, k = 128 and 2.9x at
// n = 8192, k = 256 (M = 15).
func (p Pi) skipSpec(rows int) blockSpec {
	if rows > 0 && p.Skips >= rows-1 {
		return blockSpec{size: rows}
	}
	spec := blockSpec{size: p.Skips, before: 1}
	if !p.Causal {
		spec.after = 1
	}
	return spec
}

func (p Pi) ScoredPairs(n int) int64 {
	rows := p.view(n).rows
	skipPairs := int64(p.SkipPeriod) * p.skipSpec(rows).scoredPairs(rows)
	return p.local().ScoredPairs(n) + skipPairs
}

// AllowedPairs: the local window's pairs plus, per head, the skip keys that are
// not local: backward skip m sits φ_h + m·π behind (forward: m·π - φ_h ahead)
// and exists for every query far enough from the sequence's end.
func (p Pi) AllowedPairs(heads, n int) int64 {
	if !p.PerHead() {
		heads = 1
	}
	var skips int64
	for head := range heads {
		skips += p.skipPairs(n, p.Phase(head))
		if !p.Causal {
			skips += p.skipPairs(n, -p.Phase(head))
		}
	}
	return p.local().AllowedPairs(1, n) + skips/int64(heads)
}

// skipPairs is Σ (n - d) over the skip distances d = offset + m·π, m = 1..M,
// that lie beyond the window and inside the sequence (W < d < n): an
// arithmetic series, so it answers at once for any n and M.
func (p Pi) skipPairs(n, offset int) int64 {
	first := max(1, (p.Window-offset)/p.SkipPeriod+1) // the smallest m with d > W
	last := min(p.Skips, (n-1-offset)/p.SkipPeriod)   // the largest m with d < n
	if n-1-offset < 0 || last < first {
		return 0
	}
	count := int64(last - first + 1)
	sumM := (int64(first) + int64(last)) * count / 2
	return count*int64(n-offset) - int64(p.SkipPeriod)*sumM
}

// Attend is π-Attention without a learned gate (α = 1/2 for every token and
// head): the "no gate" ablation, and what probes use on a bare pattern.
func (p Pi) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return p.AttendGated(q, k, v, nil, drop)
}

// AttendGated computes π-Attention in block form with gate alpha [B, H, n]
// (values in (0,1)); nil means α = 1/2.
func (p Pi) AttendGated(q, k, v, alpha *graph.Node, drop Dropout) *graph.Node {
	n := q.Shape().Dim(2)
	local := blockForm(q, k, v, p.local().spec(), p.local().mask)
	skip, view := p.skipScores(q, k, v)
	// The two block forms keep their own layouts: only one number per query
	// (the prior, and the softmax's maximum and sum) moves between them, never a
	// score, which would take a transpose of every skip score each way.
	localRows := queryRows{toQueries: local.perQuery, fromQueries: local.fromPerQuery}
	skipRows := queryRows{
		toQueries:   func(x *graph.Node) *graph.Node { return view.perQuery(x, n) },
		fromQueries: func(x *graph.Node) *graph.Node { return view.toBlocks(x, skip, n) },
	}
	localPrior, skipPrior := p.priors(q, alpha)

	var localWeights, skipWeights *graph.Node
	switch p.Fusion {
	case FusionMix:
		localWeights = graph.Mul(maskedSoftmax(local.scores(), local.mask), localRows.from(localPrior))
		skipWeights = graph.Mul(maskedSoftmax(skip.scores(), skip.mask), skipRows.from(skipPrior))
		// Where P(i) is empty the skip softmax is all zeros; renormalise so those
		// queries are purely local instead of shrunk by α.
		weights := normalize([]*graph.Node{localWeights, skipWeights}, []queryRows{localRows, skipRows})
		localWeights, skipWeights = weights[0], weights[1]
	case FusionPrior:
		localPart := local.part(drop)
		localPart.bias = graph.Log(localPrior)
		skipPart := skip.part(drop.salted(1))
		skipPart.rows, skipPart.bias = skipRows, graph.Log(skipPrior)
		return jointAttention([]attentionPart{localPart, skipPart})
	default:
		panic(fmt.Errorf("pi: unknown fusion %q (want %q or %q)", p.Fusion, FusionPrior, FusionMix))
	}
	localWeights, skipWeights = drop.apply(localWeights), drop.salted(1).apply(skipWeights)
	return graph.Add(local.weigh(localWeights), view.output(skip, skipWeights, n))
}

// gateFloor keeps α and 1-α off 0: a saturated gate (its logit beyond about
// ±17 rounds α to 1 or 0 in float32) would put log 0 = -∞ into prior fusion's
// logits, and the gradient through it is 0·∞ = NaN, which ended training runs
// at high learning rates. 1e-6 changes no weight by more than that.
const gateFloor = 1e-6

// priors returns α and 1-α as [B, H, n, 1], each at least gateFloor (or
// scalars 1/2 without a gate).
func (p Pi) priors(q, alpha *graph.Node) (localPrior, skipPrior *graph.Node) {
	if alpha == nil {
		half := graph.Scalar(q.Graph(), q.DType(), 0.5)
		return half, half
	}
	alpha = graph.ClipScalar(graph.InsertAxes(alpha, -1), gateFloor, 1-gateFloor)
	return alpha, graph.OneMinus(alpha)
}

// maskedSoftmax is a softmax over the last axis restricted to mask; rows with no
// allowed key (queries without skips) get all-zero weights instead of NaN.
func maskedSoftmax(scores, mask *graph.Node) *graph.Node {
	mask = graph.BroadcastToDims(mask, scores.Shape().Dimensions...)
	return graph.MaskedSoftmax(scores, mask, -1)
}

// skipMask is IsSkip in the strided view: the key of row keyRow sits
// m = queryRow - keyRow skips behind the query of row queryRow in the same
// channel (forward skips: keyRow > queryRow).
func (p Pi) skipMask(view strided, queryRow, keyRow *graph.Node, n int) *graph.Node {
	g := queryRow.Graph()
	query, key := view.positions(queryRow, keyRow, p.Heads)
	valid := graph.LogicalAnd(within(query, n), within(key, n))
	between := func(x *graph.Node, low, high int) *graph.Node {
		return graph.LogicalAnd(graph.GreaterOrEqual(x, int32Scalar(g, low)), graph.LessOrEqual(x, int32Scalar(g, high)))
	}
	notLocal := func(distance *graph.Node) *graph.Node { return graph.GreaterThan(distance, int32Scalar(g, p.Window)) }
	back := graph.Sub(queryRow, keyRow)
	skip := graph.LogicalAnd(between(back, 1, p.Skips), notLocal(graph.Sub(query, key)))
	if !p.Causal {
		forward := graph.LogicalAnd(between(graph.Neg(back), 1, p.Skips), notLocal(graph.Sub(key, query)))
		skip = graph.LogicalOr(skip, forward)
	}
	return graph.LogicalAnd(valid, skip)
}

// skipScores scores the skip keys in the strided view of period π: channel
// (h, c) holds positions c, c+π, c+2π, ... of head h, its keys delayed by φ_h.
func (p Pi) skipScores(q, k, v *graph.Node) (*blocked, strided) {
	n := q.Shape().Dim(2)
	view := p.view(n)
	mask := func(queryRow, keyRow *graph.Node) *graph.Node { return p.skipMask(view, queryRow, keyRow, n) }
	return blockForm(view.view(q, false), view.view(k, true), view.view(v, true), p.skipSpec(view.rows), mask), view
}

// view is the strided layout of the skips.
func (p Pi) view(n int) strided {
	var delay func(int) int
	if p.HeadPhase {
		delay = p.Phase
	}
	return newStrided(n, p.SkipPeriod, p.Heads, delay)
}

// DenseWeightsGated is π-Attention as a dense [B, H, n, n] matrix from its
// index sets, the ground truth of AttendGated. alpha: [B, H, n] or nil (α = 1/2).
func (p Pi) DenseWeightsGated(q, k, alpha *graph.Node) *graph.Node {
	g := q.Graph()
	heads, n := q.Shape().Dim(1), q.Shape().Dim(2)
	scores := graph.MulScalar(graph.Einsum("bhqd,bhkd->bhqk", q, k), 1/math.Sqrt(float64(q.Shape().Dim(3))))
	valid := graph.InsertAxes(graph.Const(g, DenseMask(p.Allows, heads, n, n)), 0)
	skip := graph.InsertAxes(graph.Const(g, DenseMask(p.IsSkip, heads, n, n)), 0)
	return p.RowWeights(scores, alpha, valid, skip)
}

// RowWeights fuses local and skip attention for rows of scores [B, H, Q, K]
// whose keys are marked valid (in K(i)) and skip (in P(i) \ N(i)), both
// broadcastable bool; alpha [B, H, Q] or nil (α = 1/2). Rows without skip
// keys are purely local under either fusion.
func (p Pi) RowWeights(scores, alpha, valid, skip *graph.Node) *graph.Node {
	dims := scores.Shape().Dimensions
	valid, skip = graph.BroadcastToDims(valid, dims...), graph.BroadcastToDims(skip, dims...)
	local := graph.LogicalAnd(valid, graph.LogicalNot(skip))
	skip = graph.LogicalAnd(valid, skip)
	localPrior, skipPrior := p.priors(scores, alpha)
	if p.Fusion == FusionMix {
		localWeights := graph.Mul(maskedSoftmax(scores, local), localPrior)
		skipWeights := graph.Mul(maskedSoftmax(scores, skip), skipPrior)
		total := graph.Add(graph.ReduceAndKeep(localWeights, graph.ReduceSum, -1), graph.ReduceAndKeep(skipWeights, graph.ReduceSum, -1))
		return graph.Div(graph.Add(localWeights, skipWeights), total)
	}
	prior := graph.Where(skip, graph.BroadcastToDims(graph.Log(skipPrior), dims...), graph.BroadcastToDims(graph.Log(localPrior), dims...))
	return maskedSoftmax(graph.Add(scores, prior), valid)
}

// piOptions are the π family's own options.
type piOptions struct {
	Window     int
	SkipPeriod int
	Skips      int
	HeadPhase  bool
	Fusion     string
	Gate       bool
}

func init() {
	Register(Spec[piOptions]{
		Name: "pi", Order: 5, Benchmark: true, Headline: true, Bidirectional: true,
		Paper:    "π-Attention (arXiv 2511.10696)",
		Summary:  "π-Attention: ring-local window + π-stride skips + learned per-token, per-head fusion gate",
		Defaults: piOptions{Window: 64, Fusion: FusionPrior, Gate: true},
		Options: option.Table[piOptions]{
			windowOption(func(o *piOptions) *int { return &o.Window }),
			option.Int("skip_period", "π, the stride of the skips (0 = 2k)", func(o *piOptions) *int { return &o.SkipPeriod }, option.AtLeast(0)),
			option.Int("skips", "skips M per query (0 = enough to reach position 0, at most k)", func(o *piOptions) *int { return &o.Skips }, option.AtLeast(0)),
			option.Bool("head_phase", "offset each head's skips by φ_h = h·π/H", func(o *piOptions) *bool { return &o.HeadPhase }),
			option.Choice("fusion", "how α fuses local and skip attention", []string{FusionPrior, FusionMix}, func(o *piOptions) *string { return &o.Fusion }),
			option.Bool("gate", "learn the per-token, per-head gate α (false: α = 1/2, the no-gate ablation)", func(o *piOptions) *bool { return &o.Gate }),
		},
		Resolve: func(c Config, o *piOptions) {
			if o.SkipPeriod == 0 {
				o.SkipPeriod = 2 * o.Window
			}
			if o.Skips == 0 && o.SkipPeriod > 0 {
				// Enough skips for the last query to reach back to position 0,
				// capped at k so the cost stays O(n·k).
				o.Skips = max(1, min(o.Window, (c.SeqLen-1)/o.SkipPeriod))
			}
		},
		Validate: func(c Config, o piOptions) error {
			if err := validateWindow(o.Window, c.SeqLen); err != nil {
				return err
			}
			if o.Skips > o.Window {
				return fmt.Errorf("skips M=%d must be at most the window k=%d (keeps the cost O(n·k))", o.Skips, o.Window)
			}
			return nil
		},
		Layers: func(c Config, o piOptions) []Layer {
			pattern := Pi{Window: o.Window, SkipPeriod: o.SkipPeriod, Skips: o.Skips, Heads: c.Heads,
				Causal: c.Causal, HeadPhase: o.HeadPhase, Fusion: o.Fusion}
			attention := StandardAttention
			if o.Gate {
				attention = gatedAttention
			}
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: pattern, SeqLen: c.SeqLen, RoPE: true, Attention: attention}
			}
			return layers
		},
		BenchWindow: func(o *piOptions, w int) { o.Window, o.SkipPeriod, o.Skips = w, 0, 0 },
		ReceptiveField: func(c Config, o piOptions, i, layers int) int {
			// The paper's claim: R(L) <= k·L + π·ceil(log2 L).
			return min(i, o.Window*layers+o.SkipPeriod*int(math.Ceil(math.Log2(float64(layers)))))
		},
	})
}

// gatedAttention is π-Attention with its learned fusion gate: a small
// per-token MLP gives one α per head, [B, len, d] -> [B, H, len].
func gatedAttention(b *Block, x *graph.Node) *graph.Node {
	c := b.Model.Config
	q := b.Rotate(b.Heads(b.Project("query", x)))
	k := b.Rotate(b.Heads(b.Project("key", x)))
	v := b.Heads(b.Project("value", x))
	gateScope := b.Scope.In("gate")
	hidden := activation.Gelu(b.Model.Linear(gateScope.In("hidden"), x, max(c.Dim/4, c.Heads), true))
	alpha := graph.TransposeAllAxes(graph.Sigmoid(b.Model.Linear(gateScope.In("alpha"), hidden, c.Heads, true)), 0, 2, 1)
	b.Observe(q, k, alpha)
	return b.Output("output", b.AttendGated(q, k, v, alpha))
}
