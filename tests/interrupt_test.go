package tests

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interrupted starts ecpi, sends SIGINT once ready() holds, and returns its
// exit code and stderr.
func interrupted(t *testing.T, cmd *exec.Cmd, ready func() bool) (int, string) {
	t.Helper()
	return signalled(t, cmd, syscall.SIGINT, ready)
}

// signalled starts ecpi, sends it sig once ready() holds, and returns its exit
// code and stderr.
func signalled(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, ready func() bool) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// ecpiCommand bounds the process; one that ends before it is ready fails the test at once.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for !ready() {
		select {
		case err := <-exited:
			t.Fatalf("ecpi ended (%v) before it was ready for %v; stderr: %s", err, sig, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// hasCheckpoint is the moment to interrupt a training run: it has saved. Any
// checkpoint, since keep= deletes the older ones a few steps later.
func hasCheckpoint(run string) func() bool {
	return func() bool {
		saved, _ := filepath.Glob(filepath.Join(run, "ckpt-*"))
		return len(saved) > 0
	}
}

// TestCtrlCStopsAScriptWithOneLine: Ctrl-C during a script's train line
// saves the run, skips the rest and says so on one line, exit 2.
func TestCtrlCStopsAScriptWithOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	home := preparedHome(t)
	run := filepath.Join(home, "runs", "script")
	script := filepath.Join(home, "train.ecpi")
	writeTestFile(t, script, []byte("model ecp n=32 dim=16 heads=2 layers=1 segment=8\ntrain data=opticks batch=2 steps=1000000 eval_every=1 eval_batches=1 run="+run+"\nstatus\n"))
	code, stderr := interrupted(t, ecpiCommand(t, home, "run", script), hasCheckpoint(run))
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "line 2: ") || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 2 and one line saying line 2 was interrupted", code, stderr)
	}
}

// TestCtrlCStopsALongPicture: mask evaluates K(i) on every pair, a minute
// for BigBird at n=8192; Ctrl-C ends it with one line.
func TestCtrlCStopsALongPicture(t *testing.T) {
	started := time.Now()
	code, stderr := interrupted(t, ecpiCommand(t, t.TempDir(), "mask", "model=bigbird", "n=8192"), func() bool {
		return time.Since(started) > 300*time.Millisecond
	})
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "mask interrupted") {
		t.Errorf("exit %d, stderr %q; want 2 and one line saying the mask was interrupted", code, stderr)
	}
}
