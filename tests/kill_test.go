package tests

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/train"
)

// TestKilledTrainingKeepsEveryCheckpoint kills `ecpi train` / `ecpi resume`
// (a tiny model checkpointing every step) at random moments, 50 times with
// SIGKILL and 50 with SIGINT: after each, every checkpoint left in the run
// folder loads, and the next process resumes from the newest. A last resume
// runs to its end and leaves no temporary folder behind.
func TestKilledTrainingKeepsEveryCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hundred training processes")
	}
	home := preparedHome(t)
	t.Setenv("ECPI_HOME", home) // for train.Open below: it reads the corpus of the checkpoint's run
	run := filepath.Join(home, "runs", "killed")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	start := func(steps string) *exec.Cmd {
		args := []string{"resume", "run=" + run, "steps=" + steps}
		if all, _ := train.Checkpoints(run); len(all) == 0 {
			args = []string{"train", "model=ecp", "n=32", "dim=16", "heads=2", "layers=1", "segment=8", "data=opticks", "batch=2",
				"steps=" + steps, "eval_every=1", "eval_batches=1", "keep=3", "run=" + run}
		}
		cmd := ecpiCommand(t, home, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	for i := range 100 {
		signal := syscall.SIGKILL
		if i%2 == 1 {
			signal = syscall.SIGINT
		}
		cmd := start("1000000")
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if err := cmd.Process.Signal(signal); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if exit, ok := err.(*exec.ExitError); signal == syscall.SIGINT && ok && exit.ExitCode() > 0 {
			t.Errorf("kill %d: after Ctrl-C the process failed: %v %s", i, err, cmd.Stderr)
		}
		checkEveryCheckpoint(t, run, i)
	}
	all, err := train.Checkpoints(run)
	if err != nil || len(all) == 0 {
		t.Fatalf("after 100 kills the run has no checkpoint (%v)", err)
	}
	m, _, err := train.LoadManifest(all[len(all)-1])
	if err != nil {
		t.Fatal(err)
	}
	final := start(strconv.Itoa(m.Step + 2))
	if err := final.Wait(); err != nil {
		t.Fatalf("the last resume failed: %v %s", err, final.Stderr)
	}
	checkEveryCheckpoint(t, run, 100)
	if leftovers, _ := filepath.Glob(filepath.Join(run, ".ckpt-*")); len(leftovers) > 0 {
		t.Errorf("temporary folders left after a complete run: %v", leftovers)
	}
	t.Logf("%d steps trained across 101 processes", m.Step+2)
}

// checkEveryCheckpoint checks every checkpoint of the run as eval reads it
// (digests and manifest rules) and opens the newest whole (its variables
// against the model's: the same model for all of them).
func checkEveryCheckpoint(t *testing.T, run string, kill int) {
	t.Helper()
	all, err := train.Checkpoints(run)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, dir := range all {
		if _, _, err := train.LoadManifest(dir); err != nil {
			t.Errorf("kill %d: checkpoint %s does not load: %v", kill, filepath.Base(dir), err)
		}
	}
	if len(all) > 0 {
		if _, err := train.Open(all[len(all)-1], "go"); err != nil {
			t.Errorf("kill %d: the newest checkpoint does not open: %v", kill, err)
		}
	}
}
