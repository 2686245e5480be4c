package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// session is one model being trained: its data, its store and GoMLX trainer.
type session struct {
	opts     Options
	task     task
	model    *models.Model
	backend  *xla.Choice
	parallel *xla.DataParallel // devices > 1: batches split across devices
	store    *model.Store
	trainer  *train.Trainer
	step     int
	losses   []float64
	lastEval *Eval
	dir      *runDir // the run folder, locked while training
	// checkpoint holds the state at step checkpointStep (the one resumed, then
	// the last saved): a state is saved once, never over a checkpoint.
	checkpoint     string
	checkpointStep int
	branchedFrom   string
	compiled       bool       // the training graph has run once in this process
	initOnHost     bool       // a fresh session on XLA, not yet initialised: see initialize
	evaluator      *evaluator // kept between evaluations on XLA: see evaluate
}

// Run trains a fresh model. progress (may be nil) is called after every step.
// Cancelling ctx (Ctrl-C) stops after the current step and saves a checkpoint.
func Run(ctx context.Context, o Options, progress func(Progress)) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Reuse {
		return runCached(ctx, o, progress)
	}
	s, err := newSession(o, nil)
	if err != nil {
		return nil, err
	}
	if err := CheckMemory(s.model.Config, o.Batch, true); err != nil {
		return nil, err
	}
	if err := s.claimNewRun(); err != nil {
		return nil, err
	}
	defer s.dir.release()
	return s.loop(ctx, progress)
}

// Resume continues the run whose checkpoint (or run folder) is at path.
// overrides may change steps (the total to reach), eval_every, eval_batches,
// keep and backend; any other option must match the saved run.
//
// A run continues in its own folder when resumed from its newest checkpoint;
// from an older one it continues in a new folder <run>-from-<step>, so that
// no checkpoint is replaced and the run's newest checkpoint stays its own.
func Resume(ctx context.Context, path string, overrides map[string]string, progress func(Progress)) (*Result, error) {
	c, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	m, dir := c.manifest, c.dir
	o := savedOptions(m)
	for name, value := range overrides {
		if err := checkOverride(&o, m, name, value); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
		}
	}
	if o.Steps <= m.Step {
		return nil, fmt.Errorf("checkpoint %s is at step %d already; give steps= above it to train further", dir, m.Step)
	}
	s, err := newSession(o, m)
	if err != nil {
		return nil, err
	}
	if err := CheckMemory(s.model.Config, o.Batch, true); err != nil {
		return nil, err
	}
	if err := s.load(c); err != nil {
		return nil, err
	}
	if err := s.claimResumedRun(); err != nil {
		return nil, err
	}
	defer s.dir.release()
	return s.loop(ctx, progress)
}

// newSession builds data, model, backend, store and trainer. saved, when
// resuming, fixes the model config to the checkpoint's.
func newSession(o Options, saved *Manifest) (*session, error) {
	cfg, t, err := buildTask(o, saved)
	if err != nil {
		return nil, err
	}
	return sessionFor(o, cfg, t, saved)
}

// sessionFor builds the model of cfg, the backend, store and trainer for task t.
func sessionFor(o Options, cfg models.Config, t task, saved *Manifest) (*session, error) {
	m, err := models.New(cfg)
	if err != nil {
		return nil, err
	}
	m.Compute = computeType(o.Precision)
	m.SplitSequence = o.Devices > 1 && o.Parallel == "sequence"
	m.Fused = models.Fused(o.Fused)
	choice, err := Backend(o.Backend)
	if err != nil {
		return nil, err
	}
	s := &session{opts: o, task: t, model: m, backend: choice, store: model.NewStore(), initOnHost: saved == nil && choice.Name != "go"}
	if err := s.store.SetRNGStateFromSeed(o.Seed); err != nil {
		return nil, err
	}
	s.trainer = train.NewTrainer(choice.Backend, s.store,
		func(scope *model.Scope, inputs []*graph.Node) *graph.Node {
			defer models.RaiseAsError()
			return t.predict(m, scope, inputs[0])
		},
		func(labels, predictions []*graph.Node) *graph.Node {
			defer models.RaiseAsError()
			return t.loss(m, labels, predictions)
		},
		newAdamW(o), nil, nil)
	if o.Accum > 1 {
		if err := s.trainer.AccumulateGradients(o.Accum); err != nil {
			return nil, err
		}
	}
	if o.Devices > 1 {
		if s.parallel, err = xla.NewDataParallel(choice.Backend, o.Devices, map[string]string{"data": xla.DataAxis, "sequence": xla.SequenceAxis}[o.Parallel]); err != nil {
			return nil, fmt.Errorf("option devices=%d on backend %s: %w", o.Devices, choice.Name, err)
		}
		// GoMLX v0.28.16 creates the RNG state variable without its store, and a
		// distributed graph that reads a variable with no sharding spec asks the
		// store for the default one: a nil dereference once dropout draws numbers.
		// A replicated spec set beforehand avoids the lookup.
		rng := s.store.GetVariable(rngPath)
		if err := rng.SetShardingSpec(distributed.NewReplicatedShardingSpec(s.parallel.Mesh)); err != nil {
			return nil, err
		}
	}
	optimizer.LearningRateVar(s.store.RootScope(), dtypes.Float32, o.LR)
	return s, nil
}

