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
// π-Attention), and its own key and value are written into the cache. For a
// causal model this gives, token by token, the logits a full recomputation of
// the window gives (TestDecodingMatchesRecomputation).
//
// Families whose every layer keeps all n positions and whose loss covers every
// position decode this way (CanDecode); the PerceiverAR family, whose layers
// change length and whose outputs are its latents, is sampled by recomputing
// its window.

// CanDecode reports whether the model decodes incrementally.
func (m *Model) CanDecode() bool {
	if m.LossStart() != 0 || !m.Config.Causal {
		return false
	}
	for _, l := range m.layers {
		if l.SeqLen != m.Config.SeqLen || l.FirstPosition != 0 || l.Residual != nil {
			return false
		}
	}
	return true
}

// DecodeWidth is the number of key slots a decoding step gathers per layer
// and head: no query of the block forms scores more keys than its block.
func (m *Model) DecodeWidth() int {
	width := 1
	for _, l := range m.layers {
		width = max(width, int(ceilDivInt64(l.Pattern.ScoredPairs(l.SeqLen), int64(l.SeqLen))))
	}
	return min(width, m.Config.SeqLen)
}

func ceilDivInt64(a, b int64) int64 { return (a + b - 1) / b }

// DecodeKeys are the keys a decoding step at one position attends to, per
// layer and head, padded to DecodeWidth: Positions [L][H][K], Valid marks the
// real ones, Skip the keys of the second kind (SkipKeys patterns).
type DecodeKeys struct {
	Positions [][][]int32
	Valid     [][][]bool
	Skip      [][][]bool
}

// KeysAt lists K(position) of every layer and head.
func (m *Model) KeysAt(position int) (DecodeKeys, error) {
	width, heads := m.DecodeWidth(), m.Config.Heads
	var out DecodeKeys
	for _, l := range m.layers {
		skips, hasSkips := l.Pattern.(SkipKeys)
		positions, valid, skip := make([][]int32, heads), make([][]bool, heads), make([][]bool, heads)
		for h := range heads {
			positions[h], valid[h], skip[h] = make([]int32, width), make([]bool, width), make([]bool, width)
			slot := 0
			for j := range position + 1 {
				if !l.Pattern.Allows(h, position, j) {
					continue
				}
				if slot == width {
					return out, fmt.Errorf("decoding position %d of %s: K(i) holds more than the %d keys of the block form", position, l.Pattern.Name(), width)
				}
				positions[h][slot], valid[h][slot] = int32(j), true
				skip[h][slot] = hasSkips && skips.IsSkip(h, position, j)
				slot++
			}
		}
		out.Positions, out.Valid, out.Skip = append(out.Positions, positions), append(out.Valid, valid), append(out.Skip, skip)
	}
	return out, nil
}

// decodeInputs are one layer's inputs of a decoding step.
type decodeInputs struct {
	position             *graph.Node // int32 scalar
	keys, valid, skip    *graph.Node // [H, K]
	cacheKeys, cacheVals *graph.Node // [B, H, n, dh]
	newKeys, newVals     *graph.Node // outputs: the caches with this position written
}

// Prefill runs tokens [B, n] through the model and returns the logits
// [B, n, vocab] and each layer's keys and values [B, H, n, dh], in layer order
// (keys, values, keys, values, ...).
func (m *Model) Prefill(scope *model.Scope, tokens *graph.Node) (logits *graph.Node, caches []*graph.Node) {
	recorder := &[]*graph.Node{}
	m.record = recorder
	defer func() { m.record = nil }()
	logits = m.Logits(scope, tokens)
	return logits, *recorder
}

// DecodeStep computes the token at position for a batch: tokens [B] int32,
// position an int32 scalar, keys, valid and skip [L, H, K] (KeysAt), caches as
// Prefill returns them. It returns the logits [B, vocab] and the caches with
// the new position written.
func (m *Model) DecodeStep(scope *model.Scope, tokens, position, keys, valid, skip *graph.Node, caches []*graph.Node) (logits *graph.Node, updated []*graph.Node) {
	c := m.Config
	batch := tokens.Shape().Dim(0)
	x := graph.Reshape(embed(scope.In("embed"), tokens, c.Vocab, c.Dim), batch, 1, c.Dim)
	for i := range m.layers {
		pick := func(t *graph.Node) *graph.Node {
			return graph.Reshape(graph.SliceAxis(t, 0, graph.AxisRange(i, i+1)), t.Shape().Dim(1), t.Shape().Dim(2))
		}
		in := &decodeInputs{position: position, keys: pick(keys), valid: pick(valid), skip: pick(skip),
			cacheKeys: caches[2*i], cacheVals: caches[2*i+1]}
		m.decoding = in
		x = m.block(scope.In("layer_%02d", i), i, x)
		updated = append(updated, in.newKeys, in.newVals)
	}
	m.decoding = nil
	x = LayerNorm(scope.In("final_norm"), x)
	logits = Linear(scope.In("logits"), x, c.Vocab, true)
	return graph.Reshape(logits, batch, c.Vocab), updated
}

// Decoding reports whether the block computes one token of incremental decoding.
func (b *Block) Decoding() bool { return b.decode != nil }

// Position is the decoded token's position (an int32 scalar), while decoding.
func (b *Block) Position() *graph.Node { return b.decode.position }

// attendDecoded writes the new key and value into the layer's cache and lets
// the query [B, H, 1, dh] attend to the gathered keys of K(position); alpha
// is the gate of a Gated pattern (nil otherwise).
func (b *Block) attendDecoded(q, k, v, alpha *graph.Node) *graph.Node {
	d := b.decode
	g := q.Graph()
	zero := graph.ScalarZero(g, dtypes.Int32)
	at := []*graph.Node{zero, zero, graph.ConvertDType(d.position, dtypes.Int32), zero} // the row to write
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
