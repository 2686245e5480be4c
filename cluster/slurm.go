package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Slurm runs a batch as one Slurm job array, a task per run: each task runs
// `ecpi train OPTIONS reuse=true`, which claims its run in the shared run
// cache, trains or resumes it there and publishes its result. A task killed
// from outside (preemption, time limit, node failure, scancel) is submitted
// again, up to Retries times, and resumes from its run's last checkpoint; a
// task that fails for its own reasons (diverged, a wrong option) is reported
// with its job id and the end of its log, and the batch's other runs finish.
type Slurm struct {
	Partition string   // --partition ("": the cluster's default)
	Time      string   // --time, each task's limit
	Gres      string   // --gres, e.g. gpu:1 (with backend=xla:cuda)
	Sbatch    []string // more sbatch arguments, as they are
	Retries   int      // submissions of a killed task beyond its first
	Binary    string   // the ecpi each task runs: $ECPI_BIN, else ecpi on the PATH
	// Poll is how often the batch's tasks are looked at; a task gone from the
	// queue without its exit status counts as killed once Grace has passed
	// (a status written on another node can take a moment to show on NFS).
	Poll, Grace time.Duration
	Out         io.Writer // progress and failures, as they happen
}

// slurmKnobs are the names Parse reads after "slurm".
var slurmKnobs = []string{"partition", "time", "gres", "retries", "sbatch", "poll"}

// DefaultSlurm is the slurm executor before its knobs.
func DefaultSlurm() *Slurm {
	return &Slurm{Retries: 2, Binary: os.Getenv("ECPI_BIN"), Poll: 5 * time.Second, Grace: 15 * time.Second, Out: os.Stdout}
}

func (s *Slurm) set(name, value string) error {
	switch name {
	case "partition":
		s.Partition = value
	case "time":
		s.Time = value
	case "gres":
		s.Gres = value
	case "sbatch":
		s.Sbatch = append(s.Sbatch, value)
	case "poll":
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return fmt.Errorf("poll=%s must be a duration above 0, like 5s", value)
		}
		s.Poll = d
	case "retries":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return fmt.Errorf("retries=%s must be a whole number, 0 or more", value)
		}
		s.Retries = n
	default:
		return fmt.Errorf("unknown knob %q (knobs: %s)", name, strings.Join(slurmKnobs, ", "))
	}
	return nil
}

// task is one run of a batch: the array jobs it was submitted in, newest last.
type task struct {
	index   int
	jobs    []string
	missing time.Time // when it was first seen gone from the queue without an exit status
	state   string    // pending, running, done or failed
	err     error
}

// id is the task's Slurm job id, job_index, in its latest submission.
func (t *task) id() string { return fmt.Sprintf("%s_%d", t.jobs[len(t.jobs)-1], t.index) }

// batch is one Execute: its folder on the shared filesystem holds the runs,
// the task script, the tasks' logs and exit statuses.
type batch struct {
	*Slurm
	dir   string
	runs  []string
	tasks []*task
	shown string // the last progress line
}

// Execute submits the batch, waits for every task and returns each run's
// failure. Cancelling ctx (Ctrl-C) cancels the batch's jobs.
func (s *Slurm) Execute(ctx context.Context, runs []string) ([]error, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	b, err := s.prepare(runs)
	if err != nil {
		return nil, err
	}
	all := make([]int, len(runs))
	for i := range all {
		all[i] = i
	}
	if err := b.submit(all); err != nil {
		return nil, err
	}
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	failed := make([]error, len(runs))
	for i, t := range b.tasks {
		failed[i] = t.err
	}
	return failed, nil
}

