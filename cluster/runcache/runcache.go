// Package runcache makes the run cache of package train ($ECPI_RUNS/cache)
// safe to share between processes and machines: the Slurm tasks of a batch,
// a notebook's session server, a second notebook. train keeps the
// computation and the cache's layout; this package decides who trains a run.
//
// A process claims a run before it trains it, by creating <run>.claim beside
// the run's folder, exclusively (O_EXCL, which NFS v3 and later honour): the
// claim names the host, process and Slurm job that hold it, and its
// modification time is a heartbeat the holder refreshes while it trains.
// Another process that wants the run waits until the result is published or
// the claim is released; a claim whose holder is gone (its process ended on
// this host, its Slurm job ended, or its heartbeat is older than StaleAfter)
// is taken over, and the run resumes from its last checkpoint. train writes
// result.json by renaming a complete file into place, so a result is either
// whole or absent.
//
// A cached run that reached its last step but has no result.json (killed
// between the checkpoint and the result, or a damaged result deleted) is
// finished: its result is rebuilt from the checkpoint by evaluating it again,
// where train alone would refuse to train it further.
package runcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ecpi-dev/ecpi/train"
)

// resultFile is where train leaves a finished cached run's result.
const resultFile = "result.json"

// Cached reports whether o's run has its result in the run cache, in dir.
func Cached(o train.Options) (dir string, cached bool, err error) {
	if dir, err = train.CacheDir(o); err != nil {
		return "", false, err
	}
	return dir, exists(filepath.Join(dir, resultFile)), nil
}

// PollEvery is how often a process waiting for another's run looks again.
var PollEvery = time.Second

// Train is train.Run for a run with reuse=true whose run cache other
// processes share: a finished run is read, a run another live process holds
// is waited for and then read, and any other is claimed, then trained,
// resumed or (finished without its result) evaluated again.
func Train(ctx context.Context, o train.Options, progress func(train.Progress)) (*train.Result, error) {
	dir, err := train.CacheDir(o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("run cache: %w", err)
	}
	for {
		if exists(filepath.Join(dir, resultFile)) {
			return train.Run(ctx, o, progress) // reads it
		}
		c, err := claim(dir)
		if err != nil {
			return nil, err
		}
		if c != nil {
			return trainClaimed(ctx, c, o, dir, progress)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the run in %s, which another process trains: %w", dir, ctx.Err())
		case <-time.After(PollEvery):
		}
	}
}

// trainClaimed trains, resumes or rebuilds the run in dir, holding its claim
// c: training stops (with a checkpoint) if the claim is lost.
func trainClaimed(ctx context.Context, c *held, o train.Options, dir string, progress func(train.Progress)) (*train.Result, error) {
	defer c.release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the heartbeat stops before the claim is released
	go c.beat(ctx, cancel)
	if finished, err := finishedWithoutResult(dir, o.Steps); err != nil || finished {
		if err != nil {
			return nil, err
		}
		return rebuild(ctx, o, dir)
	}
	r, err := train.Run(ctx, o, progress)
	if err == nil && c.lost() {
		return r, fmt.Errorf("run %s: another process took over its claim (%s) while it trained; it stopped at step %d", dir, c.path, r.Steps)
	}
	return r, err
}

// finishedWithoutResult reports whether the run in dir reached steps without
// leaving its result.
func finishedWithoutResult(dir string, steps int) (bool, error) {
	if exists(filepath.Join(dir, resultFile)) {
		return false, nil
	}
	if all, _ := train.Checkpoints(dir); len(all) == 0 {
		return false, nil
	}
	m, _, err := train.LoadManifest(dir)
	if err != nil {
		return false, err
	}
	return m.Step >= steps, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
