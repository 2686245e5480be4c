package train

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/xla"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// Progress is reported after every optimizer step (and carries the
// evaluation on evaluation steps).
type Progress struct {
	Step       int           `json:"step"`
	Steps      int           `json:"steps"`
	Loss       float64       `json:"loss"`
	LR         float64       `json:"lr"`
	GradNorm   float64       `json:"grad_norm"`
	TokensPerS float64       `json:"tokens_per_s"`
	Elapsed    time.Duration `json:"elapsed"`
	Eval       *Eval         `json:"eval,omitempty"`
	// Compiling is a report before the first step of a process: its graph is
	// being compiled (seconds on XLA); Loss and the rest are not set.
	Compiling bool `json:"compiling,omitempty"`
}

// Result is the outcome of a training run; its JSON is what `ecpi train --json` prints.
type Result struct {
	Model       string        `json:"model"`
	Data        string        `json:"data"`
	Task        string        `json:"task"`
	Tokenizer   string        `json:"tokenizer,omitempty"`
	Config      models.Config `json:"config"`
	Params      int64         `json:"params"`
	Backend     string        `json:"backend"`
	Devices     int           `json:"devices"`
	Steps       int           `json:"steps"`
	TrainLoss   float64       `json:"train_loss"` // mean of the last 10 steps
	ValidLoss   float64       `json:"valid_loss"`
	ValidPPL    float64       `json:"valid_ppl,omitempty"`
	ValidBPC    float64       `json:"valid_bpc,omitempty"`
	ValidAcc    *float64      `json:"valid_acc,omitempty"`
	ValidStep   int           `json:"valid_step"` // the step the valid figures were measured at; 0: not evaluated
	TokensPerS  float64       `json:"tokens_per_s"`
	MsPerStep   float64       `json:"ms_per_step"`
	CompileMS   float64       `json:"compile_ms"` // compiling the training graph (the first step's extra time)
	Seconds     float64       `json:"seconds"`
	Checkpoint  string        `json:"checkpoint"`
	Run         string        `json:"run"`
	Interrupted bool          `json:"interrupted,omitempty"`
	// BranchedFrom is the checkpoint a resume continued in a new run folder,
	// since its own run had later checkpoints (kept as they were).
	BranchedFrom string    `json:"branched_from,omitempty"`
	Losses       []float64 `json:"losses"`         // every step's train loss, from step 1
	Eval         *Eval     `json:"eval,omitempty"` // the last evaluation in full (loss by position, recall)
}

// Text is the human summary.
func (r *Result) Text() string {
	var b strings.Builder
	task := r.Task
	if r.Tokenizer != "" {
		task += ", " + r.Tokenizer
	}
	fmt.Fprintf(&b, "%s on %s (%s): %d steps, %d parameters, backend %s", r.Model, r.Data, task, r.Steps, r.Params, r.Backend)
	if r.Devices > 1 {
		fmt.Fprintf(&b, " on %d devices", r.Devices)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "train loss %.4f   %s\n", r.TrainLoss, r.validText())
	speed := "speed not measured (the first step compiles and is not timed)"
	if r.MsPerStep > 0 {
		speed = fmt.Sprintf("%.0f tokens/s, %.0f ms/step", r.TokensPerS, r.MsPerStep)
	}
	fmt.Fprintf(&b, "%s, %.1f s   %s\n", speed, r.Seconds, Sparkline(r.Losses, 40))
	if r.Interrupted {
		b.WriteString("interrupted: ")
	}
	fmt.Fprintf(&b, "checkpoint %s", r.Checkpoint)
	if r.BranchedFrom != "" {
		fmt.Fprintf(&b, "\nresumed from %s in a new run folder: its own run has later checkpoints, kept as they were", r.BranchedFrom)
	}
	return b.String()
}

// validText is what the last evaluation measured, or that there was none.
func (r *Result) validText() string {
	if r.ValidStep == 0 {
		return "no evaluation yet"
	}
	if r.Eval != nil && r.Eval.Recall != nil {
		return "valid " + r.Eval.recallText()
	}
	s := fmt.Sprintf("valid loss %.4f", r.ValidLoss)
	if r.ValidPPL > 0 {
		s += fmt.Sprintf("   valid ppl %.3f", r.ValidPPL)
	}
	if r.ValidBPC > 0 {
		s += fmt.Sprintf("   valid bpc %.4f", r.ValidBPC)
	}
	if r.ValidAcc != nil {
		s += fmt.Sprintf("   valid acc %.2f%%", 100**r.ValidAcc)
	}
	if r.ValidStep != r.Steps {
		s += fmt.Sprintf("   (evaluated at step %d)", r.ValidStep)
	}
	return s
}

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

