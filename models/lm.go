package models

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/nn"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
)

// LayerNormEpsilon is the ε of every layer norm: PyTorch's default, which the
// ECP authors use (GoMLX's default of 1e-3 shifts logits by up to 0.5 with the
// same weights, and sits above the variance of small embeddings).
const LayerNormEpsilon = 1e-5

// Layer is what one layer of a family computes.
type Layer struct {
	Pattern Pattern // the layer's attention over its input rows
	SeqLen  int     // rows of the layer's input
	// RoPE rotates queries and keys; the layer's input row r sits at absolute
	// position FirstPosition + r.
	RoPE          bool
	FirstPosition int
	// Attention builds the layer's attention (nil: StandardAttention).
	Attention AttentionFunc
	// ResidualLag: the attention output at position i is added to the
	// residual stream at position i - ResidualLag (0 for every layer but
	// Compressed Double Attention's first, as its authors wrote it).
	ResidualLag int
}

// AttentionFunc builds one layer's attention: the layer-normalised input
// [B, len, d] to the rows the layer writes [B, rows, d].
type AttentionFunc func(b *Block, x *graph.Node) *graph.Node

// Model is a family's network: token embedding, pre-LN blocks of attention and
// feed-forward, final layer norm. Logits adds next-token logits, ClassLogits a
// pooled class head. Build it with New (which validates) and call its graph
// functions inside a model.Exec.
type Model struct {
	Config Config // resolved
	// Compute is the dtype of activations and matrix products: Float32 (the
	// zero value means it) or BFloat16 for mixed precision. Variables stay
	// float32 whatever it is, and layer norms, attention scores, their softmax
	// and the logits are computed in float32.
	Compute dtypes.DType
	// SplitSequence says the sequence is split across devices (train's
	// parallel=sequence): dense attention then runs in the form XLA can
	// partition along the sequence (SplitTiledAttention).
	SplitSequence bool
	// Fused says which attention may run as the backend's fused op (cuDNN's
	// flash attention on CUDA; ChooseFused). The zero value is FusedDense.
	Fused Fused
	// Probe, when set, sees intermediate values while the graph is built
	// (probes and notebooks); training leaves it nil.
	Probe  *Probe
	layers []Layer

	record   *[]*graph.Node // Prefill: where the layers' keys and values go
	decoding *decodeInputs  // DecodeStep: the current layer's inputs
}

