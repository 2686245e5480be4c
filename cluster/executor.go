// Package cluster decides where a batch of independent training runs
// executes: in the session, one after the other, as they are read (local, the
// default), or as one Slurm job array whose tasks meet in a run cache on a
// shared filesystem (slurm; package runcache keeps the claims). Where a run
// executes never changes what it computes: a run's result is read from the
// run cache the same way whichever executor made it.
//
// cluster imports nothing heavy (no GoMLX, no train): package nb uses it in
// every notebook cell.
package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Env names the executor (a Spec) when set: ECPI_EXECUTOR=slurm.
const Env = "ECPI_EXECUTOR"

// Executor runs batches of runs.
type Executor interface {
	// Execute runs a batch, each run a train line's options (with
	// reuse=true), so that each one's result can then be read from the run
	// cache; failed[i], when set, is why run i has none (its job id and log's
	// last lines). err ends the whole batch (Ctrl-C, sbatch refused).
	Execute(ctx context.Context, runs []string) (failed []error, err error)
}

// ExecuteUncached executes, on e, the runs of a batch that are not yet in the
// run cache (cached(i) says whether run i is) and returns each run's failure:
// a batch read again submits nothing. The local executor executes nothing:
// the session trains each run as it is read.
func ExecuteUncached(ctx context.Context, e Executor, runs []string, cached func(i int) bool) ([]error, error) {
	failed := make([]error, len(runs))
	if _, local := e.(Local); local {
		return failed, nil
	}
	var todo []string
	var of []int // the run of each of todo
	for i, run := range runs {
		if !cached(i) {
			todo, of = append(todo, run), append(of, i)
		}
	}
	if len(todo) == 0 {
		return failed, nil
	}
	failedTodo, err := e.Execute(ctx, todo)
	if err != nil {
		return nil, err
	}
	for j, err := range failedTodo {
		failed[of[j]] = err
	}
	return failed, nil
}

// Local leaves every run to the session, which trains it when it is read
// (with its progress and live plot), one after the other: ecpi's behaviour on
// one machine.
type Local struct{}

// Execute runs nothing ahead.
func (Local) Execute(_ context.Context, runs []string) ([]error, error) {
	return make([]error, len(runs)), nil
}

// FromEnv is the executor $ECPI_EXECUTOR names (Local when unset).
func FromEnv() (Executor, error) {
	e, err := Parse(os.Getenv(Env))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Env, err)
	}
	return e, nil
}

// Parse reads an executor's spec: "local" (or ""), or "slurm" followed by
// Slurm's knobs as name=value words:
//
//	slurm partition=gpu time=2:00:00 gres=gpu:1 retries=2 sbatch=--qos=high sbatch=--account=lab
//
// sbatch= passes one argument to sbatch as it is (repeat it for more); poll=
// is how often the batch's tasks are looked at (5s).
func Parse(spec string) (Executor, error) {
	words := strings.Fields(spec)
	if len(words) == 0 || (words[0] == "local" && len(words) == 1) {
		return Local{}, nil
	}
	if words[0] != "slurm" {
		return nil, fmt.Errorf("executor %q: choose local or slurm (with name=value knobs: %s)", words[0], strings.Join(slurmKnobs, ", "))
	}
	s := DefaultSlurm()
	for _, w := range words[1:] {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			return nil, fmt.Errorf("executor slurm: %q is not name=value (knobs: %s)", w, strings.Join(slurmKnobs, ", "))
		}
		if err := s.set(name, value); err != nil {
			return nil, fmt.Errorf("executor slurm: %w", err)
		}
	}
	return s, nil
}
