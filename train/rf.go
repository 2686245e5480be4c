package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// RFOptions sets a receptive-field measurement.
type RFOptions struct {
	Position  int     // output position i; -1: the last (n-1)
	Threshold float64 // a position counts when its gradient norm exceeds Threshold·max
	Seed      uint64  // random input tokens (and random weights when untrained)
}

// RFLayer is the receptive field after the first Layers layers: the distance
// from i back to the farthest input position whose gradient reaches i
// (Measured), and what the pattern allows at most (Bound; -1 when the family
// has no bound below i).
type RFLayer struct {
	Layers   int `json:"layers"`
	Measured int `json:"measured"`
	Bound    int `json:"bound"`
	From     int `json:"from"` // the farthest position reached
}

// RFResult is the receptive field per depth.
type RFResult struct {
	Model     string    `json:"model"`
	Trained   bool      `json:"trained"`
	Position  int       `json:"position"`
	Threshold float64   `json:"threshold"`
	Layers    []RFLayer `json:"layers"`
}

// Text is a table of measured and bound per depth.
func (r *RFResult) Text() string {
	var b strings.Builder
	state := "random"
	if r.Trained {
		state = "trained"
	}
	fmt.Fprintf(&b, "receptive field of %s (%s weights) at position %d, threshold %g of the largest gradient\n", r.Model, state, r.Position, r.Threshold)
	b.WriteString("layers  measured  bound\n")
	for _, l := range r.Layers {
		bound := fmt.Sprint(l.Bound)
		if l.Bound < 0 {
			bound = "-"
		}
		fmt.Fprintf(&b, "%6d  %8d  %5s\n", l.Layers, l.Measured, bound)
	}
	return b.String()
}

// RFBound is the analytical reach back from position i after `layers`
// layers, as the family states it (local k·ℓ, π-Attention k·ℓ + π·ceil(log2 ℓ),
// ECP back to the start of half-segment floor(i/h)-ℓ, ...); -1 for families
// with no bound below i.
func RFBound(cfg models.Config, i, layers int) int {
	if bound, ok := cfg.ReceptiveFieldBound(i, layers); ok {
		return bound
	}
	return -1
}

// ReceptiveField measures, for depth ℓ = 1..L, the gradient of the hidden
// state at position i (summed over its features) with respect to every input
// embedding, using the model truncated to its first ℓ layers. values holds
// trained weights (nil: random weights from o.Seed). Inputs are random tokens.
//
// To get one gradient per position the embedding table is replaced, inside
// the graph, by the rows of the actual input, and position j reads row j.
//
// Cancelling ctx stops between depths.
func ReceptiveField(ctx context.Context, cfg models.Config, values map[string]*tensors.Tensor, backend *xla.Choice, o RFOptions) (*RFResult, error) {
	cfg = cfg.Resolved()
	if err := CheckMemory(cfg, 1, true); err != nil {
		return nil, err
	}
	n := cfg.SeqLen
	i := o.Position
	if i < 0 {
		i = n - 1
	}
	start := 0
	if full, err := models.New(cfg); err == nil {
		start = full.LossStart()
	} else {
		return nil, err
	}
	if i >= n || i < start {
		return nil, fmt.Errorf("position %d must be between %d (the first position with an output) and n-1=%d", i, start, n-1)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x7266))
	tokens := make([]int32, n)
	for j := range tokens {
		tokens[j] = int32(rng.IntN(cfg.Vocab))
	}
	r := &RFResult{Model: cfg.Model, Trained: values != nil, Position: i, Threshold: o.Threshold}
	for depth := 1; depth <= cfg.Layers; depth++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("receptive field interrupted after %d of %d depths: %w", depth-1, cfg.Layers, err)
		}
		norms, err := positionGradients(cfg, depth, values, backend, tokens, i-start, o.Seed)
		if err != nil {
			return nil, err
		}
		from := farthest(norms[:i+1], o.Threshold)
		r.Layers = append(r.Layers, RFLayer{Layers: depth, Measured: i - from, Bound: RFBound(cfg, i, depth), From: from})
	}
	return r, nil
}

// farthest is the first position whose norm exceeds threshold·max.
func farthest(norms []float32, threshold float64) int {
	var top float32
	for _, v := range norms {
		top = max(top, v)
	}
	for j, v := range norms {
		if float64(v) > threshold*float64(top) {
			return j
		}
	}
	return len(norms) - 1
}

