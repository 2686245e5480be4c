package models

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// Incremental decoding: Prefill runs a window once and keeps every layer's
// keys and values (after RoPE); DecodeStep then computes one new token at a
// given position: its query attends only to the keys of K(i) for that
// position, gathered from the cache (the previous and current half-segment
// for ECP, the window for local attention, the window and the skips for
// π-Attention, every earlier row for PerceiverAR's latents), and its own key
// and value are written into the cache. For a causal model this gives, token
// by token, the logits a full recomputation of the window gives
// (TestDecodingMatchesRecomputation).
//
// A layer of r rows holds the window's last r positions in its last rows: all
// n for most families, the l latents for PerceiverAR's later layers, the c
// compressed rows and then the latents for Compressed Double Attention's. So
// position i is row i - (n - r) of every layer. The PerceiverAR family
// predicts only its latents (positions from LossStart on); the history before
// them is refined, if at all, among itself, and the prefill computes it once.

// CanDecode reports whether the model decodes incrementally: every causal
// model whose residual lags, if at all, only in layer 0 (where the lagged row
// is an earlier token's embedding).
func (m *Model) CanDecode() bool {
	if !m.Config.Causal {
		return false
	}
	for i, l := range m.layers {
		if i > 0 && l.ResidualLag != 0 {
			return false
		}
	}
	return true
}

// DecodeWidth is the number of key slots a decoding step gathers per layer
// and head: no query of the block forms scores more keys than its block, and
// a latent sees at most every row of its layer (the last one does).
func (m *Model) DecodeWidth() int {
	latents := m.LossStart() > 0 // the PerceiverAR family
	width := 1
	for _, l := range m.layers {
		width = max(width, int(ceilDivInt64(l.Pattern.ScoredPairs(l.SeqLen), int64(l.SeqLen))))
		if latents {
			width = max(width, l.SeqLen)
		}
	}
	return min(width, m.Config.SeqLen)
}

func ceilDivInt64(a, b int64) int64 { return (a + b - 1) / b }

// DecodeKeys are the keys a decoding step at one position attends to, per
// layer and head, as rows of the layer, padded to DecodeWidth: Positions
// [L][H][K], Valid marks the real ones, Skip the keys of the second kind
// (SkipKeys patterns).
type DecodeKeys struct {
	Positions [][][]int32
	Valid     [][][]bool
	Skip      [][][]bool
}

// KeysAt lists K(position) of every layer and head.
func (m *Model) KeysAt(position int) (DecodeKeys, error) {
	n, width, heads := m.Config.SeqLen, m.DecodeWidth(), m.Config.Heads
	var out DecodeKeys
	if start := m.LossStart(); position < start || position >= n {
		return out, fmt.Errorf("decoding position %d: %s predicts positions %d to %d", position, m.Config.Model, start, n-1)
	}
	for _, l := range m.layers {
		row := position - (n - l.SeqLen)
		skips, hasSkips := l.Pattern.(SkipKeys)
		positions, valid, skip := make([][]int32, heads), make([][]bool, heads), make([][]bool, heads)
		for h := range heads {
			positions[h], valid[h], skip[h] = make([]int32, width), make([]bool, width), make([]bool, width)
			slot := 0
			for j := range row + 1 {
				if !l.Pattern.Allows(h, row, j) {
					continue
				}
				if slot == width {
					return out, fmt.Errorf("decoding position %d of %s: K(i) holds more than the %d keys of the block form", position, l.Pattern.Name(), width)
				}
				positions[h][slot], valid[h][slot] = int32(j), true
				skip[h][slot] = hasSkips && skips.IsSkip(h, row, j)
				slot++
			}
		}
		out.Positions, out.Valid, out.Skip = append(out.Positions, positions), append(out.Valid, valid), append(out.Skip, skip)
	}
	return out, nil
}

// decodeInputs are one layer's inputs of a decoding step.
type decodeInputs struct {
	row                  *graph.Node // int32 scalar: the decoded position's row in the layer
	keys, valid, skip    *graph.Node // [H, K]
	cacheKeys, cacheVals *graph.Node // [B, H, rows, dh]
	laggedInput          *graph.Node // [B, 1, d]: the embedding ResidualLag positions back (layer 0)
	newKeys, newVals     *graph.Node // outputs: the caches with this row written
}

// Prefill runs tokens [B, n] through the model and returns the logits
// [B, n - LossStart, vocab] and each layer's keys and values
// [B, H, rows, dh], in layer order (keys, values, keys, values, ...).
func (m *Model) Prefill(scope *model.Scope, tokens *graph.Node) (logits *graph.Node, caches []*graph.Node) {
	recorder := &[]*graph.Node{}
	m.record = recorder
	defer func() { m.record = nil }()
	logits = m.Logits(scope, tokens)
	return logits, *recorder
}

