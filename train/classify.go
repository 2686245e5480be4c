package train

import (
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// classTask trains a classifier on token sequences (pixels, ListOps, Pathfinder).
type classTask struct {
	*exampleSet
	classes, voc int
}

func (t *classTask) kind() string { return TaskClassify }
func (t *classTask) vocab() int   { return t.voc }

func (t *classTask) predict(m *models.Model, scope *model.Scope, tokens *graph.Node) *graph.Node {
	return m.ClassLogits(scope, tokens, t.classes)
}

func (t *classTask) loss(_ *models.Model, labels, predictions []*graph.Node) *graph.Node {
	logits := graph.InsertAxes(predictions[0], 1) // [B, 1, classes]
	return graph.ReduceAllMean(tokenNLL(logits, graph.InsertAxes(labels[0], 1)))
}

// evalExec: (tokens [B,n], labels [B], -1 for filler rows) -> (Σ nll, correct, count).
func (t *classTask) evalExec(backend compute.Backend, store *model.Store, m *models.Model) *model.Exec {
	return model.MustNewExec(backend, store, func(scope *model.Scope, tokens, labels *graph.Node) (*graph.Node, *graph.Node, *graph.Node) {
		defer models.RaiseAsError()
		logits := m.ClassLogits(scope, tokens, t.classes)
		valid := graph.GreaterOrEqual(labels, graph.ScalarZero(labels.Graph(), labels.DType()))
		safe := graph.Where(valid, labels, graph.ZerosLike(labels))
		nll := graph.Reshape(tokenNLL(graph.InsertAxes(logits, 1), graph.InsertAxes(safe, 1)), labels.Shape().Dim(0))
		zero := graph.ZerosLike(nll)
		hit := graph.LogicalAnd(valid, graph.Equal(graph.ArgMax(logits, -1, labels.DType()), labels))
		count := func(b *graph.Node) *graph.Node { return graph.ReduceAllSum(graph.ConvertDType(b, dtypes.Float32)) }
		return graph.ReduceAllSum(graph.Where(valid, nll, zero)), count(hit), count(valid)
	})
}

func (t *classTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	split := spec.split
	all, err := t.evalBatches(split, spec.batches)
	if err != nil {
		return nil, err
	}
	var sumNLL float64
	var correct, count int64
	for _, b := range all {
		outs, err := r.run(
			tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen),
			tensors.FromFlatDataAndDimensions(b.Labels, b.Batch))
		if err != nil {
			return nil, err
		}
		sumNLL += float64(outs[0].Value().(float32))
		correct += int64(outs[1].Value().(float32))
		count += int64(outs[2].Value().(float32))
	}
	n := float64(max(count, 1))
	return &Eval{Split: split, Loss: sumNLL / n, Acc: float64(correct) / n, Count: count}, nil
}
