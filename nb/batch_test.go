package nb

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/cluster"
)

// fakeSession is a session server that answers every train line with a run
// whose validation loss is its lr= (or 1), and keeps the lines; `cached`
// answers true for the lines holding a word of cachedWords.
type fakeSession struct {
	mu          sync.Mutex
	lines       []string
	cachedWords []string
}

func (f *fakeSession) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ping" {
		return
	}
	var req struct{ Line string }
	json.NewDecoder(r.Body).Decode(&req)
	enc := json.NewEncoder(w)
	defer enc.Encode(Event{Done: &Done{}})
	if run, ok := strings.CutPrefix(req.Line, "cached "); ok {
		cached := slices.ContainsFunc(f.cachedWords, func(word string) bool { return strings.Contains(run, word) })
		answer, _ := json.Marshal(map[string]bool{"cached": cached})
		enc.Encode(Event{Result: &Result{Command: "cached", JSON: answer}})
		return
	}
	f.mu.Lock()
	f.lines = append(f.lines, req.Line)
	f.mu.Unlock()
	loss := 1.0
	for _, word := range strings.Fields(req.Line) {
		if v, ok := strings.CutPrefix(word, "lr="); ok {
			json.Unmarshal([]byte(v), &loss)
		}
	}
	run, _ := json.Marshal(Trained{Model: "ecp", Steps: 5, ValidLoss: loss})
	enc.Encode(Event{Result: &Result{Command: "train", JSON: run}})
}

// serveFake starts a fakeSession for this test's cells (ECPI_SESSION).
func serveFake(t *testing.T) *fakeSession {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSession{}
	go http.Serve(l, f)
	t.Cleanup(func() { l.Close() })
	t.Setenv("ECPI_SESSION", path)
	return f
}

// recording is an executor that keeps its batches and fails the runs named.
type recording struct {
	batches [][]string
	fail    map[string]error // by a word of the run's options
}

func (r *recording) Execute(_ context.Context, runs []string) ([]error, error) {
	r.batches = append(r.batches, slices.Clone(runs))
	failed := make([]error, len(runs))
	for i, run := range runs {
		for word, err := range r.fail {
			if strings.Contains(run, word) {
				failed[i] = err
			}
		}
	}
	return failed, nil
}

// TestLocalBatchesTrainInTheSession: with the local executor every run is a
// train line of its own options, in order, as before executors.
func TestLocalBatchesTrainInTheSession(t *testing.T) {
	f := serveFake(t)
	defer func(e cluster.Executor) { executor = e }(executor)
	UseExecutor("local")
	runs := ReadSeeds("data=wiki", []Variant{{"a", "model=ecp"}, {"b", "model=full"}}, 2)
	want := []string{"train data=wiki model=ecp seed=1", "train data=wiki model=ecp seed=2", "train data=wiki model=full seed=1", "train data=wiki model=full seed=2"}
	if !slices.Equal(f.lines, want) {
		t.Fatalf("session got %q; want %q", f.lines, want)
	}
	if len(runs["a"]) != 2 || len(runs["b"]) != 2 {
		t.Fatalf("runs %v; want 2 seeds of a and b", runs)
	}
}

// TestBatchesGoToTheExecutor: Tune hands every variant's grid to the
// executor as one batch (but the runs already cached), then reads each run
// from the run cache (reuse=true); a run the executor reports diverged is a
// diverged rate of the sweep, not read; extensions past the grid's edge are
// batches of their own.
func TestBatchesGoToTheExecutor(t *testing.T) {
	f := serveFake(t)
	f.cachedWords = []string{"model=full lr=0.8 "}
	defer func(e cluster.Executor) { executor = e }(executor)
	rec := &recording{fail: map[string]error{"lr=0.4 ": errors.New("run failed in Slurm job 7_3: the loss or its gradient is not finite")}}
	executor = rec
	e := &Experiment{}
	grid := []float64{0.8, 0.4, 0.2, 0.1}
	tuned := e.Tune("data=wiki", []Variant{{"a", "model=ecp"}, {"b", "model=full"}}, grid, func(r Trained) float64 { return r.ValidLoss })
	if len(rec.batches) < 3 || len(rec.batches[0]) != 7 || slices.ContainsFunc(rec.batches[0], func(run string) bool { return strings.Contains(run, "model=full lr=0.8 ") }) {
		t.Fatalf("batches %q; want the 7 grid runs not cached in one, then each extension", rec.batches)
	}
	for _, line := range f.lines {
		if strings.Contains(line, "lr=0.4 ") {
			t.Errorf("a failed run was read: %q", line)
		}
		if !strings.HasSuffix(line, " reuse=true") {
			t.Errorf("a run executed elsewhere was not read from the run cache: %q", line)
		}
	}
	if s := e.Sweeps; len(s) != 2 || !s[0].DivergedAt(slices.Index(s[0].LR, 0.4)) || !strings.Contains(tuned[0].Options, "lr=0.0") {
		t.Fatalf("sweeps %+v, tuned %v; want lr=0.4 diverged and a rate below the grid chosen", e.Sweeps, tuned)
	}
}

// blocking is an executor that waits for its batch to be cancelled.
type blocking struct{}

func (blocking) Execute(ctx context.Context, runs []string) ([]error, error) {
	<-ctx.Done()
	failed := make([]error, len(runs))
	for i := range failed {
		failed[i] = context.Cause(ctx)
	}
	return failed, nil
}

// TestCtrlCCancelsTheBatch: the SIGINT that interrupts a cell (GoNB sends
// it) reaches the executor as its batch's cancellation.
func TestCtrlCCancelsTheBatch(t *testing.T) {
	serveFake(t)
	defer func(e cluster.Executor) { executor = e }(executor)
	executor = blocking{}
	go func() {
		time.Sleep(200 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	done := make(chan error)
	go func() {
		_, err := batch([]string{"model=ecp"})(0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupt") {
			t.Fatalf("the batch ended with %v; want it cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not cancel the batch")
	}
}