// DecodeStep computes the token at position of window for a batch: window
// [B, n] int32 (only the tokens up to position matter), position an int32
// scalar, keys, valid and skip [L, H, K] (KeysAt), caches as Prefill returns
// them. It returns the logits [B, vocab] and the caches with the new position
// written.
func (m *Model) DecodeStep(scope *model.Scope, window, position, keys, valid, skip *graph.Node, caches []*graph.Node) (logits *graph.Node, updated []*graph.Node) {
	c := m.Config
	batch := window.Shape().Dim(0)
	position = graph.ConvertDType(position, dtypes.Int32)
	// One embedding lookup for the token at position and, if layer 0's residual
	// lags, the token it adds to.
	at := []*graph.Node{graph.Reshape(position, 1, 1)}
	if lag := m.layers[0].ResidualLag; lag > 0 {
		at = append(at, graph.Reshape(graph.AddScalar(position, float64(-lag)), 1, 1))
	}
	tokens := graph.Gather(graph.TransposeAllAxes(window, 1, 0), graph.Concatenate(at, 0))        // [len(at), B]
	embedded := embed(scope.In("embed"), graph.Reshape(tokens, len(at)*batch, 1), c.Vocab, c.Dim) // [len(at)·B, d]
	embeddedAt := func(i int) *graph.Node {
		return graph.Reshape(graph.SliceAxis(embedded, 0, graph.AxisRange(i*batch, (i+1)*batch)), batch, 1, c.Dim)
	}
	x := embeddedAt(0)
	for i, l := range m.layers {
		pick := func(t *graph.Node) *graph.Node {
			return graph.Reshape(graph.SliceAxis(t, 0, graph.AxisRange(i, i+1)), t.Shape().Dim(1), t.Shape().Dim(2))
		}
		in := &decodeInputs{row: graph.AddScalar(position, float64(l.SeqLen-c.SeqLen)), keys: pick(keys), valid: pick(valid), skip: pick(skip),
			cacheKeys: caches[2*i], cacheVals: caches[2*i+1]}
		if l.ResidualLag > 0 { // layer 0 only (CanDecode)
			in.laggedInput = embeddedAt(1)
		}
		m.decoding = in
		x = m.block(scope.In("layer_%02d", i), i, x)
		updated = append(updated, in.newKeys, in.newVals)
	}
	m.decoding = nil
	x = LayerNorm(scope.In("final_norm"), x)
	logits = m.head(scope, x)
	return graph.Reshape(logits, batch, c.Vocab), updated
}

// Decoding reports whether the block computes one token of incremental decoding.
func (b *Block) Decoding() bool { return b.decode != nil }

// Row is the decoded token's row in the layer's input (an int32 scalar), while
// decoding: its position, for the families whose layers keep all n rows.
func (b *Block) Row() *graph.Node { return b.decode.row }

// attendDecoded writes the new key and value into the layer's cache and lets
// the query [B, H, 1, dh] attend to the gathered keys of K(position); alpha
// is the gate of a Gated pattern (nil otherwise).
func (b *Block) attendDecoded(q, k, v, alpha *graph.Node) *graph.Node {
	d := b.decode
	g := q.Graph()
	zero := graph.ScalarZero(g, dtypes.Int32)
	at := []*graph.Node{zero, zero, d.row, zero} // the row to write
	d.newKeys = graph.DynamicUpdateSlice(d.cacheKeys, k, at)
	d.newVals = graph.DynamicUpdateSlice(d.cacheVals, v, at)
	keys, values := gatherRows(d.newKeys, d.keys), gatherRows(d.newVals, d.keys)
	scores := graph.Einsum("bhqd,bhkd->bhqk", graph.MulScalar(q, 1/math.Sqrt(float64(q.Shape().Dim(3)))), keys) // [B, H, 1, K]
	valid := graph.Reshape(d.valid, 1, d.valid.Shape().Dim(0), 1, d.valid.Shape().Dim(1))
	var weights *graph.Node
	if gated, ok := b.Layer.Pattern.(Gated); ok {
		skip := graph.Reshape(d.skip, valid.Shape().Dimensions...)
		weights = gated.RowWeights(scores, alpha, valid, skip)
	} else {
		weights = softmaxWithin(scores, valid)
	}
	return graph.Einsum("bhqk,bhkd->bhqd", weights, values)
}

// gatherRows picks, per head, the cache rows listed in positions:
// cache [B, H, n, dh], positions [H, K] -> [B, H, K, dh].
func gatherRows(cache, positions *graph.Node) *graph.Node {
	g := cache.Graph()
	heads, width := positions.Shape().Dim(0), positions.Shape().Dim(1)
	head := graph.BroadcastToDims(graph.Iota(g, shapeInt32(heads, 1, 1), 0), heads, width, 1)
	index := graph.Concatenate([]*graph.Node{head, graph.Reshape(graph.ConvertDType(positions, dtypes.Int32), heads, width, 1)}, 2)
	byHead := graph.TransposeAllAxes(cache, 1, 2, 0, 3) // [H, n, B, dh]
	rows := graph.Gather(byHead, index)                 // [H, K, B, dh]
	return graph.TransposeAllAxes(rows, 2, 0, 1, 3)     // [B, H, K, dh]
}