// Probe receives intermediate nodes of each layer as the graph is built.
type Probe struct {
	// Attention gets the layer's queries and keys [B, H, len, d/H] (after RoPE),
	// its pattern, and the gate α [B, H, len] of a Gated pattern (nil otherwise).
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

// computeType is Compute, Float32 when unset.
func (m *Model) computeType() dtypes.DType {
	if m.Compute == dtypes.InvalidDType {
		return dtypes.Float32
	}
	return m.Compute
}

// Layers lists what each layer computes.
func (m *Model) Layers() []Layer { return m.layers }

// LossStart is the first position that carries the loss (see Config.LossStart).
func (m *Model) LossStart() int { return m.Config.LossStart() }

// Logits maps tokens [B, n] (int32) to next-token logits [B, n - LossStart, vocab]
// for the positions that carry the loss.
func (m *Model) Logits(scope *model.Scope, tokens *graph.Node) *graph.Node {
	return m.head(scope, m.Trunk(scope, tokens))
}

// head maps hidden states [..., d] to next-token logits [..., vocab]: a
// matrix and bias of its own, or (Tied) the token embedding's transpose.
func (m *Model) head(scope *model.Scope, hidden *graph.Node) *graph.Node {
	c := m.Config
	hidden = graph.ConvertDType(hidden, m.computeType())
	if !c.Tied {
		return graph.ConvertDType(m.Linear(scope.In("logits"), hidden, c.Vocab, true), dtypes.Float32)
	}
	table := scope.At("embed").VariableWithShape("embeddings", shapes.Make(dtypes.Float32, c.Vocab, c.Dim)).NodeValue(hidden.Graph())
	dims := hidden.Shape().Dimensions
	flat := graph.Reshape(hidden, -1, c.Dim)
	logits := graph.MatMul(flat, graph.Transpose(graph.ConvertDType(table, hidden.DType()), 0, 1))
	return graph.ConvertDType(graph.Reshape(logits, append(slices.Clone(dims[:len(dims)-1]), c.Vocab)...), dtypes.Float32)
}

// Trunk runs embedding, every block and the final layer norm:
// tokens [B, n] -> hidden [B, n - LossStart, d].
func (m *Model) Trunk(scope *model.Scope, tokens *graph.Node) *graph.Node {
	c := m.Config
	if tokens.Shape().Dim(1) != c.SeqLen {
		panic(fmt.Errorf("model %s expects sequences of n=%d tokens, got %d", c.Model, c.SeqLen, tokens.Shape().Dim(1)))
	}
	x := graph.ConvertDType(embed(scope.In("embed"), tokens, c.Vocab, c.Dim), m.computeType())
	for i := range m.layers {
		x = m.block(scope.In("layer_%02d", i), i, x)
	}
	x = LayerNorm(scope.In("final_norm"), x)
	if keep := c.SeqLen - m.LossStart(); x.Shape().Dim(1) > keep {
		x = graph.SliceAxis(x, 1, graph.AxisRangeToEnd(x.Shape().Dim(1)-keep)) // latents only
	}
	return x
}

// block is one pre-LN layer: x + attention(LN(x)), then x + FF(LN(x)), with
// dropout on the attention weights and on the feed-forward hidden layer (where
// the ECP authors put it).
func (m *Model) block(scope *model.Scope, index int, x *graph.Node) *graph.Node {
	layer := m.layers[index]
	b := &Block{Model: m, Layer: layer, Index: index, Scope: scope.In("attention"), dropoutScope: scope.In("dropout"), decode: m.decoding}
	attention := layer.Attention
	if attention == nil {
		attention = StandardAttention
	}
	attended := attention(b, LayerNorm(scope.In("attention_norm"), x))
	x = graph.Add(b.residual(x, attended.Shape().Dim(1)), attended)
	hidden := activation.Gelu(m.Linear(scope.In("ff_in"), LayerNorm(scope.In("ff_norm"), x), m.Config.FFMult*m.Config.Dim, true))
	hidden = layers.DropoutStatic(b.dropoutScope, hidden, m.Config.Dropout)
	return graph.Add(x, m.Linear(scope.In("ff_out"), hidden, m.Config.Dim, true))
}

// residual is the part of the layer's input x that an attention output of
// `rows` rows is added to: the last rows (all of them for most layers;
// PerceiverAR's cross-attention writes the latents), ResidualLag rows earlier.
// While decoding, the lagged row is an earlier token's embedding.
func (b *Block) residual(x *graph.Node, rows int) *graph.Node {
	lag := b.Layer.ResidualLag
	if b.Decoding() && lag > 0 {
		return b.decode.laggedInput
	}
	length := x.Shape().Dim(1)
	if length == rows && lag == 0 {
		return x
	}
	return graph.SliceAxis(x, 1, graph.AxisRange(length-lag-rows, length-lag))
}

// Block is one layer's attention while its graph is built: what the family's
// AttentionFunc works with.
type Block struct {
	Model *Model
	Layer Layer
	Index int          // the layer's index
	Scope *model.Scope // the attention's scope

	dropoutScope *model.Scope
	decode       *decodeInputs // non-nil while decoding one token (decode.go)
}

// StandardAttention is the attention of most families: separate query, key and
// value projections (no bias), RoPE where the layer asks for it, the layer's
// pattern, one output projection.
func StandardAttention(b *Block, x *graph.Node) *graph.Node {
	q := b.Rotate(b.Heads(b.Project("query", x)))
	k := b.Rotate(b.Heads(b.Project("key", x)))
	v := b.Heads(b.Project("value", x))
	b.Observe(q, k, nil)
	return b.Output("output", b.Attend(q, k, v))
}

// Project is a d -> d projection without bias, e.g. of queries or keys.
func (b *Block) Project(name string, x *graph.Node) *graph.Node {
	return b.Model.Linear(b.Scope.In("%s", name), x, b.Model.Config.Dim, false)
}

// Output joins the heads and applies the output projection (with bias).
func (b *Block) Output(name string, heads *graph.Node) *graph.Node {
	return b.Model.Linear(b.Scope.In("%s", name), b.MergeHeads(heads), b.Model.Config.Dim, true)
}

// Heads splits [B, len, d] into [B, H, len, d/H].
func (b *Block) Heads(x *graph.Node) *graph.Node {
	c := b.Model.Config
	dims := x.Shape().Dimensions
	x = graph.Reshape(x, dims[0], dims[1], c.Heads, c.Dim/c.Heads)
	return graph.TransposeAllAxes(x, 0, 2, 1, 3)
}

// MergeHeads is the inverse of Heads.
func (b *Block) MergeHeads(x *graph.Node) *graph.Node {
	dims := x.Shape().Dimensions
	x = graph.TransposeAllAxes(x, 0, 2, 1, 3)
	return graph.Reshape(x, dims[0], dims[2], b.Model.Config.Dim)
}

// Rotate applies RoPE to heads [B, H, len, d/H] whose rows are the layer's
// input rows, if the layer uses RoPE.
func (b *Block) Rotate(x *graph.Node) *graph.Node {
	return b.RotateFrom(x, 0)
}

// RotateFrom is Rotate for rows starting at the layer's input row `row`
// (queries of only the last rows, as in PerceiverAR's cross-attention).
func (b *Block) RotateFrom(x *graph.Node, row int) *graph.Node {
	if !b.Layer.RoPE {
		return x
	}
	if b.Decoding() {
		position := graph.AddScalar(b.decode.row, float64(b.Layer.FirstPosition))
		return rotary(x, graph.Reshape(position, 1), b.Model.Config.Theta)
	}
	return rotaryFrom(x, b.Layer.FirstPosition+row, b.Model.Config.Theta)
}

// NormHeads is a learned LayerNorm over each head's features (the ECP
// authors' baselines normalise their shared keys/values this way).
func (b *Block) NormHeads(name string, x *graph.Node) *graph.Node {
	return LayerNorm(b.Scope.In("%s", name), x)
}

// Attend runs the layer's pattern with dropout on its weights (while
// decoding: one query over the cached keys of K(i)).
func (b *Block) Attend(q, k, v *graph.Node) *graph.Node {
	if b.Decoding() {
		return b.attendDecoded(q, k, v, nil)
	}
	b.recordCache(k, v)
	drop := b.AttentionDropout(q.Graph())
	if split, ok := b.Layer.Pattern.(sequenceSplitter); ok && b.Model.SplitSequence {
		return graph.ConvertDType(split.AttendSplit(toFloat32(q), toFloat32(k), toFloat32(v), drop), q.DType())
	}
	out, _ := Attend(b.Layer.Pattern, q, k, v, drop, b.Model.Fused)
	return out
}

// sequenceSplitter is a pattern with a second form for a sequence split
// across devices, where its own form would make XLA gather the sequence.
type sequenceSplitter interface {
	AttendSplit(q, k, v *graph.Node, drop Dropout) *graph.Node
}

// toFloat32 gives attention its inputs in float32: under mixed precision its
// scores and softmax statistics stay in float32.
func toFloat32(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtypes.Float32) }

