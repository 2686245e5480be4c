package models

import (
	"fmt"
	"math"
	"slices"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// Longformer (arXiv 2004.05150), a baseline the π-Attention paper compares
// against: a sliding window of k keys per head, dilated by d_h in head h
// (d_h = 1: a plain window; d_h > 1 reaches k·d_h back at the same cost), plus
// g global tokens, the first g positions, that every query attends to and
// that (both ways) attend to every position:
//
//	local:  N_h(i) = { i - d_h·t : t = 0..k } ∩ [0, n)    (bidirectional: also i + d_h·t)
//	global: G(i)   = { j < g }  (causal: j <= i);  bidirectional: K(i) = [0, n) for i < g
//	K_h(i) = N_h(i) ∪ G(i)
//
// In the causal form a global token still sees only its past, which is
// inside G already.
//
// Block form: heads of equal dilation d run the local window in the strided
// view of period d (strided.go), where the keys i - d·t are the t previous rows
// of query i's channel: blocked as a plain window (windowSpec). The global keys
// are one extra [n, g] block per head, sharing the window's softmax; global
// queries (bidirectional) one [g, n] block.
// Cost per head: about (k+s)·n (causal) or (2k+s)·n window scores, s the
// window's block (64 for k = 256), + g·n global (+ g·n
// for the global queries both ways): linear in n.
type Longformer struct {
	Window    int   // k keys on each side
	Dilations []int // d_h of each head
	Global    int   // g
	Causal    bool
}

func (l Longformer) Name() string { return "longformer" }

func (l Longformer) PerHead() bool {
	return slices.ContainsFunc(l.Dilations, func(d int) bool { return d != l.Dilations[0] })
}

func (l Longformer) dilation(head int) int { return l.Dilations[head] }

// isLocal reports j ∈ N_h(i).
func (l Longformer) isLocal(head, query, key int) bool {
	distance := query - key
	if l.Causal && distance < 0 {
		return false
	}
	d := l.dilation(head)
	return abs(distance)%d == 0 && abs(distance)/d <= l.Window
}

func (l Longformer) Allows(head, query, key int) bool {
	if l.Causal && key > query {
		return false
	}
	return l.isLocal(head, query, key) || key < l.Global || (!l.Causal && query < l.Global)
}

func (l Longformer) spec() blockSpec { return windowSpec(l.Window, l.Causal) }

// ScoredPairs averages over heads the window's scores in each head's strided
// view, plus the global blocks.
func (l Longformer) ScoredPairs(n int) int64 {
	var window exactMean
	for _, d := range l.Dilations {
		window.add(int64(d)*l.spec().scoredPairs(ceilDiv(n, d)), 1)
	}
	global := int64(l.Global) * int64(n)
	if !l.Causal {
		global *= 2
	}
	return window.mean() + global
}

// AllowedPairs counts, per head, the window's keys and the global keys (and,
// both ways, the global queries' keys) outside the window, averaged over heads.
func (l Longformer) AllowedPairs(heads, n int) int64 {
	var total exactMean
	for head := range l.Dilations {
		total.add(l.allowedInHead(head, n), 1)
	}
	return total.mean()
}

func (l Longformer) allowedInHead(head, n int) int64 {
	d, k, g := l.dilation(head), l.Window, min(l.Global, n)
	behind := dilatedSum(n, d, k) // Σ_i min(floor(i/d), k): keys behind each query
	if l.Causal {
		total := behind + int64(n)
		for j := range g { // global key j, seen by every i >= j outside the window
			total += int64(n-j) - int64(min(k+1, ceilDiv(n-j, d)))
		}
		return total
	}
	total := 2*behind + int64(n)
	for j := range g { // global key j, seen by every query outside its window
		total += int64(n) - int64(min(k, j/d)+min(k, (n-1-j)/d)+1)
	}
	for i := range g { // global query i, seeing every non-global key outside its window
		ahead := max(0, min(k, (n-1-i)/d)-ceilDiv(g-i, d)+1)
		total += int64(n-g) - int64(ahead)
	}
	return total
}

// dilatedSum is Σ_{i<n} min(floor(i/d), k).
func dilatedSum(n, d, k int) int64 {
	rows := min(k, n/d) // complete rows of d positions with floor(i/d) < k
	sum := int64(d) * int64(rows) * int64(rows-1) / 2
	rest := int64(n - rows*d)
	return sum + rest*int64(rows)
}

func (l Longformer) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	n := q.Shape().Dim(2)
	var outputs []*graph.Node
	for from := 0; from < len(l.Dilations); {
		to := from + 1
		for to < len(l.Dilations) && l.Dilations[to] == l.Dilations[from] {
			to++
		}
		group := l.windowScores(q, k, v, from, to)
		// Each group's window stays in its strided layout; with global keys,
		// one softmax spans both, and only each query's maximum and sum move.
		window := group.block.part(drop.salted(2 * from))
		window.rows = queryRows{
			toQueries:   func(x *graph.Node) *graph.Node { return group.view.perQuery(x, n) },
			fromQueries: func(x *graph.Node) *graph.Node { return group.view.toBlocks(x, group.block, n) },
		}
		parts := []attentionPart{window}
		if l.Global > 0 {
			parts = append(parts, l.globalPart(q, k, v, from, to, drop.salted(2*from+1)))
		}
		outputs = append(outputs, jointAttention(parts))
		from = to
	}
	out := graph.Concatenate(outputs, 1)
	if l.Global > 0 && !l.Causal {
		out = l.withGlobalQueries(out, q, k, v, drop)
	}
	return out
}

