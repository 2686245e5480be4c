// Package tests holds ecpi's end-to-end tests: the binary driven as users
// drive it (a terminal, a pipe, a script).
package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ecpiBin is the binary built once for every test, with the environment
// (GOTOOLCHAIN, GOEXPERIMENT=simd) inherited from the caller.
var ecpiBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ecpi-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ecpiBin = filepath.Join(dir, "ecpi")
	build := exec.Command("go", "build", "-o", ecpiBin, "../cmd/ecpi")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building ecpi: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// commandLimit bounds every ecpi process a test starts: the longest runs for
// seconds, so one still running after this long hangs.
const commandLimit = 5 * time.Minute

// ecpiCommand runs the binary with its own $ECPI_HOME. A process that outlives
// commandLimit fails the test by name and gets SIGQUIT: ecpi then writes
// where each of its goroutines waits to the report file its stderr names, and
// the test's own failure carries that stderr. Without the limit a hang would
// only end at go test's timeout, which dumps the test binary and not ecpi.
func ecpiCommand(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, ecpiBin, args...)
	cmd.Env = append(os.Environ(), "ECPI_HOME="+home, "GOMLX_BACKEND=go", "ECPI_NO_XLA_INSTALL=1", "TERM=xterm")
	cmd.Cancel = func() error {
		if ctx.Err() != context.DeadlineExceeded { // the test is over: its cleanup stops what it left running
			return cmd.Process.Kill()
		}
		t.Errorf("ecpi %s: still running after %v, sent SIGQUIT", strings.Join(args, " "), commandLimit)
		return cmd.Process.Signal(syscall.SIGQUIT)
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}