// AttendGated runs a Gated pattern with its gate alpha [B, H, len].
func (b *Block) AttendGated(q, k, v, alpha *graph.Node) *graph.Node {
	if b.Decoding() {
		return b.attendDecoded(q, k, v, alpha)
	}
	b.recordCache(k, v)
	if alpha != nil {
		alpha = toFloat32(alpha)
	}
	out := b.Layer.Pattern.(Gated).AttendGated(toFloat32(q), toFloat32(k), toFloat32(v), alpha, b.AttentionDropout(q.Graph()))
	return graph.ConvertDType(out, q.DType())
}

// recordCache keeps the layer's keys and values for Prefill.
func (b *Block) recordCache(k, v *graph.Node) {
	if r := b.Model.record; r != nil {
		*r = append(*r, k, v)
	}
}

// AttentionDropout is the dropout of this layer's attention weights: a fresh
// seed per layer and step while training, nothing otherwise.
func (b *Block) AttentionDropout(g *graph.Graph) Dropout {
	rate := b.Model.Config.Dropout
	if rate <= 0 || !b.dropoutScope.IsTraining(g) {
		return Dropout{}
	}
	return Dropout{Rate: rate, Seed: b.dropoutScope.RandomIntN(g, uint32(math.MaxUint32), shapes.Make(dtypes.Uint32))}
}