// dilationGroup is the window block form of heads that share a dilation.
type dilationGroup struct {
	view  strided
	block *blocked
}

// windowScores scores the dilated window of heads [from, to) in their strided view.
func (l Longformer) windowScores(q, k, v *graph.Node, from, to int) dilationGroup {
	n, d := q.Shape().Dim(2), l.Dilations[from]
	view := newStrided(n, d, to-from, nil)
	pick := func(x *graph.Node) *graph.Node {
		return view.view(graph.SliceAxis(x, 1, graph.AxisRange(from, to)), false)
	}
	mask := func(queryRow, keyRow *graph.Node) *graph.Node {
		query, key := view.positions(queryRow, keyRow, to-from)
		back := graph.Sub(queryRow, keyRow)
		inWindow := graph.LessOrEqual(graph.Abs(back), int32Scalar(back.Graph(), l.Window))
		if l.Causal {
			inWindow = graph.LogicalAnd(inWindow, graph.GreaterOrEqual(back, int32Scalar(back.Graph(), 0)))
		}
		return graph.LogicalAnd(inWindow, graph.LogicalAnd(within(query, n), within(key, n)))
	}
	return dilationGroup{view: view, block: blockForm(pick(q), pick(k), pick(v), l.spec(), mask)}
}

// globalPart is every query of heads [from, to) against the g global keys
// that are not in its window already, as one block of n queries by g keys.
func (l Longformer) globalPart(q, k, v *graph.Node, from, to int, drop Dropout) attentionPart {
	g, n := q.Graph(), q.Shape().Dim(2)
	heads := func(x *graph.Node, length int) *graph.Node {
		x = graph.SliceAxis(graph.SliceAxis(x, 1, graph.AxisRange(from, to)), 2, graph.AxisRange(0, length))
		return graph.InsertAxes(x, 2) // one block: [B, H', 1, length, d]
	}
	query := graph.Iota(g, shapeInt32(1, 1, n, 1), 2)
	key := graph.Iota(g, shapeInt32(1, 1, 1, l.Global), 3)
	dilations := make([]int32, to-from)
	for h := range dilations {
		dilations[h] = int32(l.Dilations[from+h])
	}
	dilation := graph.Reshape(graph.Const(g, dilations), 1, to-from, 1, 1)
	distance := graph.Sub(query, key)
	steps := graph.Abs(distance)
	local := graph.LogicalAnd(graph.Equal(graph.Rem(steps, dilation), int32Scalar(g, 0)),
		graph.LessOrEqual(graph.Div(steps, dilation), int32Scalar(g, l.Window)))
	mask := graph.LogicalNot(local)
	if l.Causal {
		mask = graph.LogicalAnd(mask, graph.GreaterOrEqual(distance, int32Scalar(g, 0)))
	}
	rows := queryRows{
		toQueries:   func(x *graph.Node) *graph.Node { return graph.Squeeze(x, 2) },
		fromQueries: func(x *graph.Node) *graph.Node { return graph.InsertAxes(x, 2) },
	}
	queries := graph.MulScalar(heads(q, n), 1/math.Sqrt(float64(q.Shape().Dim(3))))
	return attentionPart{queries: queries, keys: heads(k, l.Global), values: heads(v, l.Global),
		mask: graph.InsertAxes(mask, 2), rows: rows, drop: drop}
}