// buildTask loads or makes the data of o's dataset and completes the model
// config: n as the data sets it, the vocabulary from its tokenizer (or the
// data). saved, when resuming, fixes the config to the checkpoint's.
func buildTask(o Options, saved *Manifest) (models.Config, task, error) {
	d, err := datasetOf(o.Data)
	if err != nil {
		return models.Config{}, nil, err
	}
	if err := d.checkOptions(o); err != nil {
		return models.Config{}, nil, err
	}
	cfg := o.Model
	if saved != nil {
		cfg = saved.Config
	}
	t, cfg, err := d.Build(o, cfg)
	if err != nil {
		return cfg, nil, err
	}
	if saved != nil && cfg.Vocab != t.vocab() {
		return cfg, nil, fmt.Errorf("checkpoint has vocab=%d but tokenizer %s has %d tokens: tokenizer and model do not match", cfg.Vocab, o.Tokenizer, t.vocab())
	}
	cfg.Vocab = t.vocab()
	if !cfg.Causal && !d.BothWays {
		return cfg, nil, fmt.Errorf("option causal=false lets every position see the tokens it must predict; it is for classification only, not data %s", o.Data)
	}
	return cfg, t, cfg.Validate()
}

// claimNewRun locks the session's run folder (claimNewRun).
func (s *session) claimNewRun() (err error) {
	s.dir, err = claimNewRun(s.opts.RunDir, RunsDir(s.opts.Home), s.model.Config.Model+"-"+s.opts.Data)
	if err == nil {
		s.opts.RunDir = s.dir.path
	}
	return err
}

// claimResumedRun locks the folder the session continues in (claimResumedRun).
func (s *session) claimResumedRun() (err error) {
	var branched bool
	if s.dir, branched, err = claimResumedRun(s.checkpoint, s.step); err != nil {
		return err
	}
	s.opts.RunDir = s.dir.path
	if branched {
		s.branchedFrom, s.checkpoint = s.checkpoint, ""
	}
	return nil
}

func (s *session) loop(ctx context.Context, progress func(Progress)) (*Result, error) {
	o := s.opts
	tokensPerStep := float64(o.Batch * o.Accum * s.model.Config.SeqLen)
	start := time.Now()
	var trainTime, firstStep time.Duration
	var timedSteps int
	var checkpoint string
	interrupted := false
	for s.step < o.Steps {
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		compiling := !s.compiled
		if compiling && progress != nil {
			progress(Progress{Step: s.step, Steps: o.Steps, Compiling: true, Elapsed: time.Since(start)})
		}
		t0 := time.Now()
		if err := s.initialize(); err != nil { // timed with the first step, whose compile it shortens
			return nil, err
		}
		loss, err := s.trainStep()
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", s.step+1, err)
		}
		if compiling { // the first step of a process compiles the graph: not timed
			firstStep, s.compiled = time.Since(t0), true
		} else {
			trainTime += time.Since(t0)
			timedSteps++
		}
		s.step++
		s.losses = append(s.losses, loss)
		p := Progress{Step: s.step, Steps: o.Steps, Loss: loss, LR: o.LearningRate(s.step), GradNorm: s.gradNorm(), Elapsed: time.Since(start)}
		if timedSteps > 0 {
			p.TokensPerS = tokensPerStep * float64(timedSteps) / trainTime.Seconds()
		}
		if s.step == o.Steps || (o.EvalEvery > 0 && s.step%o.EvalEvery == 0) {
			if p.Eval, err = s.evaluate(ctx, "valid", o.EvalBatches); ctx.Err() != nil {
				interrupted = true // the step stands; its evaluation does not
				break
			} else if err != nil {
				return nil, err
			}
			if math.IsNaN(p.Eval.Loss) || math.IsInf(p.Eval.Loss, 0) {
				return nil, fmt.Errorf("step %d: the validation loss is not finite; lower lr= or raise warmup=", s.step)
			}
			p.Eval.Step = s.step
			s.lastEval = p.Eval
			if checkpoint, err = s.save(); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			progress(p)
		}
	}
	if interrupted || checkpoint == "" {
		var err error
		if checkpoint, err = s.save(); err != nil {
			return nil, err
		}
	}
	r := s.result(checkpoint, time.Since(start))
	r.Interrupted = interrupted
	if timedSteps > 0 {
		r.TokensPerS = tokensPerStep * float64(timedSteps) / trainTime.Seconds()
		r.MsPerStep = 1000 * trainTime.Seconds() / float64(timedSteps)
		// The first step compiled the graph, then ran like the others.
		if firstStep > 0 {
			r.CompileMS = max(0, 1000*firstStep.Seconds()-r.MsPerStep)
		}
	}
	return r, nil
}

