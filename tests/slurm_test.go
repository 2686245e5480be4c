package tests

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/cluster"
	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/repl"
	"github.com/ecpi-dev/ecpi/results"
)

// realSlurm starts a real Slurm for the test (scripts/slurm-local.sh: Debian's
// munged, slurmctld and two slurmd, nodes n1 and n2) and stops it after.
// It needs ECPI_TEST_SLURM=1, which scripts/test.sh sets: starting it may
// install Debian packages.
func realSlurm(t *testing.T) {
	t.Helper()
	if os.Getenv("ECPI_TEST_SLURM") == "" {
		t.Skip("a real Slurm is started only with ECPI_TEST_SLURM=1 (make test sets it): it installs Debian's slurmctld, slurmd and munge when missing")
	}
	dir := t.TempDir()
	start := exec.Command("bash", "../scripts/slurm-local.sh", "start", dir)
	out, err := start.CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command("bash", "../scripts/slurm-local.sh", "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping Slurm: %v: %s", err, out)
		}
	})
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skipf("Slurm cannot be installed on this machine: %s", out)
	}
	if err != nil {
		t.Fatalf("starting Slurm: %v: %s", err, out)
	}
	t.Setenv("SLURM_CONF", filepath.Join(dir, "slurm.conf"))
}

// quickExperiment is what a notebook's quick mode does with its runs, on the
// executor spec names, in the run cache runs: tune two models' learning
// rates, then train each over two seeds.
func quickExperiment(t *testing.T, home, runs, spec string) ([]results.Sweep, map[string][]nb.Trained) {
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_RUNS", runs)
	t.Setenv("ECPI_SESSION", filepath.Join(t.TempDir(), "s.sock"))
	defer nb.Run("quit")
	nb.UseExecutor(spec)
	defer nb.UseExecutor("local")
	shared := "data=opticks n=32 dim=16 heads=2 layers=1 batch=4 steps=20 warmup=2 eval_every=10 eval_batches=2 backend=go reuse=true"
	variants := []nb.Variant{{Label: "dense", Options: "model=full"}, {Label: "ECP", Options: "model=ecp half_segment=8"}}
	e := &nb.Experiment{}
	tuned := e.Tune(shared, variants, []float64{1e-3, 4e-3, 1.6e-2, 6.4e-2}, func(r nb.Trained) float64 { return r.ValidLoss })
	return e.Sweeps, e.TrainSeeds(shared, tuned, 2)
}

