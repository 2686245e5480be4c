package train

import (
	"fmt"
	"path"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/gomlx/gomlx/ml/train"
)

// A session's store holds the variables of its model's training step: declared
// on the Go backend without running it (declareStep), given their initial
// values on the host for a fresh session on XLA (initializeOnHost), or
// restored from a checkpoint after checking that it holds exactly those
// variables (load).

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