// savedOptions are a checkpoint's options on this machine: its ECPI_HOME,
// and one device for checkpoints saved before devices= existed.
func savedOptions(m *Manifest) Options {
	o := m.Options
	o.Home = DefaultOptions().Home
	o.Devices = max(o.Devices, 1)
	return o
}

// resumable are the options a resumed run may change.
var resumable = []string{"steps", "eval_every", "eval_batches", "protocol", "keep", "backend", "devices"}

// Resumable reports whether a resumed run may change option name; any other
// option given to Resume must repeat the run's value.
func Resumable(name string) bool { return slices.Contains(resumable, name) }

// checkOverride applies an option given to resume: a resumable one changes
// the run, any other must repeat what the run was saved with.
func checkOverride(o *Options, m *Manifest, name, value string) error {
	if slices.Contains(resumable, name) {
		if err := optionTable.Set(o, name, value); err != nil {
			return err
		}
		return o.Validate()
	}
	if name == "model" && value != m.Family {
		return fmt.Errorf("it is a %s model, not %s", m.Family, value)
	}
	saved := o.Get(name)
	if !IsOption(name) {
		if !models.IsOption(name) {
			return fmt.Errorf("unknown option %q", name)
		}
		if !m.Config.Family().Reads(name) {
			return fmt.Errorf("option %s does not apply to its model %s", name, m.Family)
		}
		saved = m.Config.Get(name)
	}
	if name != "model" && saved != value {
		return fmt.Errorf("resume cannot change %s (saved with %s=%s); start a new run instead", name, name, saved)
	}
	return nil
}

