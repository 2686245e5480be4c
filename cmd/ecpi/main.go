// Command ecpi builds, trains and probes long-context attention models.
//
//	ecpi                     the REPL on a terminal; commands from stdin otherwise
//	ecpi CMD key=value ...   one command (add --json for one JSON object per result)
//	ecpi run FILE            a script of commands, one per line (--keep-going)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "github.com/ecpi-dev/ecpi/kernel" // the notebook session server (ecpi serve)
	"github.com/ecpi-dev/ecpi/repl"
	"github.com/ecpi-dev/ecpi/xla"
)

func main() {
	restartWithMallocTuning()
	if code, ok := supervise(os.Args[1:]); ok {
		os.Exit(code)
	}
	if os.Getenv(supervisedEnv) != "" {
		watchInterrupts()
	}
	os.Exit(run(os.Args[1:]))
}

// restartWithMallocTuning replaces this process, once, by itself with glibc's
// malloc set up for XLA's buffers (xla.MallocEnv says why). Where that cannot
// be done, ecpi runs as it is.
func restartWithMallocTuning() {
	env, changed := xla.MallocEnv(os.Environ())
	if !changed {
		return
	}
	if self, err := os.Executable(); err == nil {
		syscall.Exec(self, os.Args, env) // returns only on failure
	}
}

// interrupts receives Ctrl-C from the moment a supervised child starts
// handling it (interruptible reads it); nil elsewhere.
var interrupts chan os.Signal

// watchInterrupts makes a supervised child handle Ctrl-C and tells the
// supervisor so, by closing the pipe it passed as file 3: a Ctrl-C the
// supervisor held back while the child was starting comes now.
func watchInterrupts() {
	interrupts = make(chan os.Signal, 4)
	signal.Notify(interrupts, os.Interrupt)
	if ready := os.NewFile(3, "ready"); ready != nil {
		ready.Close()
	}
}

// run returns the exit code: 0 success, 2 for any error (a usage mistake or a
// failed command), each reported on one line.
func run(args []string) int {
	session := repl.NewSession()
	var err error
	switch {
	case len(args) == 0:
		// The REPL handles Ctrl-C itself: it interrupts the running command, not the session.
		err = repl.Interactive(context.Background(), session, os.Stdin, os.Stdout, os.Stderr)
	case args[0] == "run":
		ctx, stop := interruptible()
		defer stop()
		err = runScriptFile(ctx, session, args[1:])
	case args[0] == "--help" || args[0] == "-h":
		err = repl.ExecuteWords(context.Background(), session, []string{"help"}, os.Stdout)
	default:
		ctx, stop := interruptible()
		defer stop()
		err = repl.ExecuteWords(ctx, session, args, os.Stdout)
	}
	if err == nil || errors.Is(err, repl.ErrQuit) {
		return 0
	}
	if reported := (*repl.ReportedError)(nil); !errors.As(err, &reported) {
		fmt.Fprintf(os.Stderr, "ecpi: %s\n", repl.OneLine(err))
	}
	return 2
}

// interruptible is the context of one command or script: the first Ctrl-C
// cancels it (a training run saves a checkpoint and stops, loops end at
// their next step), a second one ends the process at once, exit 2. A
// terminal's Ctrl-C reaches this process twice when it runs under supervise
// (directly, and passed on): Ctrl-Cs within sameCtrlC count as one.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	signals := interrupts
	if signals == nil {
		signals = make(chan os.Signal, 4)
		signal.Notify(signals, os.Interrupt)
	}
	go func() {
		if _, ok := <-signals; !ok {
			return
		}
		first := time.Now()
		cancel()
		for range signals {
			if time.Since(first) > sameCtrlC {
				fmt.Fprintln(os.Stderr, "ecpi: interrupted twice: stopped at once")
				os.Exit(2)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		close(signals)
		cancel()
	}
}

// sameCtrlC is how close two Ctrl-Cs must be to be one.
const sameCtrlC = 250 * time.Millisecond

func runScriptFile(ctx context.Context, session *repl.Session, args []string) error {
	keepGoing := false
	var files []string
	for _, a := range args {
		switch a {
		case "--keep-going":
			keepGoing = true
		case "--help", "-h":
			fmt.Println("usage: ecpi run FILE [--keep-going]\n\nRuns the commands in FILE (or - for stdin) one per line; '#' starts a comment.\nThe first failing command stops the run with exit 2 unless --keep-going.")
			return nil
		default:
			files = append(files, a)
		}
	}
	if len(files) != 1 {
		return fmt.Errorf("run needs exactly one FILE (got %d); usage: ecpi run FILE [--keep-going]", len(files))
	}
	in := os.Stdin
	if files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.IsDir() {
			return fmt.Errorf("run: %s is a folder, not a script", files[0])
		}
		in = f
	}
	return repl.RunScript(ctx, session, in, os.Stdout, os.Stderr, keepGoing)
}
