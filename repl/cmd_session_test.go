package repl

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// run executes lines in one session and fails the test on the first error.
func run(t *testing.T, s *Session, lines ...string) string {
	t.Helper()
	var out bytes.Buffer
	for _, line := range lines {
		if err := Execute(context.Background(), s, line, &out); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	return out.String()
}

func TestModelCommandsFollowOn(t *testing.T) {
	s := NewSession()
	run(t, s, "model ecp layers=2 n=256")
	want := map[string]string{"model": "ecp", "layers": "2", "n": "256"}
	for k, v := range want {
		if got, _ := s.Get(k); got != v {
			t.Errorf("after `model ecp layers=2 n=256`: %s=%q, want %q", k, got, v)
		}
	}
	run(t, s, "model layers=3") // changes the current model
	if got, _ := s.Get("n"); got != "256" {
		t.Errorf("`model layers=3` lost n: %q", got)
	}
	if got, _ := s.Get("layers"); got != "3" {
		t.Errorf("layers=%q, want 3", got)
	}
	// a new family replaces the model; its cost is at the default n = 512
	if out := run(t, s, "model pi window=16"); !strings.Contains(out, "24576 of 262144 dense (9.4%)") {
		t.Errorf("`model pi window=16` printed %q, want its first layer's 24576 of 262144 scores", out)
	}
	if _, ok := s.Get("layers"); ok {
		t.Error("`model pi` kept layers from the ecp model")
	}
	status := run(t, s, "status")
	for _, want := range []string{"model       pi window=16", "data        (not set)", "no results yet"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}

func TestSetUnsetAndStatus(t *testing.T) {
	s := NewSession()
	run(t, s, "set dropout=0.1 runs=3", "data opticks", "backend go")
	status := run(t, s, "status --json")
	for _, want := range []string{`"data":"opticks"`, `"backend":"go"`, `"runs":"3"`, `"dropout":"0.1"`} {
		if !strings.Contains(status, want) {
			t.Errorf("status --json lacks %s: %s", want, status)
		}
	}
	run(t, s, "unset runs")
	if _, ok := s.Get("runs"); ok {
		t.Error("unset runs left it set")
	}
	s.Remember("train", ModelChoice{Model: "ecp", Typed: map[string]string{"model": "ecp"}})
	if status := run(t, s, "status"); !strings.Contains(status, "train      model ecp") {
		t.Errorf("status does not summarise the last train result:\n%s", status)
	}
}

func TestSessionCommandErrorsNameTheRule(t *testing.T) {
	cases := []struct{ line, want string }{
		{"modl ecp", `did you mean "model"`},
		{"model ecp segment=100", "segment"},
		{"model ecp window=8", "does not apply to model ecp"},
		{"model ecp pi", "one FAMILY"},
		{"model nosuch", `unknown model "nosuch"`},
		{"model ecp layers=x", `layers="x" must be an integer`},
		{"data foldx", `did you mean "foldoc"`},
		{"backend tpu", `unknown backend "tpu"`},
		{"set", "needs key=value"},
		{"set stepz=3", "unknown option"},
		{"set window=100000", "window"}, // validated against the current (default) model
		{"unset nothing", "nothing is not set"},
		{"mask n=16384", "up to n=8192"},
		{"mask head=9", "head=9 must be in 0..3"},
		{`model "ecp`, "unterminated"},
	}
	for _, tc := range cases {
		err := Execute(context.Background(), NewSession(), tc.line, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.line, err, tc.want)
		} else if !IsUsage(err) {
			t.Errorf("%s: %v is not a usage error", tc.line, err)
		}
	}
}

func TestQuitEndsScriptsWithoutError(t *testing.T) {
	var out, errOut bytes.Buffer
	script := "model ecp\nquit\nnosuch command\n"
	if err := RunScript(context.Background(), NewSession(), strings.NewReader(script), &out, &errOut, false); err != nil {
		t.Fatalf("quit should end the script cleanly: %v (%s)", err, errOut.String())
	}
	if err := Execute(context.Background(), NewSession(), "exit", &out); !errors.Is(err, ErrQuit) {
		t.Errorf("exit returned %v", err)
	}
}

func TestInteractiveWithoutTerminalRunsLikeAScript(t *testing.T) {
	var out, errOut bytes.Buffer
	err := Interactive(context.Background(), NewSession(), strings.NewReader("model ecp n=128\nstatus\nbogus\nstatus\n"), &out, &errOut)
	if err == nil || !strings.Contains(errOut.String(), "line 3: bogus") {
		t.Fatalf("the failing line 3 should stop the run: err=%v stderr=%q", err, errOut.String())
	}
	if got := strings.Count(out.String(), "model       ecp n=128"); got != 1 {
		t.Errorf("status ran %d times before the failure, want 1:\n%s", got, out.String())
	}
}
