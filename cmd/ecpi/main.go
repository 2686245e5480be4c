// Command ecpi builds, trains and probes long-context attention models.
//
//	ecpi                     the REPL on a terminal; commands from stdin otherwise
//	ecpi CMD key=value ...   one command (add --json for one JSON object per result)
//	ecpi run FILE            a script of commands, one per line (--keep-going)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	_ "github.com/ecpi-dev/ecpi/kernel" // the notebook session server (ecpi serve)
	"github.com/ecpi-dev/ecpi/repl"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run returns the exit code: 0 success, 2 for any error (a usage mistake or a
// failed command), each reported on one line.
func run(args []string) int {
	session := repl.NewSession()
	if len(args) == 0 {
		// The REPL handles Ctrl-C itself: it interrupts the running command, not the session.
		if err := repl.Interactive(context.Background(), session, os.Stdin, os.Stdout, os.Stderr); err != nil {
			return 2
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch {
	case args[0] == "run":
		err = runScriptFile(ctx, session, args[1:])
	case args[0] == "--help" || args[0] == "-h":
		err = repl.ExecuteWords(ctx, session, []string{"help"}, os.Stdout)
	default:
		err = repl.ExecuteWords(ctx, session, args, os.Stdout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ecpi: %v\n", err)
		}
	}
	if err != nil {
		return 2
	}
	return 0
}

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
		err := fmt.Errorf("run needs exactly one FILE (got %d); usage: ecpi run FILE [--keep-going]", len(files))
		fmt.Fprintf(os.Stderr, "ecpi: %v\n", err)
		return err
	}
	in := os.Stdin
	if files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "ecpi: %v\n", err)
			return err
		}
		defer f.Close()
		in = f
	}
	return repl.RunScript(ctx, session, in, os.Stdout, os.Stderr, keepGoing)
}
