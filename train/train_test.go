package train

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

var (
	homeOnce sync.Once
	testHome string
	homeErr  error
)

// home prepares the opticks corpus (it ships with the Go toolchain, no
// network) in a temporary ECPI_HOME shared by the package's tests.
func home(t *testing.T) string {
	t.Helper()
	homeOnce.Do(func() {
		testHome, homeErr = os.MkdirTemp("", "ecpi-train-test")
		if homeErr == nil {
			homeErr = data.Prepare(testHome, "opticks", io.Discard)
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

func TestRunTrainsAndReports(t *testing.T) {
	o := tiny(t, map[string]string{"steps": "12", "lr": "3e-3"})
	var seen []Progress
	r, err := Run(context.Background(), o, func(p Progress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != 12 || len(r.Losses) != 12 || len(seen) != 12 {
		t.Fatalf("steps %d, losses %d, progress calls %d; want 12 each", r.Steps, len(r.Losses), len(seen))
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
// measures the new weights, not those of the previous evaluation.
func TestEvaluationSeesTraining(t *testing.T) {
	s, err := newSession(tiny(t, map[string]string{"lr": "1e-2", "warmup": "0"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.evaluate("valid", 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.trainStep(); err != nil {
			t.Fatal(err)
		}
		s.step++
	}
	after, err := s.evaluate("valid", 1)
	if err != nil {
		t.Fatal(err)
	}
	if after.Loss == before.Loss {
		t.Errorf("valid loss %.6f unchanged after 3 steps at lr 1e-2", after.Loss)
	}
}