// newSession builds data, model, backend, store and trainer. saved, when
// resuming, fixes the model config to the checkpoint's.
func newSession(o Options, saved *Manifest) (*session, error) {
	kind, err := TaskOf(o.Data)
	if err != nil {
		return nil, err
	}
	cfg, t, err := buildTask(o, kind, saved)
	if err != nil {
		return nil, err
	}
	m, err := models.New(cfg)
	if err != nil {
		return nil, err
	}
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
		if s.parallel, err = xla.NewDataParallel(choice.Backend, o.Devices); err != nil {
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

// buildTask loads the data and completes the model config: the vocabulary
// from the tokenizer (or dataset); n from the data for image sets, while a
// generated set is made for the model's n (0: the set's default) and a corpus
// is cut into windows of n (0: models.DefaultSeqLen).
func buildTask(o Options, kind string, saved *Manifest) (models.Config, task, error) {
	if err := checkDataOptions(o); err != nil {
		return models.Config{}, nil, err
	}
	cfg := o.Model
	if saved != nil {
		cfg = saved.Config
	}
	var t task
	switch g, generated := generatedSets[o.Data]; {
	case kind == TaskMatch:
		var err error
		if t, cfg, err = newMatchTask(o, cfg); err != nil {
			return cfg, nil, err
		}
	case generated:
		p, err := generatedParams(o, g, cfg.SeqLen)
		if err != nil {
			return cfg, nil, err
		}
		if t, err = newGeneratedTask(o, g, p); err != nil {
			return cfg, nil, err
		}
		cfg.SeqLen = p.n
	case kind == TaskLM:
		cfg.SeqLen = cmp.Or(cfg.SeqLen, models.DefaultSeqLen)
		if err := cfg.Validate(); err != nil { // before reading the corpus
			return cfg, nil, err
		}
		var err error
		if t, err = newLMTask(o, cfg.SeqLen); err != nil {
			return cfg, nil, err
		}
	default:
		ct, err := newImageTask(o)
		if err != nil {
			return cfg, nil, err
		}
		if cfg.SeqLen != 0 && cfg.SeqLen != ct.length {
			return cfg, nil, fmt.Errorf("option n=%d: data %s has sequences of %d tokens, which sets n (leave n out)", cfg.SeqLen, o.Data, ct.length)
		}
		cfg.SeqLen = ct.length
		t = ct
	}
	if saved != nil && cfg.Vocab != t.vocab() {
		return cfg, nil, fmt.Errorf("checkpoint has vocab=%d but tokenizer %s has %d tokens: tokenizer and model do not match", cfg.Vocab, o.Tokenizer, t.vocab())
	}
	cfg.Vocab = t.vocab()
	if !cfg.Causal && kind != TaskClassify && kind != TaskMatch {
		return cfg, nil, fmt.Errorf("option causal=false lets every position see the tokens it must predict; it is for classification only, not data %s", o.Data)
	}
	return cfg, t, cfg.Validate()
}

// claimNewRun locks the folder of a new run: run= (refused when it holds
// checkpoints) or a new $ECPI_HOME/runs/<model>-<data>-<time>.
func (s *session) claimNewRun() error {
	if s.opts.RunDir == "" {
		name := fmt.Sprintf("%s-%s-%s", s.model.Config.Model, s.opts.Data, time.Now().Format("20060102-150405"))
		var err error
		if s.dir, err = claimNewRunDir(filepath.Join(RunsDir(s.opts.Home), name)); err != nil {
			return err
		}
		s.opts.RunDir = s.dir.path
		return nil
	}
	// Checked before the lock, so a refused run leaves the folder untouched,
	// and again once it is held.
	if err := s.refuseSavedRun(); err != nil {
		return err
	}
	var err error
	if s.dir, err = claimRunDir(s.opts.RunDir); err != nil {
		return err
	}
	if err := s.refuseSavedRun(); err != nil {
		s.dir.release()
		return err
	}
	return nil
}

func (s *session) refuseSavedRun() error {
	if existing, _ := Checkpoints(s.opts.RunDir); len(existing) > 0 {
		return fmt.Errorf("run folder %s already has checkpoints: continue it with `ecpi resume run=%s` or choose another run=", s.opts.RunDir, s.opts.RunDir)
	}
	return nil
}

// claimResumedRun locks the run folder of the checkpoint resumed, or, when
// that run has later checkpoints, a new folder beside it.
func (s *session) claimResumedRun() error {
	run := filepath.Dir(s.checkpoint)
	d, err := claimRunDir(run)
	if err != nil {
		return err
	}
	all, err := Checkpoints(run)
	if err != nil {
		d.release()
		return err
	}
	if len(all) > 0 && filepath.Base(all[len(all)-1]) == filepath.Base(s.checkpoint) {
		s.dir, s.opts.RunDir = d, run
		return nil
	}
	d.release()
	if s.dir, err = claimNewRunDir(fmt.Sprintf("%s-from-%d", run, s.step)); err != nil {
		return err
	}
	s.opts.RunDir, s.branchedFrom, s.checkpoint = s.dir.path, s.checkpoint, ""
	return nil
}

// load restores a verified checkpoint into the fresh session, after checking
// that it holds exactly the variables the session's model needs.
func (s *session) load(c *checkpointFiles) error {
	want, err := s.modelVariables()
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	if err := checkVariables(c.dir, c.manifest, want); err != nil {
		return err
	}
	values, err := readVariables(c)
	if err != nil {
		return err
	}
	if rng, ok := values[rngPath]; ok {
		if err := s.store.GetVariable(rngPath).SetValue(rng); err != nil {
			return err
		}
	}
	m := c.manifest
	s.store.SetLoader(&loader{values: values})
	s.task.restore(m.Batcher)
	s.step, s.losses, s.lastEval = m.Step, m.Losses, m.Eval
	s.checkpoint, s.checkpointStep = c.dir, m.Step
	return nil
}

// modelVariables are the variables a training step of the session's model
// creates, with their shapes, declared in a scratch store.
func (s *session) modelVariables() (map[string]shapes.Shape, error) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(s.opts.Seed); err != nil {
		return nil, err
	}
	if err := s.declareStep(store); err != nil {
		return nil, err
	}
	want := map[string]shapes.Shape{}
	for v := range store.IterVariables() {
		want[v.Path()] = v.Shape()
	}
	return want, nil
}

// declareStep builds a training step of the session's model into store and
// compiles it on the Go backend, never running it: the store then holds every
// variable the step creates, none of them with a value yet. The step reads one
// row of the task's own input (a match task's image and caption), and with
// accum > 1 it holds the accumulators the trainer adds (declareAccumulators).
func (s *session) declareStep(store *model.Store) error {
	goBackend, err := Backend("go")
	if err != nil {
		return err
	}
	exec, err := model.NewExec(goBackend.Backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		g := tokens.Graph()
		scope.SetTraining(g, true)
		loss := graph.ReduceAllSum(graph.ConvertDType(s.task.predict(s.model, scope, tokens), dtypes.Float32))
		if s.opts.Accum > 1 {
			declareAccumulators(scope, g)
		}
		newAdamW(s.opts).UpdateGraph(scope, g, loss)
		return loss
	})
	if err != nil {
		return err
	}
	// A graph function that fails returns its error from Compile (RaiseAsError),
	// so Finalize has no compilation left to wait for.
	defer exec.Finalize()
	if _, err := exec.Compile(shapes.Make(dtypes.Int32, 1, s.task.inputLength())); err != nil {
		return fmt.Errorf("building the training graph of model %s for data %s: %w", s.model.Config.Model, s.opts.Data, err)
	}
	return nil
}

