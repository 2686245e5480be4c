package models

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
)

// Model is a family's network: token embedding, pre-LN blocks of attention and
// feed-forward, final layer norm. LM adds next-token logits, Classifier a pooled
// class head. Build it with New (which validates) and call its graph functions
// inside a model.Exec.
type Model struct {
	Config Config // resolved
	// Probe, when set, sees intermediate values while the graph is built
	// (probes and notebooks); training leaves it nil.
	Probe  *Probe
	layers []LayerPattern
}

// Probe receives intermediate nodes of each layer as the graph is built.
type Probe struct {
	// Attention gets the layer's queries and keys [B, H, len, d/H] (after RoPE),
	// its pattern, and π-Attention's gate α [B, H, len] (nil for other families).
	Attention func(layer int, pattern Pattern, q, k, alpha *graph.Node)
}

// New validates the config and returns the model.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := cfg.Resolved()
	return &Model{Config: r, layers: r.LayerPatterns()}, nil
}

// LossStart is the first position that carries the loss: 0 for families
// trained on every position (ECP among them), C = n - l for PerceiverAR and the
// three intermediate designs, which are trained on their latents only.
func (m *Model) LossStart() int {
	if f, _ := FamilyByName(m.Config.Model); f.LatentLoss {
		return m.Config.SeqLen - m.Config.Latents
	}
	return 0
}

// Logits maps tokens [B, n] (int32) to next-token logits [B, n - LossStart, vocab]
// for the positions that carry the loss.
func (m *Model) Logits(scope *model.Scope, tokens *graph.Node) *graph.Node {
	hidden := m.Trunk(scope, tokens)
	return layers.Dense(scope.In("logits"), hidden, true, m.Config.Vocab)
}

// Trunk runs embedding, every block and the final layer norm:
// tokens [B, n] -> hidden [B, n - LossStart, d].
func (m *Model) Trunk(scope *model.Scope, tokens *graph.Node) *graph.Node {
	c := m.Config
	if tokens.Shape().Dim(1) != c.SeqLen {
		panic(fmt.Sprintf("model %s expects sequences of n=%d tokens, got %d", c.Model, c.SeqLen, tokens.Shape().Dim(1)))
	}
	x := layers.Embedding(scope.In("embed"), tokens, dtypes.Float32, c.Vocab, c.Dim)
	x = layers.DropoutStatic(scope.In("embed_dropout"), x, c.Dropout)
	for i := range m.layers {
		layerScope := scope.In("layer_%02d", i)
		if c.Model == "compressed" && i == 1 {
			x = m.compress(scope.In("compress"), x)
		}
		x = m.block(layerScope, i, x)
	}
	x = norm.LayerNorm(scope.In("final_norm"), x, -1).Done()
	if keep := c.SeqLen - m.LossStart(); x.Shape().Dim(1) > keep {
		x = graph.SliceAxis(x, 1, graph.AxisRangeToEnd(x.Shape().Dim(1)-keep)) // latents only
	}
	return x
}

// block is one pre-LN layer: x + attention(LN(x)), then x + FF(LN(x)).
// PerceiverAR's layer 0 keeps only the latent rows (its residual is the latent slice).
func (m *Model) block(scope *model.Scope, layer int, x *graph.Node) *graph.Node {
	c := m.Config
	normed := norm.LayerNorm(scope.In("attention_norm"), x, -1).Done()
	attended := m.attention(scope.In("attention"), layer, normed)
	if attended.Shape().Dim(1) != x.Shape().Dim(1) {
		x = graph.SliceAxis(x, 1, graph.AxisRangeToEnd(x.Shape().Dim(1)-attended.Shape().Dim(1)))
	}
	x = graph.Add(x, layers.DropoutStatic(scope.In("attention_dropout"), attended, c.Dropout))
	normed = norm.LayerNorm(scope.In("ff_norm"), x, -1).Done()
	hidden := activation.Gelu(layers.Dense(scope.In("ff_in"), normed, true, c.FFMult*c.Dim))
	ff := layers.Dense(scope.In("ff_out"), hidden, true, c.Dim)
	return graph.Add(x, layers.DropoutStatic(scope.In("ff_dropout"), ff, c.Dropout))
}

// usesRoPE says which layers rotate queries and keys. ECP, Compressed and
// s-Split encode positions in layer 0 only (as their authors do): later layers
// see positions through what layer 0 wrote.
func (m *Model) usesRoPE(layer int) bool {
	switch m.Config.Model {
	case "ecp", "compressed", "ssplit":
		return layer == 0
	}
	return true
}