// prepare writes the batch's folder: runs (a line each) and the task script.
func (s *Slurm) prepare(runs []string) (*batch, error) {
	runsDir := os.Getenv("ECPI_RUNS")
	if runsDir == "" {
		return nil, errors.New("executor slurm needs ECPI_RUNS: the run cache on a filesystem that every node shares")
	}
	bin, err := s.binary()
	if err != nil {
		return nil, err
	}
	// The task script quotes paths in '...' and splits a run's options into words.
	if strings.ContainsRune(runsDir+bin, '\'') {
		return nil, fmt.Errorf("executor slurm: paths with a quote (%s, %s) cannot be passed to tasks", runsDir, bin)
	}
	for _, run := range runs {
		if strings.ContainsAny(run, "\n'\"\\$`") {
			return nil, fmt.Errorf("executor slurm: run %q: options with quotes, $, ` or \\ are not passed to tasks", run)
		}
	}
	if err := os.MkdirAll(filepath.Join(runsDir, "slurm"), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Join(runsDir, "slurm"), time.Now().Format("20060102-150405-"))
	if err != nil {
		return nil, err
	}
	b := &batch{Slurm: s, dir: dir, runs: runs}
	for i := range runs {
		b.tasks = append(b.tasks, &task{index: i, state: "pending"})
	}
	if err := os.WriteFile(filepath.Join(dir, "runs"), []byte(strings.Join(runs, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	// A task writes its exit status only when ecpi ends by itself: one killed
	// from outside takes its shell with it and leaves none. A run that ecpi
	// stopped on a signal (SIGINT: a checkpoint, then status 0) ends its log
	// with "interrupted:" and counts as killed too.
	script := fmt.Sprintf(`#!/bin/bash
# One run of an ecpi batch (line SLURM_ARRAY_TASK_ID+1 of runs), through the shared run cache.
set -f
echo "Slurm job ${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID on node $SLURMD_NODENAME"
line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" '%[1]s/runs')
'%[2]s' train $line reuse=true
status=$?
if [ $status -eq 0 ] && tail -n 1 '%[1]s/'"${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID.log" | grep -q '^interrupted: '; then
  exit 1
fi
echo $status > '%[1]s/exit-'"$SLURM_ARRAY_TASK_ID-$SLURM_ARRAY_JOB_ID"
exit $status
`, dir, bin)
	return b, os.WriteFile(filepath.Join(dir, "task.sh"), []byte(script), 0o755)
}

// binary is the ecpi the tasks run, as an absolute path.
func (s *Slurm) binary() (string, error) {
	bin := s.Binary
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("ecpi"); err != nil {
			return "", errors.New("executor slurm: no ecpi binary for the tasks: set ECPI_BIN or put ecpi on the PATH (every node must reach it)")
		}
	}
	return filepath.Abs(bin)
}

// submit submits the tasks of indices as one job array.
func (b *batch) submit(indices []int) error {
	list := make([]string, len(indices))
	for i, index := range indices {
		list[i] = strconv.Itoa(index)
	}
	args := []string{"--parsable", "--array=" + strings.Join(list, ","), "--job-name=ecpi",
		"--output=" + filepath.Join(b.dir, "%A_%a.log")}
	for _, knob := range [][2]string{{"--partition=", b.Partition}, {"--time=", b.Time}, {"--gres=", b.Gres}} {
		if knob[1] != "" {
			args = append(args, knob[0]+knob[1])
		}
	}
	args = append(append(args, b.Sbatch...), filepath.Join(b.dir, "task.sh"))
	cmd := exec.Command("sbatch", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("sbatch %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	job, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";") // job[;cluster]
	if _, err := strconv.Atoi(job); err != nil {
		return fmt.Errorf("sbatch answered %q, not a job id", out)
	}
	for _, index := range indices {
		t := b.tasks[index]
		t.jobs, t.state, t.missing = append(t.jobs, job), "pending", time.Time{}
	}
	return nil
}

// wait follows the tasks until every one is done or failed, saying how the
// batch stands whenever that changes.
func (b *batch) wait(ctx context.Context) error {
	for {
		queued, err := b.queue()
		if err != nil {
			return err
		}
		var again []int
		for _, t := range b.tasks {
			if b.look(t, queued) {
				again = append(again, t.index)
			}
		}
		if len(again) > 0 {
			if err := b.submit(again); err != nil {
				return err
			}
		}
		b.progress()
		if b.finished() {
			return nil
		}
		select {
		case <-ctx.Done():
			return b.cancel(ctx.Err())
		case <-time.After(b.Poll):
		}
	}
}

// queue is the state of each of this user's tasks in Slurm's queue, by job id
// (job_index). Asking for the batch's jobs by id would fail once Slurm forgot
// one that ended (MinJobAge).
func (b *batch) queue() (map[string]string, error) {
	out, err := exec.Command("squeue", "--me", "-h", "-r", "-o", "%i %T").Output()
	if err != nil {
		return nil, fmt.Errorf("squeue: %w", err)
	}
	queued := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if id, state, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			queued[id] = state
		}
	}
	return queued, nil
}

// jobs are the array jobs submitted for the batch.
func (b *batch) jobs() []string {
	var jobs []string
	for _, t := range b.tasks {
		for _, j := range t.jobs {
			if !slices.Contains(jobs, j) {
				jobs = append(jobs, j)
			}
		}
	}
	return jobs
}

// look updates a task from the queue and its exit status; it reports whether
// the task was killed and is to be submitted again.
func (b *batch) look(t *task, queued map[string]string) (retry bool) {
	if t.state == "done" || t.state == "failed" {
		return false
	}
	if state, ok := queued[t.id()]; ok {
		t.state = "running"
		if state == "PENDING" {
			t.state = "pending"
		}
		return false
	}
	status, err := os.ReadFile(filepath.Join(b.dir, fmt.Sprintf("exit-%d-%s", t.index, t.jobs[len(t.jobs)-1])))
	switch {
	case err == nil && strings.TrimSpace(string(status)) == "0":
		t.state = "done"
	case err == nil:
		t.state = "failed"
		t.err = fmt.Errorf("run %q failed in Slurm job %s (exit status %s); the end of its log %s:\n%s",
			b.runs[t.index], t.id(), strings.TrimSpace(string(status)), b.log(t), tail(b.log(t), 15))
		fmt.Fprintf(b.Out, "run %d of %d failed (Slurm job %s): %s\n", t.index+1, len(b.tasks), t.id(), lastLine(b.log(t)))
	case t.missing.IsZero():
		t.missing = time.Now()
	case time.Since(t.missing) < b.Grace:
	case len(t.jobs) > b.Retries:
		t.state = "failed"
		t.err = fmt.Errorf("run %q was killed %d times (Slurm jobs %s: preempted, out of time or its node failed); the end of its last log %s:\n%s",
			b.runs[t.index], len(t.jobs), strings.Join(t.jobs, ", "), b.log(t), tail(b.log(t), 15))
		fmt.Fprintf(b.Out, "run %d of %d killed %d times (Slurm job %s): given up\n", t.index+1, len(b.tasks), len(t.jobs), t.id())
	default:
		fmt.Fprintf(b.Out, "run %d of %d was killed (Slurm job %s); submitting it again (retry %d of %d), it resumes from its last checkpoint\n",
			t.index+1, len(b.tasks), t.id(), len(t.jobs), b.Retries)
		return true
	}
	return false
}

// log is the task's log in its latest submission.
func (b *batch) log(t *task) string { return filepath.Join(b.dir, t.id()+".log") }

// tail is the last n lines of a file ("" when it cannot be read).
func tail(path string, n int) string {
	text, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func lastLine(path string) string { return tail(path, 1) }

// progress says how the batch stands, when that changed.
func (b *batch) progress() {
	count := map[string]int{}
	for _, t := range b.tasks {
		count[t.state]++
	}
	line := fmt.Sprintf("Slurm job %s: %d of %d runs done, %d running, %d pending, %d failed",
		strings.Join(b.jobs(), ", "), count["done"], len(b.tasks), count["running"], count["pending"], count["failed"])
	if line != b.shown {
		fmt.Fprintln(b.Out, line)
		b.shown = line
	}
}

func (b *batch) finished() bool {
	for _, t := range b.tasks {
		if t.state != "done" && t.state != "failed" {
			return false
		}
	}
	return true
}

// cancel cancels the batch's jobs (scancel) and says so.
func (b *batch) cancel(why error) error {
	jobs := b.jobs()
	out, err := exec.Command("scancel", jobs...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w; scancel %s failed: %v: %s", why, strings.Join(jobs, " "), err, strings.TrimSpace(string(out)))
	}
	fmt.Fprintf(b.Out, "cancelled Slurm job %s (scancel)\n", strings.Join(jobs, ", "))
	return fmt.Errorf("batch of %d runs stopped, its Slurm jobs cancelled: %w", len(b.tasks), why)
}