// cached are the run folders of a run cache.
func cached(t *testing.T, runs string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(runs, "cache", "*-*-*[0-9a-f]"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestNotebookThroughSlurm: a notebook's sweep and seeds run as Slurm job
// arrays give the results the local executor gives, every run trained once,
// by one task.
func TestNotebookThroughSlurm(t *testing.T) {
	realSlurm(t)
	home := preparedHome(t)
	t.Setenv("ECPI_BIN", ecpiBin)
	t.Setenv("GOMLX_BACKEND", "go")
	localRuns, slurmRuns := t.TempDir(), t.TempDir()
	localSweeps, localSeeds := quickExperiment(t, home, localRuns, "local")
	slurmSweeps, slurmSeeds := quickExperiment(t, home, slurmRuns, "slurm poll=500ms")

	for i, s := range localSweeps {
		if !slices.Equal(s.LR, slurmSweeps[i].LR) || !slices.Equal(s.Valid, slurmSweeps[i].Valid) || s.Chosen != slurmSweeps[i].Chosen {
			t.Errorf("sweep of %s: local %+v, Slurm %+v", s.Model, s, slurmSweeps[i])
		}
	}
	for label, runs := range localSeeds {
		for i, r := range runs {
			got := slurmSeeds[label][i]
			if !slices.Equal(got.Losses, r.Losses) || got.ValidLoss != r.ValidLoss || got.Params != r.Params {
				t.Errorf("%s seed %d: Slurm's run (valid loss %v) differs from the local one (%v)", label, i+1, got.ValidLoss, r.ValidLoss)
			}
		}
	}
	// Every run of the experiment is one folder of the run cache; each was
	// trained by exactly one task (its log shows its evaluations), and the
	// notebook read the results without training.
	logs, err := filepath.Glob(filepath.Join(slurmRuns, "slurm", "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	trained, nodes := 0, map[string]bool{}
	for _, log := range logs {
		text, _ := os.ReadFile(log)
		if strings.Contains(string(text), "step 10: valid") {
			trained++
		}
		for _, node := range []string{"n1", "n2"} {
			nodes[node] = nodes[node] || strings.Contains(string(text), "on node "+node+"\n")
		}
	}
	if !nodes["n1"] || !nodes["n2"] {
		t.Errorf("the tasks ran on nodes %v; want both of Slurm's nodes used", nodes)
	}
	if want := len(cached(t, localRuns)); len(cached(t, slurmRuns)) != want || trained != want {
		t.Errorf("%d runs, %d cached under Slurm, %d trained by its tasks (of %d logs); want each run trained once",
			want, len(cached(t, slurmRuns)), trained, len(logs))
	}
}

// TestSlurmKilledTaskResumesAndFailuresAreReported: a task cancelled with
// scancel mid-run is submitted again and resumes from its checkpoint; a run
// that fails by itself is reported with its job id, and the other run still
// finishes.
func TestSlurmKilledTaskResumesAndFailuresAreReported(t *testing.T) {
	realSlurm(t)
	t.Setenv("ECPI_HOME", preparedHome(t))
	t.Setenv("GOMLX_BACKEND", "go")
	runs := t.TempDir()
	t.Setenv("ECPI_RUNS", runs)
	s := cluster.DefaultSlurm()
	s.Binary, s.Poll, s.Grace = ecpiBin, 300*time.Millisecond, 2*time.Second
	var out strings.Builder
	s.Out = &out
	long := "model=ecp n=32 dim=16 heads=2 layers=1 half_segment=8 data=opticks batch=4 steps=4000 warmup=2 eval_every=200 eval_batches=1 backend=go"
	bad := "model=ecp n=32 dim=16 heads=3 data=opticks steps=5 backend=go"

	killed := make(chan string, 1)
	go func() { // once the long run saved a checkpoint, cancel its task
		defer close(killed)
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			ckpts, _ := filepath.Glob(filepath.Join(runs, "cache", "ecp-opticks-*", "ckpt-*"))
			queue, _ := exec.Command("squeue", "--me", "-h", "-r", "-o", "%i %T").Output()
			for _, line := range strings.Split(string(queue), "\n") {
				if id, state, _ := strings.Cut(line, " "); len(ckpts) > 0 && strings.HasSuffix(id, "_0") && state == "RUNNING" {
					exec.Command("scancel", id).Run()
					killed <- id
					return
				}
			}
		}
	}()
	failed, err := s.Execute(context.Background(), []string{long, bad})
	t.Logf("the executor said:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	id := <-killed
	if id == "" {
		t.Fatal("the long run's task was never seen running with a checkpoint")
	}
	if failed[0] != nil {
		t.Fatalf("the killed run did not finish: %v", failed[0])
	}
	if !strings.Contains(out.String(), "was killed (Slurm job "+id+"); submitting it again") {
		t.Errorf("the executor did not say it submits %s again", id)
	}
	if failed[1] == nil || !strings.Contains(failed[1].Error(), "Slurm job ") || !strings.Contains(failed[1].Error(), "heads") {
		t.Errorf("the failing run's report %v: want its job id and its error", failed[1])
	}
	// The first task evaluated at step 200 before it was cancelled; the
	// second resumed after it, so it never evaluated step 200 again.
	logs, _ := filepath.Glob(filepath.Join(runs, "slurm", "*", "*_0.log"))
	if len(logs) != 2 {
		t.Fatalf("task logs of the long run: %q; want the cancelled one and its retry", logs)
	}
	slices.SortFunc(logs, func(a, b string) int { return jobOf(a) - jobOf(b) }) // the retry's job comes later
	first, _ := os.ReadFile(logs[0])
	retry, _ := os.ReadFile(logs[1])
	if !strings.Contains(string(first), "step 200: valid") || strings.Contains(string(retry), "step 200: valid") ||
		!strings.Contains(string(retry), "4000 steps") {
		t.Errorf("the retry did not resume the run from its checkpoint:\nfirst task:\n%s\nretry:\n%s", first, retry)
	}
}

// jobOf is the array job of a task log, JOB_INDEX.log.
func jobOf(log string) int {
	job, _, _ := strings.Cut(filepath.Base(log), "_")
	n, _ := strconv.Atoi(job)
	return n
}

// TestCompareThroughSlurm: `compare executor=slurm` trains its models as one
// job array into the run cache, and its results are a local compare's.
func TestCompareThroughSlurm(t *testing.T) {
	realSlurm(t)
	home := preparedHome(t)
	compare := []string{"compare", "models=ecp,full", "data=opticks", "n=32", "half_segment=8", "dim=16", "heads=2", "layers=1", "batch=4", "steps=10",
		"eval_every=0", "eval_batches=2", "backend=go", "seed=3"}
	slurmRuns := t.TempDir()
	t.Setenv("ECPI_RUNS", slurmRuns)
	out, err := ecpiCommand(t, home, append(compare, "executor=slurm poll=300ms")...).CombinedOutput()
	if err != nil {
		t.Fatalf("compare through Slurm: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "2 of 2 runs done, 0 running, 0 pending, 0 failed") {
		t.Errorf("compare did not run its models as a Slurm batch:\n%s", out)
	}
	ecp := append([]string{"cached", "model=ecp"}, compare[2:]...)
	if b, err := ecpiCommand(t, home, append(ecp, "--json")...).Output(); err != nil || !strings.Contains(string(b), `"cached":true`) {
		t.Errorf("ecpi cached for compare's ecp run: %v: %s; want it cached", err, b)
	}
	rows := func(runs string, extra ...string) []repl.ComparisonRow {
		t.Setenv("ECPI_RUNS", runs)
		b, err := ecpiCommand(t, home, append(append(compare, extra...), "--json")...).Output()
		var cmp repl.Comparison
		if err == nil {
			err = json.Unmarshal(b, &cmp)
		}
		if err != nil || len(cmp.Rows) != 2 {
			t.Fatalf("compare %q: %v: %s", extra, err, b)
		}
		return cmp.Rows
	}
	cached, local := rows(slurmRuns, "reuse=true"), rows(t.TempDir())
	for i, r := range local {
		if !slices.Equal(cached[i].Losses, r.Losses) || cached[i].ValidLoss != r.ValidLoss {
			t.Errorf("%s: Slurm's run (valid loss %v) differs from the local one (%v)", r.Model, cached[i].ValidLoss, r.ValidLoss)
		}
	}
}
