package train

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
)

// retrievalTask trains a language model on prompts followed by their answer
// (passkey, associative recall) with the next-token loss on the answer
// tokens only, and measures the share of answers predicted whole. Whole
// answers right under teacher forcing are exactly the answers greedy
// decoding produces, so the accuracy is that of generation.
type retrievalTask struct {
	*exampleSet // examples of n+1 tokens; Label is the answer's length
	voc, n      int
}

func (t *retrievalTask) kind() string { return TaskRetrieve }
func (t *retrievalTask) vocab() int   { return t.voc }

// inputLength is n: an example's n+1 tokens are n inputs and n targets.
func (t *retrievalTask) inputLength() int { return t.n }

func (t *retrievalTask) next() train.Batch {
	inputs, targets, weights := answerBatch(t.nextPadded(), t.n)
	return train.Batch{
		Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(inputs, t.batch, t.n)},
		Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(targets, t.batch, t.n),
			tensors.FromFlatDataAndDimensions(weights, t.batch, t.n)},
	}
}

// answerBatch splits rows of n+1 tokens into inputs and next-token targets
// of n, with weight 1 on the targets that are answer tokens (the last Label
// of the row; none for the filler rows of an evaluation batch, label -1).
func answerBatch(b data.ClassBatch, n int) (inputs, targets []int32, weights []float32) {
	inputs, targets, weights = make([]int32, 0, b.Batch*n), make([]int32, 0, b.Batch*n), make([]float32, b.Batch*n)
	for r := range b.Batch {
		row := b.Inputs[r*(n+1) : (r+1)*(n+1)]
		inputs, targets = append(inputs, row[:n]...), append(targets, row[1:]...)
		for j := n - max(0, int(b.Labels[r])); j < n; j++ {
			weights[r*n+j] = 1
		}
	}
	return inputs, targets, weights
}

func (t *retrievalTask) predict(m *models.Model, scope *model.Scope, tokens *graph.Node) *graph.Node {
	return m.Logits(scope, tokens)
}

func (t *retrievalTask) loss(m *models.Model, labels, predictions []*graph.Node) *graph.Node {
	nll, weights := answerNLL(m, predictions[0], labels[0], labels[1])
	return graph.Div(graph.ReduceAllSum(graph.Mul(nll, weights)), graph.ReduceAllSum(weights))
}

// answerNLL is the loss per scored position and the answer weights sliced to
// the positions the model scores (latent families: the last ones, where the
// answer is).
func answerNLL(m *models.Model, logits, targets, weights *graph.Node) (nll, scored *graph.Node) {
	from := graph.AxisRangeToEnd(m.LossStart())
	return tokenNLL(logits, graph.SliceAxis(targets, 1, from)), graph.SliceAxis(weights, 1, from)
}

// evalExec is the evaluation of a retrieval batch: (tokens, targets,
// weights) -> (Σ weight·nll, Σ weight, whole answers right, answers).
func (t *retrievalTask) evalExec(backend compute.Backend, store *model.Store, m *models.Model) *model.Exec {
	return model.MustNewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		defer models.RaiseAsError()
		tokens, targets, weights := in[0], in[1], in[2]
		logits := m.Logits(scope, tokens)
		nll, w := answerNLL(m, logits, targets, weights)
		scoredTargets := graph.SliceAxis(targets, 1, graph.AxisRangeToEnd(m.LossStart()))
		wrong := graph.ConvertDType(graph.NotEqual(graph.ArgMax(logits, -1, dtypes.Int32), scoredTargets), dtypes.Float32)
		misses := graph.ReduceSum(graph.Mul(wrong, w), 1) // [B]
		answered := graph.GreaterThan(graph.ReduceSum(w, 1), graph.ScalarZero(w.Graph(), dtypes.Float32))
		whole := graph.LogicalAnd(answered, graph.Equal(misses, graph.ZerosLike(misses)))
		count := func(b *graph.Node) *graph.Node { return graph.ReduceAllSum(graph.ConvertDType(b, dtypes.Float32)) }
		return []*graph.Node{graph.ReduceAllSum(graph.Mul(nll, w)), graph.ReduceAllSum(w), count(whole), count(answered)}
	})
}

func (t *retrievalTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	split := spec.split
	all, err := t.evalBatches(split, spec.batches)
	if err != nil {
		return nil, err
	}
	var sumNLL, answerTokens, correct, count float64
	for _, b := range all {
		inputs, targets, weights := answerBatch(b, t.n)
		outs, err := r.run(
			tensors.FromFlatDataAndDimensions(inputs, b.Batch, t.n),
			tensors.FromFlatDataAndDimensions(targets, b.Batch, t.n),
			tensors.FromFlatDataAndDimensions(weights, b.Batch, t.n))
		if err != nil {
			return nil, err
		}
		sumNLL += float64(outs[0].Value().(float32))
		answerTokens += float64(outs[1].Value().(float32))
		correct += float64(outs[2].Value().(float32))
		count += float64(outs[3].Value().(float32))
	}
	return &Eval{Split: split, Loss: sumNLL / max(answerTokens, 1), Acc: correct / max(count, 1), Count: int64(count)}, nil
}

