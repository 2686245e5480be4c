// Package tests holds ecpi's end-to-end tests: the binary driven as users
// drive it (a terminal, a pipe, a script).
package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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

// ecpiCommand runs the binary with its own $ECPI_HOME.
func ecpiCommand(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(ecpiBin, args...)
	cmd.Env = append(os.Environ(), "ECPI_HOME="+home, "GOMLX_BACKEND=go", "ECPI_NO_XLA_INSTALL=1", "TERM=xterm")
	return cmd
}
