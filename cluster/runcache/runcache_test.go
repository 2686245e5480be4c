package runcache

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/train"
)

// A test binary started with raceEnv set is one of the racing processes of
// TestTwoProcessesRaceForOneRun: it trains the run of its options through
// Train and prints what it did as JSON.
const raceEnv = "ECPI_RUNCACHE_RACER"

// startEnv, when set, makes a racing process wait for the file "start" in
// its run cache.
const startEnv = "ECPI_RUNCACHE_START"

// optionsEnv holds a racing process's options beside tinyOptions', as JSON.
const optionsEnv = "ECPI_RUNCACHE_OPTIONS"

func TestMain(m *testing.M) {
	if home := os.Getenv(raceEnv); home != "" {
		os.Exit(racer(home))
	}
	os.Exit(m.Run())
}

// raced is what a racing process reports.
type raced struct {
	Trained int       `json:"trained"` // steps it trained
	Losses  []float64 `json:"losses"`
	Seconds float64   `json:"seconds"` // in Train
	Error   string    `json:"error,omitempty"`
}

func racer(home string) int {
	PollEvery = 50 * time.Millisecond
	var extra map[string]string
	json.Unmarshal([]byte(os.Getenv(optionsEnv)), &extra)
	o, err := tinyOptions(home, extra)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	start := filepath.Join(os.Getenv(train.RunsEnv), "start")
	for !exists(start) && os.Getenv(startEnv) != "" { // the racers start together
		time.Sleep(5 * time.Millisecond)
	}
	var out raced
	began := time.Now()
	r, err := Train(context.Background(), o, func(p train.Progress) {
		if !p.Compiling {
			out.Trained++
		}
	})
	out.Seconds = time.Since(began).Seconds()
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Losses = r.Losses
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

var (
	homeOnce sync.Once
	testHome string
	homeErr  error
)

// home is an ECPI_HOME with the opticks corpus, shared by the tests.
func home(t *testing.T) string {
	t.Helper()
	homeOnce.Do(func() {
		if testHome, homeErr = os.MkdirTemp("", "ecpi-runcache-test"); homeErr == nil {
			homeErr = data.Prepare(context.Background(), testHome, "opticks", io.Discard)
		}
	})
	if homeErr != nil {
		t.Fatalf("preparing opticks: %v", homeErr)
	}
	return testHome
}

// tinyOptions is a model that trains in a fraction of a second per step on
// the Go backend, with reuse=true.
func tinyOptions(home string, extra map[string]string) (train.Options, error) {
	values := map[string]string{"model": "ecp", "n": "32", "dim": "16", "heads": "2", "layers": "2", "segment": "8",
		"data": "opticks", "batch": "4", "steps": "6", "warmup": "2", "eval_every": "3", "eval_batches": "2", "backend": "go",
		"reuse": "true"}
	for k, v := range extra {
		values[k] = v
	}
	o, err := train.ParseOptions(values)
	o.Home = home
	return o, err
}

// tiny is tinyOptions in a fresh run cache ($ECPI_RUNS).
func tiny(t *testing.T, extra map[string]string) train.Options {
	t.Helper()
	t.Setenv(train.RunsEnv, t.TempDir())
	o, err := tinyOptions(home(t), extra)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCachedIsTrains: a run train finished with reuse=true is Cached, in the
// folder train's own run cache used.
func TestCachedIsTrains(t *testing.T) {
	o := tiny(t, map[string]string{"seed": "3"})
	r, err := train.Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dir, cached, err := Cached(o); !cached || dir != r.Run || err != nil {
		t.Fatalf("a finished run is not Cached (%v)", err)
	}
}

// TestFinishedRunWithoutResultIsRebuilt: a cached run at its last step whose
// result.json is gone, which train refuses to train further, is evaluated
// again, to the result it had, and published.
func TestFinishedRunWithoutResultIsRebuilt(t *testing.T) {
	o := tiny(t, nil)
	first, err := Train(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(first.Run, resultFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := train.Run(context.Background(), o, nil); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("train itself no longer refuses a finished run without result (%v): is this package's rebuild still needed?", err)
	}
	trained := false
	again, err := Train(context.Background(), o, func(train.Progress) { trained = true })
	if err != nil {
		t.Fatalf("the finished run was refused: %v", err)
	}
	if trained || again.Steps != first.Steps || again.Params != first.Params || again.Checkpoint != first.Checkpoint ||
		!slices.Equal(again.Losses, first.Losses) || again.TrainLoss != first.TrainLoss || again.Backend != first.Backend {
		t.Fatalf("rebuilt result differs or trained (%v):\n%+v\nwant\n%+v", trained, again, first)
	}
	if again.ValidLoss != first.ValidLoss || again.ValidBPC != first.ValidBPC || again.ValidStep != first.ValidStep ||
		!slices.Equal(again.Eval.ByPosition, first.Eval.ByPosition) || again.Tokenizer != first.Tokenizer {
		t.Fatalf("the evaluation measured again differs: %+v, want %+v", again.Eval, first.Eval)
	}
	read, err := train.Run(context.Background(), o, nil)
	if err != nil || read.ValidLoss != first.ValidLoss {
		t.Fatalf("the rebuilt result was not published: %v", err)
	}
}

// TestTwoProcessesRaceForOneRun: two processes started together on one
// uncached run (a second's training): one trains it, the other waits and reads
// its result.
func TestTwoProcessesRaceForOneRun(t *testing.T) {
	h := home(t)
	runs := t.TempDir()
	var outs [2]raced
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := racerCommand(h, runs, map[string]string{"steps": "300", "eval_every": "100"})
			cmd.Env = append(cmd.Env, startEnv+"=1")
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("racer %d: %v: %s", i, err, out)
				return
			}
			if err := json.Unmarshal(out, &outs[i]); err != nil {
				t.Errorf("racer %d wrote %q: %v", i, out, err)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // both started and waiting
	if err := os.WriteFile(filepath.Join(runs, "start"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, out := range outs {
		if out.Error != "" {
			t.Fatalf("racer %d: %s", i, out.Error)
		}
	}
	if outs[0].Trained+outs[1].Trained != 300 || min(outs[0].Trained, outs[1].Trained) != 0 {
		t.Fatalf("racers trained %d and %d steps; want one to train all 300 and the other none", outs[0].Trained, outs[1].Trained)
	}
	if !slices.Equal(outs[0].Losses, outs[1].Losses) || len(outs[0].Losses) != 300 {
		t.Fatalf("the racers' results differ: %v and %v", outs[0].Losses, outs[1].Losses)
	}
	trainer, reader := outs[0], outs[1]
	if reader.Trained > 0 {
		trainer, reader = reader, trainer
	}
	if reader.Seconds < trainer.Seconds/2 {
		t.Fatalf("the reader took %.2f s, the trainer %.2f s: the reader came after the run, it did not wait for it", reader.Seconds, trainer.Seconds)
	}
}

// racerCommand is a racing process on the run of tinyOptions with extra, in
// the run cache runs.
func racerCommand(home, runs string, extra map[string]string) *exec.Cmd {
	options, _ := json.Marshal(extra)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), raceEnv+"="+home, train.RunsEnv+"="+runs, optionsEnv+"="+string(options))
	return cmd
}

// TestAKilledHoldersRunResumes: a process killed (SIGKILL) while it trains
// leaves its claim; the next process takes it over and resumes the run from
// its last checkpoint.
func TestAKilledHoldersRunResumes(t *testing.T) {
	extra := map[string]string{"steps": "1500", "eval_every": "20", "eval_batches": "1"}
	o := tiny(t, extra)
	dir, _ := train.CacheDir(o)
	holder := racerCommand(o.Home, os.Getenv(train.RunsEnv), extra)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if all, _ := train.Checkpoints(dir); len(all) > 0 {
			break
		}
		if time.Now().After(deadline) {
			holder.Process.Kill()
			t.Fatal("the holder saved no checkpoint within a minute")
		}
	}
	holder.Process.Kill()
	holder.Wait()
	if _, err := os.Stat(dir + ".claim"); err != nil {
		t.Fatalf("the killed holder left no claim: %v", err)
	}
	firstStep := 0
	r, err := Train(context.Background(), o, func(p train.Progress) {
		if firstStep == 0 && !p.Compiling {
			firstStep = p.Step
		}
	})
	if err != nil || r.Steps != o.Steps || r.Interrupted {
		t.Fatalf("the killed holder's run was not finished: %v", err)
	}
	if firstStep <= 20 {
		t.Fatalf("the run restarted at step %d instead of resuming from a checkpoint", firstStep)
	}
}

// writeClaim makes a claim file for dir held by c, its heartbeat age old.
func writeClaim(t *testing.T, dir string, c claimant, age time.Duration) {
	t.Helper()
	b, _ := json.Marshal(c)
	path := dir + ".claim"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-age)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

// TestClaimsOfGoneHoldersAreTakenOver: a claim of a process that ended on
// this host, or of any host with a stale heartbeat, is taken over and the run
// trained; a live claim is waited for.
func TestClaimsOfGoneHoldersAreTakenOver(t *testing.T) {
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	// Slurm's queue is cluster's stand-in squeue: it lists $FAKE_SLURM/queue.
	fakeSlurm, err := filepath.Abs("../testdata/fakeslurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fakeSlurm+":"+os.Getenv("PATH"))
	queue := t.TempDir()
	t.Setenv("FAKE_SLURM", queue)
	for _, tc := range []struct {
		name   string
		holder claimant
		age    time.Duration
		queued string // what squeue says of the holder's job
		taken  bool
	}{
		{"ended process", claimant{Host: host, PID: ended.Process.Pid, Token: "a"}, 0, "", true},
		{"stale heartbeat", claimant{Host: "elsewhere", PID: 1, Token: "b"}, 2 * StaleAfter, "", true},
		{"live holder", claimant{Host: "elsewhere", PID: 1, Token: "c"}, 0, "", false},
		{"ended Slurm job", claimant{Host: "elsewhere", PID: 1, Job: "123_4", Token: "d"}, 0, "", true},
		{"running Slurm job", claimant{Host: "elsewhere", PID: 1, Job: "123_5", Token: "e"}, 0, "RUNNING\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(queue, "queue"), []byte(tc.queued), 0o644); err != nil {
				t.Fatal(err)
			}
			o := tiny(t, map[string]string{"steps": "2", "eval_every": "0"})
			dir, _ := train.CacheDir(o)
			writeClaim(t, dir, tc.holder, tc.age)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			r, err := Train(ctx, o, nil)
			if tc.taken && (err != nil || r.Steps != 2) {
				t.Fatalf("the claim of a gone holder was not taken over: %v", err)
			}
			if !tc.taken && (err == nil || !strings.Contains(err.Error(), "another process trains")) {
				t.Fatalf("a live holder's run was not waited for: %v", err)
			}
			if _, err := os.Stat(dir + ".claim"); tc.taken != os.IsNotExist(err) {
				t.Fatalf("claim file after the run: %v (taken over: %v)", err, tc.taken)
			}
		})
	}
}
