package train

import (
	"cmp"
	"context"
	"fmt"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// evaluator holds the compiled evaluation graphs of a model (dropout off)
// and the context that interrupts an evaluation between batches.
type evaluator struct {
	ctx        context.Context
	model      *models.Model
	lmExec     *model.Exec
	classExec  *model.Exec
	answerExec *model.Exec
	matchExec  *model.Exec
}

func newEvaluator(ctx context.Context, backend *xla.Choice, store *model.Store, m *models.Model, t task) *evaluator {
	e := &evaluator{ctx: ctx, model: m}
	switch t := t.(type) {
	case *lmTask:
		// (tokens [B,n], targets [B,n]) -> the loss of every scored position [B, n-start]
		e.lmExec = model.MustNewExec(backend.Backend, store, func(scope *model.Scope, tokens, targets *graph.Node) *graph.Node {
			defer models.RaiseAsError()
			logits := m.Logits(scope, tokens)
			return tokenNLL(logits, graph.SliceAxis(targets, 1, graph.AxisRangeToEnd(m.LossStart())))
		})
	case *classTask:
		// (tokens [B,n], labels [B], -1 for filler rows) -> (Σ nll, correct, count)
		e.classExec = model.MustNewExec(backend.Backend, store, func(scope *model.Scope, tokens, labels *graph.Node) (*graph.Node, *graph.Node, *graph.Node) {
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
	case *retrievalTask:
		e.answerExec = model.MustNewExec(backend.Backend, store, answerGraph(m))
	case *matchTask:
		e.matchExec = model.MustNewExec(backend.Backend, store, func(scope *model.Scope, pairs *graph.Node) *graph.Node {
			defer models.RaiseAsError()
			return t.embed(m, scope, pairs)
		})
	}
	return e
}

// run evaluates one batch with exec, unless the evaluation was interrupted.
func (e *evaluator) run(exec *model.Exec, args ...any) ([]*tensors.Tensor, error) {
	if err := e.ctx.Err(); err != nil {
		return nil, fmt.Errorf("evaluation interrupted: %w", err)
	}
	return exec.Exec(args...)
}

func (e *evaluator) finalize() {
	for _, exec := range []*model.Exec{e.lmExec, e.classExec, e.answerExec, e.matchExec} {
		if exec != nil {
			exec.Finalize()
		}
	}
}

// EvalOptions says what to evaluate.
type EvalOptions struct {
	Checkpoint string // checkpoint or run folder
	Split      string // valid | test
	Batches    int    // 0: the whole split
	Protocol   string // language models: ProtocolECPI (default) or ProtocolAuthors
	Backend    string
}

// evalSpec is one evaluation: the split, a cap on batches, the LM protocol.
type evalSpec struct {
	split    string
	batches  int
	protocol string
}

// The two ways of scoring a language model: ecpi's scores every target of the
// split once; the authors' matches the ECP paper's numbers (see lmTask).
const (
	ProtocolECPI    = "ecpi"
	ProtocolAuthors = "authors"
)

// Protocols lists the LM evaluation protocols.
var Protocols = []string{ProtocolECPI, ProtocolAuthors}

// EvalResult is a checkpoint's evaluation.
type EvalResult struct {
	Eval
	Model      string `json:"model"`
	Task       string `json:"task"`
	Data       string `json:"data"`
	Step       int    `json:"step"`
	Checkpoint string `json:"checkpoint"`
}

// Text is the human summary.
func (r *EvalResult) Text() string {
	s := fmt.Sprintf("%s on %s (%s split, step %d): loss %.4f", r.Model, r.Data, r.Split, r.Step, r.Loss)
	if r.PPL > 0 {
		s += fmt.Sprintf("  ppl %.3f", r.PPL)
	}
	if r.BPC > 0 {
		s += fmt.Sprintf("  bpc %.4f", r.BPC)
	}
	if r.Task != TaskLM {
		s += fmt.Sprintf("  acc %.2f%%", 100*r.Acc)
	}
	s += fmt.Sprintf("  (%d scored", r.Count)
	if r.Protocol != "" {
		s += ", " + r.Protocol + " protocol"
	}
	return s + ")"
}

// Evaluate measures a checkpoint on a split: perplexity (and bits per
// character for byte-level models), or accuracy for classifiers and retrieval
// (whole answers).
func Evaluate(ctx context.Context, o EvalOptions) (*EvalResult, error) {
	l, err := Open(o.Checkpoint, o.Backend)
	if err != nil {
		return nil, err
	}
	return l.Evaluate(ctx, o)
}

// Evaluate measures the loaded checkpoint as EvalOptions say (its Checkpoint
// and Backend are the Loaded's); the evaluation graph is compiled once.
// Cancelling ctx stops the evaluation between batches.
func (l *Loaded) Evaluate(ctx context.Context, o EvalOptions) (*EvalResult, error) {
	split := cmp.Or(o.Split, "valid")
	if l.evaluator == nil {
		l.evaluator = newEvaluator(ctx, l.backend, l.store, l.model, l.task)
	}
	l.evaluator.ctx = ctx
	spec := evalSpec{split: split, batches: o.Batches, protocol: cmp.Or(o.Protocol, l.opts.Protocol)}
	e, err := l.task.evaluate(l.evaluator, spec)
	if err != nil {
		return nil, err
	}
	return &EvalResult{Eval: *e, Model: l.model.Config.Model, Task: l.task.kind(), Data: l.opts.Data, Step: l.Manifest.Step, Checkpoint: l.Dir}, nil
}