// Observe hands queries, keys and a gate to the model's probe, if any.
func (b *Block) Observe(q, k, alpha *graph.Node) {
	if p := b.Model.Probe; p != nil && p.Attention != nil {
		p.Attention(b.Index, b.Layer.Pattern, q, k, alpha)
	}
}

// Linear is a dense layer initialised as PyTorch's nn.Linear, which the ECP
// authors' models use: weights and bias uniform in ±1/√fan_in.
// Its variables are float32 (where layers.Dense would take x's dtype) and
// are cast to x's: under mixed precision the product runs in bfloat16 while
// the optimizer updates float32 master weights.
func Linear(scope *model.Scope, x *graph.Node, outDim int, bias bool) *graph.Node {
	return linear(scope, x, outDim, bias, false)
}

// Linear is the model's dense layer (the function Linear), computed along
// the last axis in place when the sequence is split across devices: flattened
// into rows, a split of n inside the merged axis is not a tiling XLA keeps,
// and it gathers the sequence on every device. Otherwise the rows form,
// which XLA's CPU backend runs faster (a small model's training step, about
// 20 % more tokens per second).
func (m *Model) Linear(scope *model.Scope, x *graph.Node, outDim int, bias bool) *graph.Node {
	return linear(scope, x, outDim, bias, m.SplitSequence)
}

func linear(scope *model.Scope, x *graph.Node, outDim int, bias, inPlace bool) *graph.Node {
	inDim := x.Shape().Dim(-1)
	bound := 1 / math.Sqrt(float64(inDim))
	scope = scope.WithInitializer(initializer.RandomUniformFn(scope, -bound, bound)).In("dense") // layers.Dense's paths
	g := x.Graph()
	weights := graph.ConvertDType(scope.VariableWithShape("weights", shapes.Make(dtypes.Float32, inDim, outDim)).NodeValue(g), x.DType())
	var biases *graph.Node
	if bias {
		biases = graph.ConvertDType(scope.VariableWithShape("biases", shapes.Make(dtypes.Float32, outDim)).NodeValue(g), x.DType())
	}
	if !inPlace {
		return nn.Dense(x, weights, biases, compute.DenseLayoutInputOutputs)
	}
	out := graph.DotGeneral(x, []int{x.Rank() - 1}, nil, weights, []int{0}, nil)
	if biases != nil {
		out = graph.Add(out, graph.ExpandLeftToRank(biases, out.Rank()))
	}
	return out
}

// LayerNorm normalises the last axis with a learned gain (ones) and offset
// (zeros), ε = LayerNormEpsilon, in float32 whatever x's dtype (its
// statistics need float32's range), returning x's dtype.
func LayerNorm(scope *model.Scope, x *graph.Node) *graph.Node {
	return graph.ConvertDType(norm.LayerNorm(scope, toFloat32(x), -1).Epsilon(LayerNormEpsilon).Done(), x.DType())
}

// embed is the token embedding, initialised N(0, 1) as PyTorch's nn.Embedding.
func embed(scope *model.Scope, tokens *graph.Node, vocab, dim int) *graph.Node {
	scope = scope.WithInitializer(initializer.RandomNormalFn(scope, 1))
	return layers.Embedding(scope, tokens, dtypes.Float32, vocab, dim)
}
