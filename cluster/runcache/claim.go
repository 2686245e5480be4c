package runcache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// StaleAfter is how old a claim's heartbeat may be before its holder counts
// as gone; the holder refreshes it every StaleAfter/4. Machines that share a
// run cache must agree on the time to well within it.
var StaleAfter = 2 * time.Minute

// claimant is what a claim file holds: who trains the run.
type claimant struct {
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Job   string    `json:"job,omitempty"` // the Slurm job (array job_task) the process runs in
	Token string    `json:"token"`         // this claim, not another of the same process
	Since time.Time `json:"since"`
}

// held is a claim this process holds.
type held struct {
	path    string
	token   string
	markers []string // takeover markers of the stale claims it replaced
	gone    atomic.Bool
}

// me is a new claimant: this process, in its Slurm job if any.
func me() claimant {
	host, _ := os.Hostname()
	job := os.Getenv("SLURM_JOB_ID")
	if array := os.Getenv("SLURM_ARRAY_JOB_ID"); array != "" {
		job = array + "_" + os.Getenv("SLURM_ARRAY_TASK_ID")
	}
	token := make([]byte, 8)
	rand.Read(token)
	return claimant{Host: host, PID: os.Getpid(), Job: job, Token: hex.EncodeToString(token), Since: time.Now().UTC()}
}

// claim claims the run in dir for this process: nil when a live process
// holds it; a claim whose holder is gone is taken over.
func claim(dir string) (*held, error) {
	path := dir + ".claim"
	var markers []string
	for {
		c, err := create(path)
		if err != nil || c != nil {
			if c != nil {
				c.markers = markers
			}
			return c, err
		}
		holder, age, err := read(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released in between
		}
		if err != nil {
			return nil, err
		}
		if !holder.gone(age) {
			return nil, nil
		}
		// Of the processes that found the same stale claim, the one that
		// creates its takeover marker (exclusively) removes it.
		marker := path + ".takeover-" + holder.Token
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("run cache: taking over %s: %w", path, err)
		}
		f.Close()
		markers = append(markers, marker)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run cache: taking over %s: %w", path, err)
		}
	}
}

// create makes the claim file at path exclusively: nil when it exists.
func create(path string) (*held, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run cache: claiming %s: %w", path, err)
	}
	c := me()
	b, _ := json.Marshal(c)
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("run cache: claiming %s: %w", path, err)
	}
	return &held{path: path, token: c.Token}, nil
}

// read returns a claim's holder and the age of its heartbeat. A claim being
// written (empty) has a holder of no token, gone only when stale.
func read(path string) (claimant, time.Duration, error) {
	info, err := os.Stat(path)
	if err != nil {
		return claimant{}, 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return claimant{}, 0, err
	}
	var c claimant
	json.Unmarshal(b, &c) // a partial claim reads as no holder: judged by its age
	return c, time.Since(info.ModTime()), nil
}

// gone reports whether the claim's holder no longer trains: its heartbeat is
// stale, its process ended (on this host) or its Slurm job ended.
func (c claimant) gone(age time.Duration) bool {
	if age > StaleAfter {
		return true
	}
	if c.Token == "" {
		return false
	}
	if host, _ := os.Hostname(); c.Host == host && syscall.Kill(c.PID, 0) == syscall.ESRCH {
		return true
	}
	return c.Job != "" && jobEnded(c.Job)
}

// jobEnded asks Slurm whether a job has ended; false when it cannot tell.
func jobEnded(job string) bool {
	if _, err := exec.LookPath("squeue"); err != nil {
		return false
	}
	out, err := exec.Command("squeue", "-h", "-j", job, "-o", "%T").CombinedOutput()
	if err != nil {
		return strings.Contains(string(out), "Invalid job id") // forgotten since it ended
	}
	return strings.TrimSpace(string(out)) == ""
}

// beat refreshes the claim's heartbeat until ctx ends; when the claim is no
// longer this process's (taken over), it calls lost to stop the training.
func (c *held) beat(ctx context.Context, lost func()) {
	tick := time.NewTicker(StaleAfter / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if holder, _, err := read(c.path); err != nil || holder.Token != c.token {
			c.gone.Store(true)
			lost()
			return
		}
		now := time.Now()
		os.Chtimes(c.path, now, now)
	}
}

// lost reports whether another process took the claim over.
func (c *held) lost() bool { return c.gone.Load() }

// release removes the claim (if still this process's) and its takeover
// markers.
func (c *held) release() {
	if holder, _, err := read(c.path); err == nil && holder.Token == c.token {
		os.Remove(c.path)
	}
	for _, m := range c.markers {
		os.Remove(m)
	}
}
