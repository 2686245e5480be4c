package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestOutOfMemoryIsOneLine: when the Go backend cannot allocate (here under a
// 1.5 GB address-space limit, for a model the memory estimate lets through),
// the Go runtime's fatal error and its trace become one line naming the
// options to lower, exit 2; the trace is kept in a file.
func TestOutOfMemoryIsOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model that needs 1.7 GB")
	}
	home := preparedHome(t)
	args := []string{"train", "model=ecp", "n=4096", "batch=8", "dim=64", "layers=2", "data=opticks", "steps=2", "eval_every=0",
		"eval_batches=1", "run=" + filepath.Join(home, "runs", "oom")}
	limited := ecpiCommand(t, home)
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v 1500000 && exec "$0" "$@"`, limited.Path}, args...)...)
	cmd.Env = limited.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	exit, ok := err.(*exec.ExitError)
	msg := stderr.String()
	if !ok || exit.ExitCode() != 2 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ecpi: out of memory") || !strings.Contains(msg, "lower batch=") {
		t.Fatalf("exit %v, stderr %q; want 2 and one line saying out of memory", err, msg)
	}
	report := regexp.MustCompile(`report: ([^)]+)\)`).FindStringSubmatch(msg)
	if report == nil {
		t.Fatalf("no report file named in %q", msg)
	}
	defer os.Remove(report[1])
	if trace, err := os.ReadFile(report[1]); err != nil || !strings.Contains(string(trace), "goroutine") {
		t.Errorf("the report %s does not hold the trace (%v)", report[1], err)
	}
}

// TestQuitSavesWhereEachGoroutineWaits: SIGQUIT (Ctrl-\) on a busy ecpi is how
// to see where it hangs: one line naming a file that holds the stack of every
// goroutine of the process doing the work, exit 2.
func TestQuitSavesWhereEachGoroutineWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	home := preparedHome(t)
	run := filepath.Join(home, "runs", "quit")
	cmd := ecpiCommand(t, home, "train", "model=ecp", "n=32", "dim=16", "heads=2", "layers=1", "segment=8", "data=opticks",
		"batch=2", "steps=1000000", "eval_every=1", "eval_batches=1", "run="+run)
	code, msg := signalled(t, cmd, syscall.SIGQUIT, hasCheckpoint(run))
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ecpi: quit (SIGQUIT)") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line naming the stacks' file", code, msg)
	}
	file := strings.TrimSpace(msg[strings.LastIndex(msg, " ")+1:])
	defer os.Remove(file)
	if trace, err := os.ReadFile(file); err != nil || !strings.Contains(string(trace), "train.(*session).loop") {
		t.Errorf("%s does not hold the training goroutine's stack (%v)", file, err)
	}
}
