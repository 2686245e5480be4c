package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/ecpi-dev/ecpi/repl"
)

// A fatal error of the Go runtime cannot be recovered from: out of memory
// above all, since the Go backend's allocations cannot fail softly, and it
// prints a stack trace of hundreds of lines. So ecpi, unless it is the REPL
// on a terminal, runs its work in a child process of itself and watches it:
// stdin and stdout are the child's own, its stderr is copied line by line,
// and a crash is one line (the trace goes to a file), exit 2.

// supervisedEnv marks the child (arenas.go reads it too, before Go starts).
const supervisedEnv = "ECPI_SUPERVISED"

// crashStarts are how the Go runtime begins a fatal report; "SIGQUIT: " is
// its dump of every goroutine on Ctrl-\ (how to see where a hung ecpi waits),
// and a thread that cgo cannot start (under an address-space limit, memory
// ran out) ends the child as surely as an allocation that fails.
var crashStarts = []string{"fatal error: ", "runtime: ", "runtime/cgo: pthread_create failed", "panic: ", "unexpected fault address", "SIGSEGV", "SIGBUS", "SIGQUIT: "}

// supervise runs the command in a watched child and returns its exit code;
// ok is false when this process should do the work itself (it is the child,
// or the REPL on a terminal).
func supervise(args []string) (code int, ok bool) {
	if os.Getenv(supervisedEnv) != "" || len(args) == 0 && term.IsTerminal(int(os.Stdin.Fd())) {
		return 0, false
	}
	self, err := os.Executable()
	if err != nil {
		return 0, false
	}
	// The child gets SIGKILL when this thread ends (Pdeathsig): keep the thread.
	runtime.LockOSThread()
	child := exec.Command(self, args...)
	child.Env = append(os.Environ(), supervisedEnv+"=1")
	child.Stdin, child.Stdout = os.Stdin, os.Stdout
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := child.StderrPipe()
	if err != nil {
		return 0, false
	}
	// The child closes its end of this pipe once it handles Ctrl-C itself
	// (watchInterrupts); a signal that came before waits until then, since
	// the default action would kill a child still starting.
	ready, readyW, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	child.ExtraFiles = []*os.File{readyW}
	// Signals meant for ecpi reach the child. A terminal's Ctrl-C reaches both
	// (one process group); the child counts Ctrl-Cs a moment apart as one.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := child.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ecpi: starting: %v\n", err)
		return 2, true
	}
	readyW.Close()
	go func() {
		io.Copy(io.Discard, ready) // EOF: the child is ready, or gone
		for sig := range signals {
			child.Process.Signal(sig)
		}
	}()
	report, file := copyUntilCrash(stderr, os.Stderr)
	err = child.Wait()
	signal.Stop(signals)
	return exitCode(err, report, file), true
}

// copyUntilCrash copies the child's stderr line by line until a line starts a
// crash report, which goes to a file. It returns the report's first line and
// the file ("" when nothing crashed).
func copyUntilCrash(from io.Reader, to io.Writer) (report, file string) {
	lines := bufio.NewReader(from)
	for {
		line, err := lines.ReadString('\n')
		if startsCrash(line) {
			return strings.TrimSpace(line), saveCrash(line, lines)
		}
		io.WriteString(to, line)
		if err != nil {
			return "", ""
		}
	}
}

func startsCrash(line string) bool {
	for _, start := range crashStarts {
		if strings.HasPrefix(line, start) {
			return true
		}
	}
	return false
}

// saveCrash writes the report to a temporary file and names it.
func saveCrash(first string, rest io.Reader) string {
	f, err := os.CreateTemp("", "ecpi-crash-*.log")
	if err != nil {
		io.Copy(io.Discard, rest)
		return "not kept: " + err.Error()
	}
	defer f.Close()
	io.WriteString(f, first)
	io.Copy(f, rest)
	return f.Name()
}

// exitCode reports how the child ended on one line where it did not say so
// itself, and returns the code: the child's own, else 2.
func exitCode(err error, report, file string) int {
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "ecpi: %v\n", err)
		return 2
	}
	switch {
	case strings.HasPrefix(report, "SIGQUIT: "):
		fmt.Fprintf(os.Stderr, "ecpi: quit (SIGQUIT); where every goroutine was: %s\n", file)
	case strings.Contains(report, "out of memory") || strings.HasPrefix(report, "runtime/cgo: pthread_create failed"):
		fmt.Fprintf(os.Stderr, "ecpi: out of memory: the Go backend could not allocate what the model needs; lower batch= or n= (report: %s)\n", file)
	case report != "":
		fmt.Fprintf(os.Stderr, "ecpi: crashed: %s (report: %s)\n", repl.Printable(report), file)
	case exit != nil && !exit.Exited():
		status := exit.Sys().(syscall.WaitStatus)
		if status.Signal() == syscall.SIGKILL {
			fmt.Fprintln(os.Stderr, "ecpi: killed (SIGKILL; the system may have run out of memory: lower batch= or n=)")
		} else {
			fmt.Fprintf(os.Stderr, "ecpi: stopped by %v\n", status.Signal())
		}
	case exit != nil:
		return exit.ExitCode()
	default:
		return 0
	}
	return 2
}
