package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSlurm puts testdata/fakeslurm's sbatch, squeue and scancel on the PATH,
// with a fresh state folder, and returns a Slurm executor that runs its fake
// ecpi, and the folder.
func fakeSlurm(t *testing.T) (*Slurm, *strings.Builder, string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/fakeslurm")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("FAKE_SLURM", state)
	t.Setenv("ECPI_RUNS", t.TempDir())
	out := &strings.Builder{}
	s := &Slurm{Retries: 1, Binary: filepath.Join(bin, "ecpi"), Poll: 10 * time.Millisecond, Out: out,
		Partition: "debug", Time: "0:10:00", Gres: "gpu:1", Sbatch: []string{"--qos=test"}}
	return s, out, state
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestSlurmBatch: one job array for the batch with the knobs passed through;
// each task trains its run with reuse=true; a run that fails by itself is
// reported with its job id and log, the others finish; a killed task is
// submitted again, alone.
func TestSlurmBatch(t *testing.T) {
	s, out, state := fakeSlurm(t)
	failed, err := s.Execute(context.Background(), []string{"model=ecp seed=1", "model=ecp fail", "model=full killonce"})
	if err != nil {
		t.Fatal(err)
	}
	submitted := lines(t, filepath.Join(state, "sbatch.args"))
	if len(submitted) != 2 || !strings.Contains(submitted[0], "--array=0,1,2 ") || !strings.Contains(submitted[1], "--array=2 ") {
		t.Fatalf("sbatch calls %q; want the batch's array, then task 2 again", submitted)
	}
	for _, knob := range []string{"--parsable", "--partition=debug", "--time=0:10:00", "--gres=gpu:1", "--qos=test"} {
		if !strings.Contains(submitted[0], knob+" ") {
			t.Errorf("sbatch was not given %s: %q", knob, submitted[0])
		}
	}
	if trained := lines(t, filepath.Join(state, "trained")); len(trained) != 2 || trained[0] != "train model=ecp seed=1 reuse=true" || trained[1] != "train model=full killonce reuse=true" {
		t.Errorf("runs trained %q; want runs 0 and 2, with reuse=true", trained)
	}
	if failed[0] != nil || failed[2] != nil {
		t.Errorf("runs 0 and 2 failed: %v, %v", failed[0], failed[2])
	}
	if failed[1] == nil || !strings.Contains(failed[1].Error(), "Slurm job 100_1") || !strings.Contains(failed[1].Error(), "not finite") {
		t.Errorf("run 1's failure %v: want its job id and its log's end", failed[1])
	}
	for _, said := range []string{"run 2 of 3 failed (Slurm job 100_1)", "run 3 of 3 was killed (Slurm job 100_2); submitting it again",
		"Slurm job 100, 101: 2 of 3 runs done, 0 running, 0 pending, 1 failed"} {
		if !strings.Contains(out.String(), said) {
			t.Errorf("progress does not say %q:\n%s", said, out)
		}
	}
}

// TestSlurmRetriesAnInterruptedRun: a run ecpi stopped on a signal (status
// 0, its log ending "interrupted:") is not finished: it is submitted again.
func TestSlurmRetriesAnInterruptedRun(t *testing.T) {
	s, out, state := fakeSlurm(t)
	failed, err := s.Execute(context.Background(), []string{"model=ecp interruptonce"})
	if err != nil || failed[0] != nil {
		t.Fatalf("Execute: %v, %v", failed, err)
	}
	if trained := lines(t, filepath.Join(state, "trained")); len(trained) != 1 || !strings.Contains(out.String(), "was killed (Slurm job 100_0)") {
		t.Fatalf("the interrupted run was not submitted again (trained %q):\n%s", trained, out)
	}
}

// TestSlurmGivesUpAfterRetries: a task killed more times than Retries allows
// is a failed run, with its job ids.
func TestSlurmGivesUpAfterRetries(t *testing.T) {
	s, _, _ := fakeSlurm(t)
	s.Retries = 0
	failed, err := s.Execute(context.Background(), []string{"model=ecp killonce"})
	if err != nil || failed[0] == nil || !strings.Contains(failed[0].Error(), "killed 1 times (Slurm jobs 100") {
		t.Fatalf("Execute: %v, %v; want run 0 failed, killed once", failed, err)
	}
}

// TestSlurmCancel: cancelling the batch (Ctrl-C) cancels its jobs and says so.
func TestSlurmCancel(t *testing.T) {
	s, out, state := fakeSlurm(t)
	if err := os.WriteFile(filepath.Join(state, "hold"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Execute(ctx, []string{"model=ecp", "model=full"})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("Execute: %v; want the batch cancelled", err)
	}
	if cancelled := lines(t, filepath.Join(state, "scancel.args")); len(cancelled) != 1 || cancelled[0] != "100" {
		t.Errorf("scancel got %q; want job 100", cancelled)
	}
	for _, said := range []string{"0 of 2 runs done, 0 running, 2 pending", "cancelled Slurm job 100 (scancel)"} {
		if !strings.Contains(out.String(), said) {
			t.Errorf("progress does not say %q:\n%s", said, out)
		}
	}
}

// TestSlurmRefusesWhatTasksCannotRun: options a task's shell would read
// otherwise are refused, and so is a batch without ECPI_RUNS (no rendezvous),
// before anything is submitted.
func TestSlurmRefusesWhatTasksCannotRun(t *testing.T) {
	s, _, state := fakeSlurm(t)
	if _, err := s.Execute(context.Background(), []string{"model=ecp", "data=$HOME"}); err == nil || !strings.Contains(err.Error(), "not passed to tasks") {
		t.Errorf("Execute of a run with $: %v", err)
	}
	t.Setenv("ECPI_RUNS", "")
	if _, err := s.Execute(context.Background(), []string{"model=ecp"}); err == nil || !strings.Contains(err.Error(), "ECPI_RUNS") {
		t.Errorf("Execute without ECPI_RUNS: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "sbatch.args")); !os.IsNotExist(err) {
		t.Errorf("a refused batch was submitted (%v)", err)
	}
}
