package nb

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ecpi-dev/ecpi/cluster"
)

// executor runs the batches of runs that TrainSeeds, ReadSeeds and Tune hand over:
// the one $ECPI_EXECUTOR names (local when unset), unless UseExecutor chose.
var executor cluster.Executor

// UseExecutor makes spec (cluster.Parse: "local", or "slurm partition=gpu
// time=2:00:00 gres=gpu:1 ...") the executor of this cell's batches, in place
// of $ECPI_EXECUTOR's.
func UseExecutor(spec string) { executor = Must(cluster.Parse(spec)) }

// batch hands runs (each a train line's options) to the executor as one batch
// and returns a reader of run i's result. With the local executor the session
// trains each run as it is read (reuse=true reads a cached one), as a single
// Train does; another executes the runs not yet in the run cache (a cell run
// again submits nothing) before batch returns, and reading a run reads the run
// cache. Ctrl-C while a batch runs cancels it (the Slurm executor cancels its
// jobs).
func batch(runs []string) func(i int) (Trained, error) {
	if executor == nil {
		executor = Must(cluster.FromEnv())
	}
	if _, local := executor.(cluster.Local); !local {
		for i := range runs {
			runs[i] += " reuse=true" // executed into the run cache, read from it
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	failed, err := cluster.ExecuteUncached(ctx, executor, runs, func(i int) bool { return cached(runs[i]) })
	stop()
	Must(0, err)
	return func(i int) (Trained, error) {
		if failed[i] != nil {
			return Trained{}, failed[i]
		}
		return train(runs[i])
	}
}

// cached asks the session whether the run of a train line's options is
// finished in the run cache.
func cached(run string) bool {
	line := "cached " + run
	return lastOf[struct {
		Cached bool `json:"cached"`
	}](line, Query(line)).Cached
}
