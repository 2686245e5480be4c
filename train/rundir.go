package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A run folder is written by one process at a time: the writer holds an
// exclusive flock on <run>/.lock for as long as it trains. The kernel drops
// the lock when the process ends, however it ends (SIGKILL included), so a
// lock never outlives its holder; the file keeps the last holder's PID for
// the message another process sees.
const lockFile = ".lock"

// RunsEnv names the folder of run folders and of the run cache when set.
// make test points it at a fresh folder, so that no test reads or replays the
// runs of the machine's user.
const RunsEnv = "ECPI_RUNS"

// RunsDir is where new run folders and the run cache go: $ECPI_RUNS, else
// home/runs.
func RunsDir(home string) string {
	if dir := os.Getenv(RunsEnv); dir != "" {
		return dir
	}
	return filepath.Join(home, "runs")
}

// runDir is a run folder this process writes.
type runDir struct {
	path    string
	lock    *os.File
	created bool // made by this process: removed again if it ends without a checkpoint
}

// claimRunDir makes (when missing) and locks the run folder path. A folder
// locked by another process is an error naming that process.
func claimRunDir(path string) (*runDir, error) {
	created := false
	if err := os.Mkdir(path, 0o755); err == nil {
		created = true
	} else if !errors.Is(err, os.ErrExist) {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("run folder %s: %w", path, err)
		}
		created = true
	}
	return lockRunDir(&runDir{path: path, created: created})
}

// claimNewRunDir makes and locks a new run folder: base, or base-2, base-3,
// ... when base exists (runs started within the same second share a name).
func claimNewRunDir(base string) (*runDir, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	path := base
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return lockRunDir(&runDir{path: path, created: true})
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("run folder %s: %w", path, err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
}

// lockRunDir takes the folder's lock, then removes the temporary folders
// that killed processes left in it.
func lockRunDir(d *runDir) (*runDir, error) {
	if err := d.acquire(); err != nil {
		d.removeIfCreated()
		return nil, err
	}
	if err := removeTemporaries(d.path); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

func (d *runDir) acquire() error {
	f, err := os.OpenFile(filepath.Join(d.path, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("run folder %s: %w", d.path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("run folder %s is being written by another ecpi (process %s); wait for it to finish or choose another run=", d.path, strings.TrimSpace(string(holder)))
		}
		return fmt.Errorf("locking run folder %s: %w", d.path, err)
	}
	if f.Truncate(0) == nil { // the holder's pid only makes another process's message above clearer
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	d.lock = f
	return nil
}

// release unlocks the folder, first removing it when this process made it
// and saved no checkpoint in it.
func (d *runDir) release() {
	if d == nil || d.lock == nil {
		return
	}
	d.removeIfCreated()
	d.lock.Close()
	d.lock = nil
}

func (d *runDir) removeIfCreated() {
	if !d.created {
		return
	}
	if all, err := Checkpoints(d.path); err == nil && len(all) == 0 {
		os.RemoveAll(d.path)
	}
}

// removeTemporaries deletes .ckpt-*.tmp* folders: checkpoints being written
// or pruned by a process that was killed. Only the lock holder calls it.
func removeTemporaries(dir string) error {
	leftovers, err := filepath.Glob(filepath.Join(dir, "."+ckptPrefix+"*.tmp*"))
	if err != nil {
		return err
	}
	for _, path := range leftovers {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("removing %s, left by an interrupted save: %w", path, err)
		}
	}
	return nil
}

// claimNewRun locks the folder of a new run: run (refused when it holds
// checkpoints), or when run is "" a new <runs>/<name>-<time>.
func claimNewRun(run, runs, name string) (*runDir, error) {
	if run == "" {
		return claimNewRunDir(filepath.Join(runs, fmt.Sprintf("%s-%s", name, time.Now().Format("20060102-150405"))))
	}
	// Checked before the lock, so a refused run leaves the folder untouched,
	// and again once it is held.
	if err := refuseSavedRun(run); err != nil {
		return nil, err
	}
	d, err := claimRunDir(run)
	if err != nil {
		return nil, err
	}
	if err := refuseSavedRun(run); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

func refuseSavedRun(run string) error {
	if existing, _ := Checkpoints(run); len(existing) > 0 {
		return fmt.Errorf("run folder %s already has checkpoints: continue it with `ecpi resume run=%s` or choose another run=", run, run)
	}
	return nil
}

// claimResumedRun locks the run folder of the checkpoint resumed at step, or,
// when that run has later checkpoints, a new folder beside it (branched).
func claimResumedRun(checkpoint string, step int) (d *runDir, branched bool, err error) {
	run := filepath.Dir(checkpoint)
	if d, err = claimRunDir(run); err != nil {
		return nil, false, err
	}
	all, err := Checkpoints(run)
	if err != nil {
		d.release()
		return nil, false, err
	}
	if len(all) > 0 && filepath.Base(all[len(all)-1]) == filepath.Base(checkpoint) {
		return d, false, nil
	}
	d.release()
	d, err = claimNewRunDir(fmt.Sprintf("%s-from-%d", run, step))
	return d, true, err
}
