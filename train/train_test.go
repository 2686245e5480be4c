package train

import (
	"cmp"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

var (
	homeOnce sync.Once
	testHome string
	homeErr  error
)

// TestMain removes the shared home that home made, which outlives every test's own TempDir.
func TestMain(m *testing.M) {
	code := m.Run()
	if testHome != "" {
		os.RemoveAll(testHome)
	}
	os.Exit(code)
}

// home prepares the opticks corpus (it ships with the Go toolchain, no
// network) in a temporary ECPI_HOME shared by the package's tests.
func home(t testing.TB) string {
	t.Helper()
	homeOnce.Do(func() {
		testHome, homeErr = os.MkdirTemp("", "ecpi-train-test")
		if homeErr == nil {
			homeErr = data.Prepare(context.Background(), testHome, "opticks", io.Discard)
		}
	})
	if homeErr != nil {
		t.Fatalf("preparing opticks: %v", homeErr)
	}
	return testHome
}

// tiny is a model and run that train in a fraction of a second per step on the Go backend.
func tiny(t *testing.T, extra map[string]string) Options {
	t.Helper()
	values := map[string]string{"model": "ecp", "n": "32", "dim": "16", "heads": "2", "layers": "2", "segment": "8",
		"data": "opticks", "batch": "4", "steps": "8", "warmup": "2", "eval_every": "4", "eval_batches": "2", "backend": "go",
		"run": filepath.Join(t.TempDir(), "run")}
	for k, v := range extra {
		values[k] = v
		if v == "" { // an empty value removes the default
			delete(values, k)
		}
	}
	o, err := ParseOptions(values)
	if err != nil {
		t.Fatal(err)
	}
	o.Home = home(t)
	return o
}

// trainedTiny trains tiny(t, extra) and opens its checkpoint on the Go backend.
func trainedTiny(t *testing.T, extra map[string]string) *Loaded {
	t.Helper()
	r, err := Run(context.Background(), tiny(t, extra), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(r.Checkpoint, "go")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRunTrainsAndReports(t *testing.T) {
	o := tiny(t, map[string]string{"steps": "12", "lr": "3e-3"})
	var seen []Progress
	r, err := Run(context.Background(), o, func(p Progress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if !seen[0].Compiling || seen[1].Compiling {
		t.Errorf("the first report should say the graph compiles, and only the first")
	}
	seen = seen[1:]
	if r.Steps != 12 || len(r.Losses) != 12 || len(seen) != 12 || r.CompileMS <= 0 {
		t.Fatalf("steps %d, losses %d, progress calls %d, compile %.1f ms; want 12 each and some compile time", r.Steps, len(r.Losses), len(seen), r.CompileMS)
	}
	if r.Losses[11] >= r.Losses[0] {
		t.Errorf("loss did not fall: first %.4f, last %.4f", r.Losses[0], r.Losses[11])
	}
	if r.ValidPPL <= 1 || r.ValidBPC <= 0 || math.Abs(r.ValidPPL-math.Exp(r.ValidLoss)) > 1e-9 {
		t.Errorf("valid ppl %g, bpc %g, loss %g inconsistent", r.ValidPPL, r.ValidBPC, r.ValidLoss)
	}
	if seen[3].Eval == nil || seen[2].Eval != nil {
		t.Errorf("evaluation should come every 4 steps")
	}
	ckpts, _ := Checkpoints(o.RunDir)
	if len(ckpts) != 3 || !strings.HasSuffix(r.Checkpoint, checkpointName(12)) {
		t.Errorf("checkpoints %v, result checkpoint %s; want 3 kept, the last at step 12", ckpts, r.Checkpoint)
	}
}

func TestResultTextSaysWhatWasMeasured(t *testing.T) {
	// Interrupted after the first (compiling, untimed) step, with no evaluation.
	r := &Result{Model: "ecp", Data: "opticks", Steps: 1, Losses: []float64{5}, Interrupted: true, Checkpoint: "c"}
	text := r.Text()
	for _, bad := range []string{"valid loss 0.0000", " 0 tokens/s"} {
		if strings.Contains(text, bad) {
			t.Errorf("unmeasured figure %q reported:\n%s", bad, text)
		}
	}
	for _, want := range []string{"no evaluation yet", "speed not measured"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	r.Steps, r.ValidStep, r.ValidLoss, r.TokensPerS, r.MsPerStep = 6, 4, 2.5, 2000, 100
	text = r.Text()
	for _, want := range []string{"valid loss 2.5000", "(evaluated at step 4)", "2000 tokens/s, 100 ms/step"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}

// TestResumeIsExact interrupts a run after 4 of 8 steps (as Ctrl-C does),
// resumes it, and compares the loss of every step with an uninterrupted run:
// they must be bit-for-bit equal (same batches, dropout masks, optimizer state).
func TestResumeIsExact(t *testing.T) {
	whole, err := Run(context.Background(), tiny(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := tiny(t, map[string]string{"eval_every": "3"})
	ctx, cancel := context.WithCancel(context.Background())
	first, err := Run(ctx, o, func(p Progress) {
		if p.Step == 4 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || first.Steps != 4 || !strings.HasSuffix(first.Checkpoint, checkpointName(4)) {
		t.Fatalf("interrupted run: interrupted=%v steps=%d checkpoint %s", first.Interrupted, first.Steps, first.Checkpoint)
	}
	if first.ValidStep != 3 || whole.ValidStep != whole.Steps {
		t.Errorf("valid figures measured at step %d of the interrupted run (want 3) and %d of the whole one (want %d)", first.ValidStep, whole.ValidStep, whole.Steps)
	}
	resumed, err := Resume(context.Background(), o.RunDir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed.Losses) != len(whole.Losses) {
		t.Fatalf("resumed run has %d losses, whole run %d", len(resumed.Losses), len(whole.Losses))
	}
	for i := range whole.Losses {
		if resumed.Losses[i] != whole.Losses[i] {
			t.Errorf("step %d: loss %.9g after resume, %.9g uninterrupted", i+1, resumed.Losses[i], whole.Losses[i])
		}
	}
	if resumed.ValidLoss != whole.ValidLoss {
		t.Errorf("valid loss %.9g after resume, %.9g uninterrupted", resumed.ValidLoss, whole.ValidLoss)
	}
}

// TestEvaluationSeesTraining checks that an evaluation after more training
// measures the new weights, not those of the previous evaluation: on the Go
// backend, and on XLA, whose session keeps its evaluator.
func TestEvaluationSeesTraining(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) { evaluationSeesTraining(t, backend) })
	}
}

// stoppedAndResumed trains o, stops it (as Ctrl-C does) after step stop and
// resumes it to the end.
func stoppedAndResumed(t *testing.T, o Options, stop int) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := Run(ctx, o, func(p Progress) {
		if p.Step == stop {
			cancel()
		}
	}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Resume(context.Background(), o.RunDir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resumed
}

// testBackends are the Go backend and, unless -short, XLA's CPU plugin when installed.
func testBackends() []string {
	if !testing.Short() && hasXLACPU() {
		return []string{"go", "xla:cpu"}
	}
	return []string{"go"}
}

func evaluationSeesTraining(t *testing.T, backend string) {
	s, err := newSession(tiny(t, map[string]string{"lr": "1e-2", "warmup": "0", "backend": backend}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float64
	for range 3 {
		e, err := s.evaluate(context.Background(), "valid", 1)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, e.Loss)
		for range 3 {
			if _, err := s.trainStep(); err != nil {
				t.Fatal(err)
			}
			s.step++
		}
	}
	if losses[0] == losses[1] || losses[1] == losses[2] {
		t.Errorf("valid losses %v: an evaluation did not see the 3 steps at lr 1e-2 before it", losses)
	}
}

// TestAuthorsProtocol: the ECP authors' byte-level measurement averages
// batches of random windows, each scored on every position the model's loss
// covers; ecpi's scores each target once. Both see the same weights.
func TestAuthorsProtocol(t *testing.T) {
	for _, model := range []map[string]string{{}, {"model": "perceiverar", "segment": "", "latents": "8"}} {
		s, err := newSession(tiny(t, model), nil)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := s.evaluate(context.Background(), "valid", 2)
		if err != nil {
			t.Fatal(err)
		}
		s.opts.Protocol = ProtocolAuthors
		authors, err := s.evaluate(context.Background(), "valid", 2)
		if err != nil {
			t.Fatal(err)
		}
		scored := int64(s.model.Config.SeqLen - s.model.LossStart())
		if authors.Windows != 2*s.opts.Batch || authors.Count != int64(authors.Windows)*scored {
			t.Errorf("%v: authors' protocol scored %d targets in %d windows, want 2 batches of %d windows × %d positions",
				model, authors.Count, authors.Windows, s.opts.Batch, scored)
		}
		if authors.Protocol != ProtocolAuthors || ours.Protocol != ProtocolECPI || math.IsNaN(authors.Loss) || authors.Loss == ours.Loss {
			t.Errorf("%v: protocols %q %q, losses %v %v: want two different measurements", model, ours.Protocol, authors.Protocol, ours.Loss, authors.Loss)
		}
	}
}

// TestDecodedSampleMatchesRecomputed: within one window, greedy decoding with
// the key/value cache picks the tokens that recomputing the window picks; past
// the window it keeps going. ECP, and two of the PerceiverAR family, whose
// windows start at the first latent (compressed: its residual lags in layer 0).
func TestDecodedSampleMatchesRecomputed(t *testing.T) {
	for _, extra := range []map[string]string{{}, {"model": "perceiverar", "segment": ""}, {"model": "compressed", "segment": ""}} {
		extra["steps"], extra["eval_every"] = "3", "0"
		t.Run(cmp.Or(extra["model"], "ecp"), func(t *testing.T) {
			l := trainedTiny(t, extra)
			greedy := func(logits []float32) int32 { return pick(logits, 0, 0, nil) }
			prompt := l.Tokenizer().Encode("Light is")
			d, err := NewDecoder(l.backend.Backend, l.store, l.model)
			if err != nil {
				t.Fatal(err)
			}
			n := l.model.Config.SeqLen
			count := min(20, n-max(len(prompt), l.model.LossStart()+1))
			decoded, err := decodeTokens(context.Background(), d, slices.Clone(prompt), count, '\n', greedy)
			if err != nil {
				t.Fatal(err)
			}
			recomputed, err := recomputeTokens(l, prompt, count, '\n', greedy)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(decoded, recomputed) {
				t.Errorf("decoded %v, recomputed %v", decoded, recomputed)
			}
			long, err := decodeTokens(context.Background(), d, slices.Clone(prompt), 70, '\n', greedy)
			if err != nil || len(long) != 70 {
				t.Errorf("70 tokens across windows of %d: got %d, %v", n, len(long), err)
			}
		})
	}
}

// recomputeTokens is the reference of decoding: it runs the whole window for
// every token, laid out as the Decoder lays it out (prompt padded in front up
// to the first predicted position, padding after), for count tokens that fit.
func recomputeTokens(l *Loaded, prompt []int32, count int, pad int32, choose func([]float32) int32) ([]int32, error) {
	n, start := l.model.Config.SeqLen, l.model.LossStart()
	exec, err := model.NewExec(l.backend.Backend, l.store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		return l.model.Logits(scope, tokens)
	})
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	var window []int32
	for range start + 1 - len(prompt) {
		window = append(window, pad)
	}
	window = append(window, prompt...)
	var generated []int32
	for range count {
		padded := slices.Clone(window)
		for len(padded) < n {
			padded = append(padded, pad)
		}
		outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(padded, 1, n))
		if err != nil {
			return nil, err
		}
		logits := tensors.MustCopyFlatData[float32](outs[0])
		vocab := len(logits) / (n - start)
		at := len(window) - 1 - start
		next := choose(logits[at*vocab : (at+1)*vocab])
		window = append(window, next)
		generated = append(generated, next)
	}
	return generated, nil
}

// TestLossByPosition: the ecpi protocol reports the loss at every position the
// model scores, and scoring from a position averages the positions after it.
func TestLossByPosition(t *testing.T) {
	for _, extra := range []map[string]string{{}, {"model": "perceiverar", "segment": "", "latents": "8"}} {
		s, err := newSession(tiny(t, extra), nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.evaluate(context.Background(), "valid", 2)
		if err != nil {
			t.Fatal(err)
		}
		n, start := s.model.Config.SeqLen, s.model.LossStart()
		if len(e.ByPosition) != n-start || e.FirstPosition != start {
			t.Fatalf("%v: %d positions from %d, want %d from %d", extra, len(e.ByPosition), e.FirstPosition, n-start, start)
		}
		last, err := e.LossFrom(n - 1)
		if err != nil || last != e.ByPosition[len(e.ByPosition)-1] {
			t.Errorf("%v: loss from the last position %v (%v), want %v", extra, last, err, e.ByPosition[len(e.ByPosition)-1])
		}
		if _, err := e.LossFrom(start - 1); err == nil && start > 0 {
			t.Errorf("%v: loss from position %d, before the first scored one, was given", extra, start-1)
		}
	}
}
