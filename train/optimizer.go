package train

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// adamW is Adam with global-norm gradient clipping and decoupled weight decay
// on weight matrices only (GoMLX's Adam decays every variable). It wraps
// GoMLX's Adam, so the moments, the step counters and the learning-rate
// variable are the ones GoMLX names and checkpoints.
type adamW struct {
	adam        optimizer.Interface
	weightDecay float64
	clip        float64
}

// gradNormVar holds the global gradient norm of the last step (before
// clipping), for the progress display.
const gradNormVar = "grad_norm"

func newAdamW(o Options) *adamW {
	adam := optimizer.Adam().Betas(o.Beta1, o.Beta2).Epsilon(1e-8).WeightDecay(0).Done()
	return &adamW{adam: adam, weightDecay: o.WeightDecay, clip: o.Clip}
}

// decays is the weight-decay rule: trainable variables called "weights" of
// rank >= 2, i.e. the matrices of dense layers and Compressed Double
// Attention's learned C -> c map. Embeddings, layer-norm gains and offsets
// and biases are not decayed.
func decays(v *model.Variable) bool {
	return v.Name() == "weights" && v.Shape().Rank() >= 2
}

func (a *adamW) UpdateGraph(scope *model.Scope, g *graph.Graph, loss *graph.Node) {
	a.UpdateGraphWithGradients(scope, scope.BuildTrainableVariablesGradientsGraph(loss), loss.DType())
}

// UpdateGraphWithGradients clips, applies Adam, then decays: w -= lr·wd·w_old,
// which is PyTorch's AdamW for the decayed variables.
func (a *adamW) UpdateGraphWithGradients(scope *model.Scope, grads []*graph.Node, lossDType dtypes.DType) {
	g := grads[0].Graph()
	norm := globalNorm(grads)
	normVar := scope.Store().Scope("/train").VariableWithValue(gradNormVar, float32(0)).SetTrainable(false)
	normVar.SetNodeValue(graph.ConvertDType(norm, dtypes.Float32))
	if a.clip > 0 {
		scale := graph.Min(graph.OnesLike(norm), graph.Div(graph.Scalar(g, norm.DType(), a.clip), graph.AddScalar(norm, 1e-6)))
		for i := range grads {
			grads[i] = graph.Mul(grads[i], graph.ConvertDType(scale, grads[i].DType()))
		}
	}
	var decayed []*model.Variable
	var before []*graph.Node
	for v := range scope.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) && decays(v) {
			decayed = append(decayed, v)
			before = append(before, v.NodeValue(g))
		}
	}
	a.adam.(interface {
		UpdateGraphWithGradients(*model.Scope, []*graph.Node, dtypes.DType)
	}).UpdateGraphWithGradients(scope, grads, lossDType)
	if a.weightDecay == 0 {
		return
	}
	lr := optimizer.LearningRateVar(scope, lossDType, 0).NodeValue(g)
	for i, v := range decayed {
		step := graph.Mul(graph.MulScalar(lr, a.weightDecay), graph.ConvertDType(before[i], lr.DType()))
		v.SetNodeValue(graph.Sub(v.NodeValue(g), graph.ConvertDType(step, v.Shape().DType)))
	}
}

func (a *adamW) Clear(scope *model.Scope) error { return a.adam.Clear(scope) }

// globalNorm is sqrt(Σ‖g‖²) over every gradient, in float32.
func globalNorm(grads []*graph.Node) *graph.Node {
	var total *graph.Node
	for _, grad := range grads {
		sq := graph.ReduceAllSum(graph.Square(graph.ConvertDType(grad, dtypes.Float32)))
		if total == nil {
			total = sq
		} else {
			total = graph.Add(total, sq)
		}
	}
	return graph.Sqrt(total)
}