// RetrievalResult is one distance of a retrieval experiment: a model trained
// with the fact that many tokens before the answer, measured on the test split.
type RetrievalResult struct {
	Data        string  `json:"data"`
	Model       string  `json:"model"`
	N           int     `json:"n"`
	Distance    int     `json:"distance"`
	Acc         float64 `json:"acc"`  // test answers predicted whole
	Loss        float64 `json:"loss"` // test nats per answer token
	Count       int64   `json:"count"`
	Steps       int     `json:"steps"`
	TrainLoss   float64 `json:"train_loss"`
	Seconds     float64 `json:"seconds"`
	Checkpoint  string  `json:"checkpoint"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// Text is one line.
func (r *RetrievalResult) Text() string {
	s := fmt.Sprintf("%s %s n=%d distance %d: acc %.1f%%  answer loss %.3f  (%d steps, %.1f s)",
		r.Data, r.Model, r.N, r.Distance, 100*r.Acc, r.Loss, r.Steps, r.Seconds)
	if r.Interrupted {
		s += "  interrupted"
	}
	return s
}

// Retrieval trains one model per distance on a retrieval set (o.Data:
// passkey or assoc; o.Distance is ignored) and measures each on its test
// split: can this attention pattern carry a fact that far? Runs go to
// <o.RunDir>/distance-<d> (o.RunDir "": $ECPI_HOME/runs/retrieval-<model>-<data>-<time>). done (may
// be nil) gets each result as it is ready, progress (may be nil) every step.
// Cancelling ctx stops the current run (it is measured and returned, marked
// interrupted) and skips the rest.
func Retrieval(ctx context.Context, o Options, distances []int, progress func(distance int, p Progress), done func(*RetrievalResult)) ([]*RetrievalResult, error) {
	g, ok := generatedSets[o.Data]
	if !ok || g.kind != TaskRetrieve {
		return nil, fmt.Errorf("retrieval needs data=%v, not %q", DataNamesOf(TaskRetrieve), o.Data)
	}
	if len(distances) == 0 {
		return nil, fmt.Errorf("retrieval needs at least one distance")
	}
	for _, d := range distances { // refuse a bad distance before training on the good ones
		if d < 1 {
			return nil, fmt.Errorf("distance %d must be positive", d)
		}
		check := o
		check.Distance = d
		p, err := generatedParams(check, g, o.Model.SeqLen)
		if err != nil {
			return nil, err
		}
		if _, err := g.make(p, 1, 0); err != nil {
			return nil, fmt.Errorf("distance %d: %w", d, err)
		}
	}
	if o.RunDir == "" { // one folder per experiment; milliseconds keep back-to-back experiments apart
		o.RunDir = filepath.Join(RunsDir(o.Home), fmt.Sprintf("retrieval-%s-%s-%s", o.Model.Model, o.Data, time.Now().Format("20060102-150405.000")))
	}
	var out []*RetrievalResult
	for _, d := range distances {
		r, err := retrievalRun(ctx, o, d, progress)
		if err != nil {
			return out, fmt.Errorf("distance %d: %w", d, err)
		}
		out = append(out, r)
		if done != nil {
			done(r)
		}
		if r.Interrupted {
			break
		}
	}
	return out, nil
}

func retrievalRun(ctx context.Context, o Options, distance int, progress func(int, Progress)) (*RetrievalResult, error) {
	o.Distance = distance
	if !o.Reuse {
		o.RunDir = filepath.Join(o.RunDir, fmt.Sprintf("distance-%d", distance))
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cached := ""
	if o.Reuse {
		dir, err := CacheDir(o)
		if err != nil {
			return nil, err
		}
		cached = filepath.Join(dir, retrievalFile)
		var done RetrievalResult
		if found, err := readCached(cached, &done); found || err != nil {
			return &done, err
		}
	}
	start := time.Now()
	var step func(Progress)
	if progress != nil {
		step = func(p Progress) { progress(distance, p) }
	}
	run, err := Run(ctx, o, step)
	if err != nil {
		return nil, err
	}
	l, err := Open(run.Checkpoint, o.Backend)
	if err != nil {
		return nil, err
	}
	test, err := l.evaluate(ctx, "test", 0)
	if err != nil {
		return nil, err
	}
	r := &RetrievalResult{Data: o.Data, Model: run.Model, N: l.model.Config.SeqLen, Distance: distance, Acc: test.Acc,
		Loss: test.Loss, Count: test.Count, Steps: run.Steps, TrainLoss: run.TrainLoss, Seconds: time.Since(start).Seconds(),
		Checkpoint: run.Checkpoint, Interrupted: run.Interrupted}
	if cached != "" && !r.Interrupted {
		return r, writeCached(cached, r)
	}
	return r, nil
}
