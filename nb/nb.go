// Package nb is ecpi in a notebook cell. GoNB runs every cell as a fresh
// process, so a cell keeps nothing of the last one; nb sends each line of
// ecpi's command language to the notebook's session server (kernel.Serve,
// started on first use, one per kernel), which keeps the session, the models
// and their compiled executables from cell to cell, and shows here what it
// streams back: text, pictures, live loss plots and results. A cell reads
// like a REPL session:
//
//	nb.Do("model ecp layers=4 n=256 half_segment=32")
//	nb.Do("train data=wiki steps=300")
//	nb.Do("probe attention")
//
// nb imports nothing heavy (no GoMLX), so a cell compiles and starts in about
// a second; the work runs in the server, on XLA when the kernel says so.
package nb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ecpi-dev/ecpi/figure"
)

// Run runs one line in the session and returns the results of its commands
// (compare and retrieval give one per run); what the line prints and draws is
// shown in the cell as it comes.
func Run(line string) ([]Result, error) { return run(line, false) }

// run is Run; quiet drops the line's text (its pictures and progress still show).
func run(line string, quiet bool) ([]Result, error) {
	client, err := connect()
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]string{"line": line})
	resp, err := client.Post("http://session/run", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("session server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("session server: %s", resp.Status)
	}
	return show(resp.Body, quiet)
}

// show displays a line's events and collects its results.
func show(stream interface{ Read([]byte) (int, error) }, quiet bool) ([]Result, error) {
	var results []Result
	lives := map[string]*figure.Live{}
	live := func(run string) *figure.Live {
		if lives[run] == nil {
			title := run
			if title == "" {
				title = "training"
			}
			lives[run] = figure.NewLive(title)
		}
		return lives[run]
	}
	scanner := bufio.NewScanner(stream)
	scanner.Buffer(make([]byte, 1<<20), 256<<20) // a figure's PNG fits one line
	for scanner.Scan() {
		var e Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return results, fmt.Errorf("session server sent %q: %w", scanner.Text(), err)
		}
		switch {
		case e.Progress != nil:
			p := e.Progress
			switch {
			case p.Compiling:
				live(p.Run).Compiling()
			case p.EvalLine != "":
				live(p.Run).Step(p.Step, p.Steps, p.Loss, p.Status)
				live(p.Run).Eval(p.Step, p.EvalLoss, p.EvalLine)
			default:
				live(p.Run).Step(p.Step, p.Steps, p.Loss, p.Status)
			}
		case e.Text != "":
			if !quiet {
				fmt.Print(e.Text)
			}
		case e.Figure != nil:
			f := e.Figure
			figure.ShowImage(f.PNG, f.Text, f.Caption, f.Width, f.Height)
		case e.Result != nil:
			results = append(results, *e.Result)
		case e.Error != "":
			// The server sends it Printable (repl.OneLine), so Must can print it as it is.
			return results, errors.New(e.Error)
		case e.Done != nil:
			return results, nil
		}
	}
	if err := scanner.Err(); err != nil {
		return results, fmt.Errorf("session server: %w", err)
	}
	return results, errors.New("session server: the connection closed before the line finished (see its log in $ECPI_HOME/sessions)")
}

// Do is Run for cells: an error is shown in the cell and stops it.
func Do(line string) []Result { return Must(Run(line)) }

// Query is Do without the line's text (its pictures and progress still
// show): for reading results that a cell above has already shown.
func Query(line string) []Result { return Must(run(line, true)) }

// Last runs a line and decodes its last result into a T.
func Last[T any](line string) T { return lastOf[T](line, Do(line)) }

// lastOf decodes the last of a line's results into a T.
func lastOf[T any](line string, results []Result) T {
	var v T
	if len(results) == 0 {
		Must(0, fmt.Errorf("%q gave no result", line))
	}
	Must(0, results[len(results)-1].Decode(&v))
	return v
}

// Must returns v, or shows err in the cell and stops the cell (the kernel
// and the session server stay).
func Must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	return v
}

// Quick reports the CI mode (Mode): sizes that run in well under a minute;
// otherwise notebooks run their full sizes (paper mode runs the full sizes too,
// in the cells it runs: PaperScale).
func Quick() bool { return Mode() == "quick" }

// Pick returns quick in quick mode and full otherwise.
func Pick[T any](quick, full T) T {
	if Quick() {
		return quick
	}
	return full
}

// Ints writes a list of ints as an option value: Ints([]int{6, 24, 40}) is "6,24,40".
func Ints(values []int) string { return list(values) }

// list writes values as an option value, comma-separated.
func list[T int | float64](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// socket is the session server's socket of this cell's kernel (the cell's
// parent process) in $ECPI_SESSIONS, else $ECPI_HOME/sessions (make test
// gives its kernels a fresh folder); ECPI_SESSION names another socket
// (tests, scripts).
func socket() string {
	if path := os.Getenv("ECPI_SESSION"); path != "" {
		return path
	}
	dir := os.Getenv("ECPI_SESSIONS")
	if dir == "" {
		home := os.Getenv("ECPI_HOME")
		if home == "" {
			user, _ := os.UserHomeDir()
			home = filepath.Join(user, ".ecpi")
		}
		dir = filepath.Join(home, "sessions")
	}
	return filepath.Join(dir, fmt.Sprintf("kernel-%d.sock", os.Getppid()))
}

// connect returns a client of the session server, starting it if needed.
func connect() (*http.Client, error) {
	path := socket()
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	if ping(client) {
		return client, nil
	}
	if err := start(path); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ping(client) {
			return client, nil
		}
	}
	return nil, fmt.Errorf("the session server did not start within a minute; see %s", LogPath(path))
}

func ping(client *http.Client) bool {
	resp, err := client.Get("http://session/ping")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// LogPath is where the session server of socket writes its output.
func LogPath(socket string) string { return strings.TrimSuffix(socket, ".sock") + ".log" }

// start launches `ecpi serve` for this kernel, in its own session so that it
// outlives the cell; ECPI_BIN names the binary (the kernel sets it), else the
// ecpi on the PATH.
func start(socket string) error {
	bin := os.Getenv("ECPI_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("ecpi"); err != nil {
			return errors.New("no ecpi binary: set ECPI_BIN or put ecpi on the PATH (make build; make kernel sets it)")
		}
	}
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		return err
	}
	log, err := os.Create(LogPath(socket))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, "serve", "socket="+socket, fmt.Sprintf("parent=%d", os.Getppid()))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the session server %s: %w", bin, err)
	}
	return cmd.Process.Release()
}