// declareAccumulators declares the gradient accumulators that GoMLX's trainer
// keeps with accum > 1: one zero variable per trainable variable of the step,
// at the same path under train.AccumulatedGradientsScope. They are part of a
// checkpoint, so without them no command could open one of such a run.
func declareAccumulators(scope *model.Scope, g *graph.Graph) {
	var trainable []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			trainable = append(trainable, v)
		}
	}
	for _, v := range trainable {
		scope.Store().Scope(path.Join("/", train.AccumulatedGradientsScope, v.Scope())).
			WithInitializer(initializer.Zero).VariableWithShape(v.Name(), v.Shape()).SetTrainable(false)
	}
}

// initialize gives the variables of a fresh session on XLA their initial
// values on the Go backend, once, before the first step or evaluation
// (initializeOnHost). Elsewhere GoMLX initialises them on the session's own
// backend when a graph first needs them.
func (s *session) initialize() error {
	if !s.initOnHost {
		return nil
	}
	if err := s.initializeOnHost(); err != nil {
		return fmt.Errorf("initialising the variables: %w", err)
	}
	s.initOnHost = false
	return nil
}

// initializeOnHost gives every variable of a fresh session its initial value
// on the Go backend. On XLA, GoMLX would otherwise compile a graph of its own
// for the initialisers during the first step: 1.3 s of the small bench
// model's 4.2 s first step (Intel Xeon, 2026-12-03). The values are those a
// run on the Go backend starts from: XLA's random number generator draws
// others from the same seed.
func (s *session) initializeOnHost() error {
	if err := s.declareStep(s.store); err != nil {
		return err
	}
	goBackend, err := Backend("go")
	if err != nil {
		return err
	}
	if err := s.store.InitializeVariables(goBackend.Backend, nil); err != nil {
		return err
	}
	// A tensor of one backend cannot feed another: the values move to host
	// memory, from where the run's backend takes them at its first step.
	for v := range s.store.IterVariables() {
		value, err := v.Value()
		if err != nil {
			return err
		}
		if err := value.ToLocal(); err != nil {
			return err
		}
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
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, errors.New("the loss is not finite; lower lr= or raise warmup=")
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
	if s.task.kind() == TaskLM || s.opts.Data == "passkey" {
		r.Tokenizer = s.opts.Tokenizer
	}
	tail := s.losses[max(0, len(s.losses)-10):]
	for _, l := range tail {
		r.TrainLoss += l / float64(len(tail))
	}
	if e := s.lastEval; e != nil {
		r.Eval = e
		r.ValidLoss, r.ValidPPL, r.ValidBPC, r.ValidStep = e.Loss, e.PPL, e.BPC, e.Step
		if s.task.kind() != TaskLM {
			acc := e.Acc
			r.ValidAcc = &acc
		}
	}
	return r
}

// countParams counts the model's trainable parameters (optimizer state excluded).
func countParams(store *model.Store) int64 {
	var n int64
	for v := range store.IterVariables() {
		if v.Trainable {
			n += int64(v.Shape().Size())
		}
	}
	return n
}
