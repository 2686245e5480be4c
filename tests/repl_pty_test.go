package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal is ecpi running on a pseudo-terminal, as on a user's screen.
type terminal struct {
	t    *testing.T
	ptmx *os.File // our end: what we type, what ecpi draws
	tty  *os.File // ecpi's end, kept open to read its settings with stty
	cmd  *exec.Cmd
	mu   sync.Mutex
	seen bytes.Buffer // everything ecpi wrote
	done chan error
}

func startTerminal(t *testing.T, home string) *terminal {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pty: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, ptmx: ptmx, tty: tty, done: make(chan error, 1)}
	t.Cleanup(func() {
		if term.cmd.ProcessState == nil {
			term.cmd.Process.Kill()
		}
		ptmx.Close()
		tty.Close()
	})
	term.cmd = ecpiCommand(t, home)
	term.cmd.Stdin, term.cmd.Stdout, term.cmd.Stderr = tty, tty, tty
	// A session of its own with the pty as controlling terminal: go-prompt reads /dev/tty.
	term.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	return term
}

func (term *terminal) start() {
	if err := term.cmd.Start(); err != nil {
		term.t.Fatalf("starting ecpi: %v", err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := term.ptmx.Read(buf)
			term.mu.Lock()
			term.seen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { term.done <- term.cmd.Wait() }()
}

// sttySettings reads the terminal's settings as `stty -g` prints them.
func (term *terminal) sttySettings() string {
	term.t.Helper()
	stty := exec.Command("stty", "-g")
	stty.Stdin = term.tty
	out, err := stty.Output()
	if err != nil {
		term.t.Fatalf("stty -g: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// typeKeys sends one key at a time, as a person would: after each key it
// waits for ecpi to redraw, so two keys never reach go-prompt in one read
// (it would take "\t " as text, not as Tab then space).
func (term *terminal) typeKeys(keys string) {
	term.t.Helper()
	for _, key := range strings.Split(keys, "") {
		m := term.mark()
		if _, err := term.ptmx.Write([]byte(key)); err != nil {
			term.t.Fatalf("typing: %v", err)
		}
		for deadline := time.Now().Add(5 * time.Second); term.mark() == m && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// paste writes text in one write, as a terminal sends a paste (or keys typed
// faster than ecpi reads them).
func (term *terminal) paste(text string) {
	term.t.Helper()
	if _, err := term.ptmx.Write([]byte(text)); err != nil {
		term.t.Fatalf("pasting: %v", err)
	}
}

// output is what ecpi drew since mark.
func (term *terminal) output(mark int) string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.seen.String()[mark:]
}

func (term *terminal) mark() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.seen.Len()
}

// waitFor waits until ecpi has drawn want after mark.
func (term *terminal) waitFor(mark int, want string, timeout time.Duration) {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(term.output(mark), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	term.t.Fatalf("after %v ecpi has not shown %q; it showed:\n%s", timeout, want, term.output(mark))
}

func (term *terminal) waitExit(timeout time.Duration) error {
	term.t.Helper()
	select {
	case err := <-term.done:
		return err
	case <-time.After(timeout):
		term.t.Fatalf("ecpi did not exit within %v; screen:\n%s", timeout, term.output(0))
		return nil
	}
}

func hasCommand(t *testing.T, home, name string) bool {
	out, _ := ecpiCommand(t, home, "help").Output()
	return strings.Contains(string(out), "\n  "+name+" ")
}

func TestREPLOnATerminal(t *testing.T) {
	home := t.TempDir()
	term := startTerminal(t, home)
	before := term.sttySettings()
	term.start()
	term.waitFor(0, "Tab to complete", 20*time.Second)

	// Tab completion: "mod" offers model and models with their descriptions;
	// Tab picks the first, and typing on accepts it.
	m := term.mark()
	term.typeKeys("mod")
	term.waitFor(m, "choose the model family", 5*time.Second)
	term.typeKeys("\t ecp n=64\r")
	term.waitFor(m, "first-layer attention scores per head", 10*time.Second)

	m = term.mark()
	term.typeKeys("sta\t\r")
	term.waitFor(m, "model       ecp n=64", 10*time.Second)

	// A mistake is reported and the session goes on.
	m = term.mark()
	term.typeKeys("modl\r")
	term.waitFor(m, `did you mean "model"`, 10*time.Second)

	// Ctrl-C at the prompt clears the line, it does not leave.
	term.typeKeys("unset n\x03")
	m = term.mark()
	term.typeKeys("mask width=60\r")
	term.waitFor(m, "K(i) of model=ecp", 10*time.Second)

	if hasCommand(t, home, "train") {
		trainOnTerminal(t, term, home)
	} else {
		t.Log("no train command in this build: training through the prompt not exercised")
	}

	term.typeKeys("quit\r")
	if err := term.waitExit(20 * time.Second); err != nil {
		t.Errorf("quit: ecpi exited with %v", err)
	}
	if after := term.sttySettings(); after != before {
		t.Errorf("terminal settings not restored:\nbefore %s\nafter  %s", before, after)
	}
	history, err := os.ReadFile(filepath.Join(home, "history"))
	if err != nil || !strings.Contains(string(history), "model ecp n=64\n") || !strings.Contains(string(history), "status\n") {
		t.Errorf("history file: %q (%v)", history, err)
	}
}

// trainOnTerminal runs a tiny training from the prompt, then interrupts a
// longer one with Ctrl-C and checks the session is still there.
func trainOnTerminal(t *testing.T, term *terminal, home string) {
	if out, err := ecpiCommand(t, home, "data", "prepare", "opticks").CombinedOutput(); err != nil {
		t.Fatalf("preparing opticks: %v\n%s", err, out)
	}
	m := term.mark()
	term.typeKeys("train dim=32 layers=1 steps=3 batch=2 warmup=1 eval_every=0 eval_batches=1 data=opticks\r")
	term.waitFor(m, "valid loss", 300*time.Second)
	if out := term.output(m); strings.Contains(out, "error:") {
		t.Fatalf("tiny training failed:\n%s", out)
	}
	term.waitFor(m, "ecpi> ", 10*time.Second)
	m = term.mark()
	term.typeKeys("train dim=32 layers=1 steps=100000 batch=2 eval_every=0 eval_batches=1 data=opticks\r")
	term.waitFor(m, "/100000  loss", 300*time.Second)
	term.typeKeys("\x03")
	term.waitFor(m, "interrupted: checkpoint", 60*time.Second)
	m = term.mark()
	term.typeKeys("status\r")
	term.waitFor(m, "last results", 10*time.Second)
}

// TestREPLRunsPastedLinesInOrder pastes a command with its Enter, then three
// lines at once, as terminals without and with bracketed paste send them:
// each line must run as a command, in order, and the prompt come back.
func TestREPLRunsPastedLinesInOrder(t *testing.T) {
	home := t.TempDir()
	term := startTerminal(t, home)
	term.start()
	term.waitFor(0, "Tab to complete", 20*time.Second)

	m := term.mark()
	term.paste("model ecp n=64 segment=16\r")
	term.waitFor(m, "first-layer attention scores per head", 10*time.Second)

	for _, block := range []string{
		"status\rmask width=60\rhelp mask\r",
		"\x1b[200~status\nmask\twidth=60\nhelp mask\n\x1b[201~", // bracketed: the Tab is a space, not a completion
	} {
		m := term.mark()
		term.paste(block)
		term.waitFor(m, "usage: ecpi mask", 20*time.Second)
		term.waitFor(m+strings.Index(term.output(m), "usage: ecpi mask"), "ecpi> ", 10*time.Second)
		out := term.output(m)
		last := -1
		for _, step := range []string{"model       ecp half_segment=16 n=64", "K(i) of model=ecp", "usage: ecpi mask"} {
			at := strings.Index(out, step)
			if at <= last {
				t.Fatalf("pasted %q: %q not after the previous command's output:\n%s", block, step, out)
			}
			last = at
		}
	}
	if !strings.Contains(term.output(0), "\x1b[?2004h") {
		t.Error("the prompt does not turn on bracketed paste")
	}
	term.typeKeys("\r")
	term.typeKeys("\x04")
	if err := term.waitExit(10 * time.Second); err != nil {
		t.Errorf("Ctrl-D after the pastes: ecpi exited with %v", err)
	}
	history, _ := os.ReadFile(filepath.Join(home, "history"))
	if want := "status\nmask width=60\nhelp mask\n"; strings.Count(string(history), want) != 2 {
		t.Errorf("history %q: want the pasted lines twice, in order", history)
	}
}

func TestREPLLeavesOnCtrlD(t *testing.T) {
	home := t.TempDir()
	term := startTerminal(t, home)
	before := term.sttySettings()
	term.start()
	term.waitFor(0, "Tab to complete", 20*time.Second)
	term.typeKeys("\r") // an empty line is not Ctrl-D
	term.typeKeys("\x04")
	if err := term.waitExit(10 * time.Second); err != nil {
		t.Errorf("Ctrl-D: ecpi exited with %v", err)
	}
	if after := term.sttySettings(); after != before {
		t.Errorf("terminal settings not restored:\nbefore %s\nafter  %s", before, after)
	}
}

func TestScriptedSessionThroughAPipe(t *testing.T) {
	cmd := ecpiCommand(t, t.TempDir())
	cmd.Stdin = strings.NewReader("model ecp layers=2\nstatus\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("piped session: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "model       ecp layers=2") {
		t.Errorf("status did not follow on from model:\n%s", out)
	}
	if strings.Contains(string(out), "\x1b[") {
		t.Errorf("a pipe should get no terminal escapes:\n%q", out)
	}
}

func TestRunFileStopsAtTheFirstFailure(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(home, "session.ecpi")
	content := "# a failing line stops the run\nmodel ecp\nmodel ecp segment=100\nstatus\n"
	if err := os.WriteFile(script, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       []string
		statusRuns bool
	}{
		{[]string{"run", script}, false},
		{[]string{"run", script, "--keep-going"}, true},
	} {
		cmd := ecpiCommand(t, home, tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		exit, ok := err.(*exec.ExitError)
		if !ok || exit.ExitCode() != 2 {
			t.Errorf("%v: exit %v, want 2", tc.args, err)
		}
		if !strings.Contains(stderr.String(), "line 3: model ecp segment=100") || !strings.Contains(stderr.String(), "segment") {
			t.Errorf("%v: stderr does not name the line and the rule: %q", tc.args, stderr.String())
		}
		if ran := strings.Contains(stdout.String(), "no results yet"); ran != tc.statusRuns {
			t.Errorf("%v: status after the failure ran=%v, want %v", tc.args, ran, tc.statusRuns)
		}
	}
}
