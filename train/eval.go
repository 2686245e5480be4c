package train

import (
	"cmp"
	"context"
	"fmt"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// evaluator holds the compiled evaluation graph of a model's task (dropout
// off) and the context that interrupts an evaluation between batches.
type evaluator struct {
	ctx   context.Context
	model *models.Model
	exec  *model.Exec
}

func newEvaluator(ctx context.Context, backend *xla.Choice, store *model.Store, m *models.Model, t task) *evaluator {
	return &evaluator{ctx: ctx, model: m, exec: t.evalExec(backend.Backend, store, m)}
}

// run evaluates one batch, unless the evaluation was interrupted.
func (e *evaluator) run(args ...any) ([]*tensors.Tensor, error) {
	if err := e.ctx.Err(); err != nil {
		return nil, fmt.Errorf("evaluation interrupted: %w", err)
	}
	return e.exec.Exec(args...)
}

func (e *evaluator) finalize() { e.exec.Finalize() }

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
	s += r.bitsText()
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
// character for byte-level models, bits per token and per byte for others), or accuracy for classifiers and retrieval
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