// positionGradients returns ‖∂(Σ hidden[out])/∂embedding_j‖ for every input
// position j of the model cut to `depth` layers.
func positionGradients(cfg models.Config, depth int, values map[string]*tensors.Tensor, backend *xla.Choice, tokens []int32, out int, seed uint64) ([]float32, error) {
	n := cfg.SeqLen
	cut := cfg
	cut.Layers = depth
	cut.Vocab = max(cfg.Vocab, n) // room for one table row per position
	m, err := models.New(cut)
	if err != nil {
		return nil, err
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(int64(seed)); err != nil {
		return nil, err
	}
	if values != nil {
		widened, err := widenEmbedding(values, cut.Vocab)
		if err != nil {
			return nil, err
		}
		store.SetLoader(&loader{values: widened})
	}
	exec, err := model.NewExec(backend.Backend, store, func(scope *model.Scope, input *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		g := input.Graph()
		table := scope.At("embed").VariableWithShape("embeddings", shapes.Make(dtypes.Float32, cut.Vocab, cut.Dim))
		rows := graph.Gather(table.NodeValue(g), graph.Reshape(input, n, 1)) // [n, d]: the input's embeddings
		perPosition := rows
		if cut.Vocab > n {
			rest := graph.SliceAxis(table.NodeValue(g), 0, graph.AxisRangeToEnd(n))
			perPosition = graph.Concatenate([]*graph.Node{rows, rest}, 0)
		}
		table.SetNodeValue(perPosition)
		positions := graph.Iota(g, shapes.Make(dtypes.Int32, 1, n), 1)
		hidden := m.Trunk(scope, positions)
		// A fixed random direction: the plain sum of a layer-normed vector is constant.
		direction := graph.Reshape(graph.Const(g, randomDirection(cut.Dim, seed)), 1, 1, cut.Dim)
		target := graph.ReduceAllSum(graph.Mul(graph.SliceAxis(hidden, 1, graph.AxisRange(out, out+1)), direction))
		grad := graph.Gradient(target, perPosition)[0]
		grad = graph.SliceAxis(grad, 0, graph.AxisRange(0, n))
		return graph.Sqrt(graph.ReduceSum(graph.Square(grad), -1))
	})
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(tokens, 1, n))
	if err != nil {
		return nil, err
	}
	return tensors.MustCopyFlatData[float32](outs[0]), nil
}

func randomDirection(dim int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x646972))
	out := make([]float32, dim)
	for i := range out {
		out[i] = float32(rng.NormFloat64())
	}
	return out
}

// widenEmbedding returns a copy of values, for one store, with the embedding
// table padded with zero rows to `rows` rows (the trunk does not read the
// logits layer, whose shape would differ). The copy matters: a store takes
// ownership of what its loader serves, and the next depth needs the values again.
func widenEmbedding(values map[string]*tensors.Tensor, rows int) (map[string]*tensors.Tensor, error) {
	const path = "/embed/embeddings"
	out := make(map[string]*tensors.Tensor, len(values))
	for k, v := range values {
		clone, err := v.LocalClone()
		if err != nil {
			return nil, fmt.Errorf("copying variable %s: %w", k, err)
		}
		out[k] = clone
	}
	table, ok := out[path]
	if !ok || table.Shape().Dim(0) >= rows {
		return out, nil
	}
	dim := table.Shape().Dim(1)
	flat := make([]float32, rows*dim)
	copy(flat, tensors.MustCopyFlatData[float32](table))
	out[path] = tensors.FromFlatDataAndDimensions(flat, rows, dim)
	return out, nil
}

// ReceptiveField measures the trained model of the checkpoint.
func (l *Loaded) ReceptiveField(ctx context.Context, o RFOptions) (*RFResult, error) {
	c, err := readCheckpoint(l.Dir)
	if err != nil {
		return nil, err
	}
	if !slices.EqualFunc(c.manifest.Variables, l.Manifest.Variables, sameVariable) {
		return nil, fmt.Errorf("checkpoint %s changed since it was opened", l.Dir)
	}
	values, err := readVariables(c)
	if err != nil {
		return nil, err
	}
	return ReceptiveField(ctx, l.model.Config, values, l.backend, o)
}