// attention projects x [B, len, d] to heads, runs the layer's pattern and
// projects back.
func (m *Model) attention(scope *model.Scope, layer int, x *graph.Node) *graph.Node {
	c := m.Config
	pattern := m.layers[layer].Pattern
	switch p := pattern.(type) {
	case ECP:
		return m.ecpAttention(scope, layer, p, x)
	case Cross:
		latents := graph.SliceAxis(x, 1, graph.AxisRangeToEnd(p.Context))
		q := m.rope(layer, m.heads(layers.Dense(scope.In("query"), latents, false, c.Dim)), p.Context)
		k := m.rope(layer, m.heads(layers.Dense(scope.In("key"), x, false, c.Dim)), 0)
		v := m.heads(layers.Dense(scope.In("value"), x, false, c.Dim))
		m.observe(layer, pattern, q, k, nil)
		return m.merge(scope, LatentAttention(q, k, v, p.Context))
	}
	first := 0
	if c.Model == "perceiverar" {
		first = c.SeqLen - c.Latents // latent self-attention at the latents' absolute positions
	}
	q := m.rope(layer, m.heads(layers.Dense(scope.In("query"), x, false, c.Dim)), first)
	k := m.rope(layer, m.heads(layers.Dense(scope.In("key"), x, false, c.Dim)), first)
	v := m.heads(layers.Dense(scope.In("value"), x, false, c.Dim))
	if pi, ok := pattern.(Pi); ok && c.Gate {
		alpha := m.gate(scope.In("gate"), x)
		m.observe(layer, pattern, q, k, alpha)
		return m.merge(scope, pi.AttendGated(q, k, v, alpha))
	}
	m.observe(layer, pattern, q, k, nil)
	return m.merge(scope, pattern.Attend(q, k, v))
}

// ecpAttention follows the authors' ECPAttention: one projection serves as keys
// and values, RoPE on q and kv in layer 0, and two output projections, one for
// half-segment 0 (which has no previous half-segment) and one for the rest.
func (m *Model) ecpAttention(scope *model.Scope, layer int, p ECP, x *graph.Node) *graph.Node {
	c := m.Config
	q := m.rope(layer, m.heads(layers.Dense(scope.In("query"), x, false, c.Dim)), 0)
	kv := m.rope(layer, m.heads(layers.Dense(scope.In("key_value"), x, false, c.Dim)), 0)
	m.observe(layer, p, q, kv, nil)
	out := m.mergeHeads(p.Attend(q, kv, kv))
	first := graph.SliceAxis(out, 1, graph.AxisRange(0, p.HalfSegment))
	rest := graph.SliceAxis(out, 1, graph.AxisRangeToEnd(p.HalfSegment))
	firstOut := layers.Dense(scope.In("output_first"), first, true, c.Dim)
	if rest.Shape().Dim(1) == 0 {
		return firstOut
	}
	return graph.Concatenate([]*graph.Node{firstOut, layers.Dense(scope.In("output_rest"), rest, true, c.Dim)}, 1)
}

// gate is π-Attention's fusion gate: a small per-token MLP giving one α per
// head, [B, len, d] -> [B, H, len].
func (m *Model) gate(scope *model.Scope, x *graph.Node) *graph.Node {
	hidden := activation.Gelu(layers.Dense(scope.In("hidden"), x, true, max(m.Config.Dim/4, m.Config.Heads)))
	alpha := graph.Sigmoid(layers.Dense(scope.In("alpha"), hidden, true, m.Config.Heads))
	return graph.TransposeAllAxes(alpha, 0, 2, 1)
}

func (m *Model) observe(layer int, pattern Pattern, q, k, alpha *graph.Node) {
	if m.Probe != nil && m.Probe.Attention != nil {
		m.Probe.Attention(layer, pattern, q, k, alpha)
	}
}

// heads splits [B, len, d] into [B, H, len, d/H].
func (m *Model) heads(x *graph.Node) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.Reshape(x, dims[0], dims[1], m.Config.Heads, m.Config.Dim/m.Config.Heads)
	return graph.TransposeAllAxes(x, 0, 2, 1, 3)
}

// mergeHeads is the inverse of heads.
func (m *Model) mergeHeads(x *graph.Node) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.TransposeAllAxes(x, 0, 2, 1, 3)
	return graph.Reshape(x, dims[0], dims[2], m.Config.Dim)
}

// merge joins the heads and applies the output projection.
func (m *Model) merge(scope *model.Scope, x *graph.Node) *graph.Node {
	return layers.Dense(scope.In("output"), m.mergeHeads(x), true, m.Config.Dim)
}

func (m *Model) rope(layer int, x *graph.Node, first int) *graph.Node {
	if !m.usesRoPE(layer) {
		return x
	}
	return rotary(x, first, m.Config.Theta)
}

// compress is Compressed Double Attention's learned map along the token axis:
// the C context rows become c rows, the latents pass through.
func (m *Model) compress(scope *model.Scope, x *graph.Node) *graph.Node {
	c := m.Config
	context := c.SeqLen - c.Latents
	weights := scope.VariableWithShape("weights", shapes.Make(dtypes.Float32, context, c.Compress)).NodeValue(x.Graph())
	history := graph.SliceAxis(x, 1, graph.AxisRange(0, context))
	compressed := graph.Einsum("bcd,ce->bed", history, weights)
	latents := graph.SliceAxis(x, 1, graph.AxisRangeToEnd(context))
	return graph.Concatenate([]*graph.Node{compressed, latents}, 1)
}