// evaluate measures the current weights. On XLA the session keeps its
// evaluator between evaluations: compiling it took 0.6 s of every evaluation
// of the small bench model. The Go backend, whose compile costs milliseconds,
// builds a fresh one every time, as it has since a reused model.Exec of GoMLX
// v0.28.16 was seen to keep reading the variable values of its first run
// there. TestEvaluationSeesTraining checks both backends.
func (s *session) evaluate(ctx context.Context, split string, batches int) (*Eval, error) {
	if err := s.initialize(); err != nil {
		return nil, err
	}
	e := s.evaluator
	if e == nil {
		e = newEvaluator(ctx, s.backend, s.store, s.model, s.task)
		if s.backend.Name == "go" {
			defer e.finalize()
		} else {
			s.evaluator = e
		}
	}
	e.ctx = ctx
	return s.task.evaluate(e, evalSpec{split: split, batches: batches, protocol: s.opts.Protocol})
}

// trainStep runs one optimizer step (accum micro-batches) and returns its mean loss.
func (s *session) trainStep() (float64, error) {
	lr := s.opts.LearningRate(s.step + 1)
	lrVar := optimizer.LearningRateVar(s.store.RootScope(), dtypes.Float32, lr)
	if err := lrVar.SetValue(tensors.FromScalar(float32(lr))); err != nil {
		return 0, err
	}
	var sum float64
	step := s.trainer.TrainStep
	if s.parallel != nil {
		step = func(b train.Batch) ([]*tensors.Tensor, error) { return s.parallel.TrainStep(s.trainer, b) }
	}
	for range s.opts.Accum {
		metrics, err := step(s.task.next())
		if err != nil {
			return 0, err
		}
		sum += float64(metrics[0].Value().(float32))
	}
	loss := sum / float64(s.opts.Accum)
	if norm := s.gradNorm(); math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, errors.New("the loss or its gradient is not finite; lower lr= or raise warmup=")
	}
	return loss, nil
}

func (s *session) gradNorm() float64 {
	v := s.store.GetVariable("/train/" + gradNormVar)
	if v == nil {
		return 0
	}
	return float64(v.MustValue().Value().(float32))
}

// save checkpoints the current state, unless a checkpoint holds it already
// (a resumed run stopped before its first step).
func (s *session) save() (string, error) {
	if s.checkpoint != "" && s.checkpointStep == s.step {
		return s.checkpoint, nil
	}
	m := &Manifest{Format: manifestFormat, Family: s.model.Config.Model, Config: s.model.Config,
		Task: s.task.kind(), Options: s.opts, Step: s.step, Batcher: s.task.state(), Losses: s.losses, Eval: s.lastEval}
	path, err := saveCheckpoint(s.opts.RunDir, m, s.store, s.opts.Keep)
	if err != nil {
		return "", err
	}
	s.checkpoint, s.checkpointStep = path, s.step
	return path, nil
}

func (s *session) result(checkpoint string, elapsed time.Duration) *Result {
	r := &Result{Model: s.model.Config.Model, Data: s.opts.Data, Task: s.task.kind(), Config: s.model.Config,
		Params: countParams(s.store), Backend: s.backend.Name, Devices: s.opts.Devices, Steps: s.step, Seconds: elapsed.Seconds(),
		Checkpoint: checkpoint, Run: s.opts.RunDir, Losses: s.losses, BranchedFrom: s.branchedFrom}
	if d, err := datasetOf(s.opts.Data); err == nil && d.reads("tokenizer") {
		r.Tokenizer = s.opts.Tokenizer
	}
	tail := s.losses[max(0, len(s.losses)-10):]
	for _, l := range tail {
		r.TrainLoss += l / float64(len(tail))
	}
	if e := s.lastEval; e != nil {
		r.Eval = e
		r.ValidLoss, r.ValidPPL, r.ValidBPC, r.ValidBPB, r.ValidStep = e.Loss, e.PPL, e.BPC, e.BPB, e.Step
		if s.task.kind() != TaskLM {
			acc := e.Acc
			r.ValidAcc = &acc
		}
	}
	return r
}
