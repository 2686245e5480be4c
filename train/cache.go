package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ecpi-dev/ecpi"
)

// The run cache lets a long experiment (a notebook's full mode, a sweep) be
// run again without training again: with reuse=true a run lives in
// $ECPI_HOME/runs/cache/<model>-<data>-<key> ($ECPI_RUNS/cache/... when set), where the key hashes every option
// that changes what is trained (not where it runs: backend, devices, the run
// folder) and the version of the code that trains it. A finished run leaves its result there and is returned as it is;
// an interrupted one is resumed from its last checkpoint.

// The files a finished cached run leaves: its Result, and for retrieval the
// test measurement.
const (
	resultFile    = "result.json"
	retrievalFile = "retrieval.json"
)

// codeVersion is the version of the code that trains (ecpi.CodeVersion);
// tests stand in another to see a cached run of other code missed.
var codeVersion = ecpi.CodeVersion

// cacheKey hashes the options that decide what a run trains, and the code
// version: a run of other code is trained again, never replayed.
func cacheKey(o Options) (string, error) {
	o.Home, o.RunDir, o.Backend, o.Devices, o.Keep, o.Reuse = "", "", "", 1, 0, false
	b, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(b, codeVersion()...))
	return hex.EncodeToString(sum[:6]), nil
}

// CacheDir is the run folder of o in the run cache (package cluster/runcache claims it for
// processes that share the cache).
func CacheDir(o Options) (string, error) {
	key, err := cacheKey(o)
	if err != nil {
		return "", err
	}
	return filepath.Join(RunsDir(o.Home), "cache", fmt.Sprintf("%s-%s-%s", o.Model.Model, o.Data, key)), nil
}

// runCached is Run with reuse=true.
func runCached(ctx context.Context, o Options, progress func(Progress)) (*Result, error) {
	dir, err := CacheDir(o)
	if err != nil {
		return nil, err
	}
	var done Result
	if found, err := readCached(filepath.Join(dir, resultFile), &done); found || err != nil {
		return &done, err
	}
	var r *Result
	if existing, _ := Checkpoints(dir); len(existing) > 0 {
		r, err = Resume(ctx, dir, map[string]string{"steps": fmt.Sprint(o.Steps), "backend": o.Backend}, progress)
	} else {
		o.RunDir, o.Reuse = dir, false
		r, err = Run(ctx, o, progress)
	}
	if err != nil || r.Interrupted {
		return r, err
	}
	return r, writeCached(filepath.Join(dir, resultFile), r)
}

// readCached loads a finished run's result; found is false when there is none.
func readCached(path string, into any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return true, fmt.Errorf("cached run: %s is damaged (%v); delete it to train again", path, err)
	}
	return true, nil
}

// writeCached writes a result beside a run's checkpoints, atomically.
func writeCached(path string, result any) error {
	b, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