// withGlobalQueries replaces the rows of the g global queries, which (both
// ways) attend to every position: one dense [g, n] block.
func (l Longformer) withGlobalQueries(out, q, k, v *graph.Node, drop Dropout) *graph.Node {
	queries := graph.SliceAxis(q, 2, graph.AxisRange(0, l.Global))
	scores := graph.Einsum("bhqd,bhkd->bhqk", graph.MulScalar(queries, 1/math.Sqrt(float64(q.Shape().Dim(3)))), k)
	global := graph.Einsum("bhqk,bhkd->bhqd", drop.apply(graph.Softmax(scores, -1)), v)
	return graph.Concatenate([]*graph.Node{global, graph.SliceAxis(out, 2, graph.AxisRangeToEnd(l.Global))}, 2)
}

// longformerOptions are the Longformer family's own options.
type longformerOptions struct {
	Window    int
	Dilations []int
	Global    int
}

// dilations gives each of the heads its dilation: one value for all, or one each.
func (o longformerOptions) dilations(heads int) []int {
	if len(o.Dilations) == 1 {
		return slices.Repeat(o.Dilations, heads)
	}
	return o.Dilations
}

func init() {
	Register(Spec[longformerOptions]{
		Name: "longformer", Order: 100, Bidirectional: true, Benchmark: true,
		Paper:    "Longformer (arXiv 2004.05150), a π-Attention baseline",
		Summary:  "sliding window dilated per head, plus global tokens every position attends to",
		Defaults: longformerOptions{Window: 64, Dilations: []int{1}, Global: 1},
		Options: option.Table[longformerOptions]{
			windowOption(func(o *longformerOptions) *int { return &o.Window }),
			option.Ints("dilation", "dilation d_h of the window: one value for every head, or one per head (1,1,2,4); head h sees i - d_h·t, t = 0..k",
				func(o *longformerOptions) *[]int { return &o.Dilations }, option.AtLeast(1)),
			option.Int("global", "global tokens g: the first g positions, seen by every query", func(o *longformerOptions) *int { return &o.Global }, option.AtLeast(0)),
		},
		Validate: func(c Config, o longformerOptions) error {
			if err := validateWindow(o.Window, c.SeqLen); err != nil {
				return err
			}
			if len(o.Dilations) != 1 && len(o.Dilations) != c.Heads {
				return fmt.Errorf("option dilation= lists %d values; give one for every head or one per head (heads=%d)", len(o.Dilations), c.Heads)
			}
			if o.Global >= c.SeqLen {
				return fmt.Errorf("global tokens global=%d must be fewer than sequence length n=%d", o.Global, c.SeqLen)
			}
			return nil
		},
		Layers: func(c Config, o longformerOptions) []Layer {
			pattern := Longformer{Window: o.Window, Dilations: o.dilations(c.Heads), Global: o.Global, Causal: c.Causal}
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: pattern, SeqLen: c.SeqLen, RoPE: true}
			}
			return layers
		},
		BenchWindow: func(o *longformerOptions, w int) { o.Window = w },
		ReceptiveField: func(c Config, o longformerOptions, i, layers int) int {
			if o.Global > 0 {
				return i // the global tokens, from position 0 on, are one step from every query
			}
			return min(i, o.Window*slices.Max(o.Dilations)*layers)
		},
	})
}
