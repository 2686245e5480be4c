package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParse: local by default; slurm with its knobs; a wrong spec names the
// knob and the rule.
func TestParse(t *testing.T) {
	for _, spec := range []string{"", "local", "  local "} {
		if e, err := Parse(spec); err != nil || e != (Local{}) {
			t.Errorf("Parse(%q) = %v, %v; want Local", spec, e, err)
		}
	}
	e, err := Parse("slurm partition=gpu time=1:00:00 gres=gpu:2 retries=5 sbatch=--qos=high sbatch=--account=lab poll=2s")
	if err != nil {
		t.Fatal(err)
	}
	s := e.(*Slurm)
	if s.Partition != "gpu" || s.Time != "1:00:00" || s.Gres != "gpu:2" || s.Retries != 5 || s.Poll != 2*time.Second || !slices.Equal(s.Sbatch, []string{"--qos=high", "--account=lab"}) {
		t.Errorf("knobs read as %+v", s)
	}
	for spec, want := range map[string]string{
		"kubernetes":          "choose local or slurm",
		"slurm nodes=4":       `unknown knob "nodes"`,
		"slurm retries=-1":    "retries=-1 must be",
		"slurm poll=0s":       "poll=0s must be a duration",
		"slurm gpu":           `"gpu" is not name=value`,
		"local partition=gpu": "choose local or slurm",
	} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v; want an error saying %q", spec, err, want)
		}
	}
}

// TestLocalExecutesNothingAhead: the session trains each run when it is read.
func TestLocalExecutesNothingAhead(t *testing.T) {
	failed, err := Local{}.Execute(context.Background(), []string{"model=ecp", "model=full"})
	if err != nil || len(failed) != 2 || failed[0] != nil || failed[1] != nil {
		t.Fatalf("Local.Execute = %v, %v; want no failures", failed, err)
	}
}

// TestFromEnv reads ECPI_EXECUTOR.
func TestFromEnv(t *testing.T) {
	t.Setenv(Env, "slurm partition=debug")
	if e, err := FromEnv(); err != nil || e.(*Slurm).Partition != "debug" {
		t.Fatalf("FromEnv = %v, %v", e, err)
	}
	t.Setenv(Env, "cloud")
	if _, err := FromEnv(); err == nil || !strings.HasPrefix(err.Error(), Env) {
		t.Fatalf("a wrong %s: %v; want an error naming it", Env, err)
	}
}

// failing is an executor that keeps its batch and fails every run.
type failing struct{ got []string }

func (f *failing) Execute(_ context.Context, runs []string) ([]error, error) {
	f.got = runs
	failed := make([]error, len(runs))
	for i, run := range runs {
		failed[i] = errors.New(run + " failed")
	}
	return failed, nil
}

// TestExecuteUncached: only the runs not cached are executed, and each
// failure comes back at its run's place; the local executor executes nothing.
func TestExecuteUncached(t *testing.T) {
	runs := []string{"a", "b", "c"}
	cached := func(i int) bool { return runs[i] == "b" }
	f := &failing{}
	failed, err := ExecuteUncached(context.Background(), f, runs, cached)
	if err != nil || !slices.Equal(f.got, []string{"a", "c"}) {
		t.Fatalf("executed %q (%v); want a and c", f.got, err)
	}
	if failed[0] == nil || failed[0].Error() != "a failed" || failed[1] != nil || failed[2] == nil || failed[2].Error() != "c failed" {
		t.Fatalf("failures %v; want a's and c's at their places", failed)
	}
	f.got = nil
	if failed, err := ExecuteUncached(context.Background(), f, []string{"b"}, func(int) bool { return true }); err != nil || f.got != nil || failed[0] != nil {
		t.Fatalf("a cached batch was executed (%q, %v)", f.got, err)
	}
	if failed, err := ExecuteUncached(context.Background(), Local{}, runs, func(int) bool { return false }); err != nil || len(failed) != 3 || failed[0] != nil {
		t.Fatalf("the local executor: %v, %v", failed, err)
	}
}
