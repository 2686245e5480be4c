package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/ecpi-dev/ecpi/models"
)

// PeakEnv asks a measuring child process (MeasureApart) to report its own
// peak resident memory with each result.
const PeakEnv = "ECPI_BENCH_PEAK"

// Cell is one measurement of the attention benchmark: a variant at a length.
type Cell struct {
	Variant string
	N       int
}

// ProcessPeakMB is this process's resident high-water mark (VmHWM), in MB, or
// 0 where /proc cannot tell. It is read in the measuring process itself: the
// rusage a parent gets from wait4 starts from the parent's own size at fork
// (a session server holding models put an 886 MB floor under every figure).
func ProcessPeakMB() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if value, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(value), " kB"), &kb)
			return kb / 1024
		}
	}
	return 0
}

// OptionError is a sweep's options that name no valid configuration.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Plan is the cells a sweep measures, in order, and those the machine cannot
// hold, with why.
type Plan struct {
	Cells    []Cell
	TooLarge map[Cell]string
}

// PlanAttention lists every (n, variant) of o and checks each configuration
// (an *OptionError) and, with fits, whether the machine holds its one
// attention layer. A sweep apart looks for where each variant stops fitting,
// so it reports those cells as not measured and goes on; in one process a cell
// that does not fit is an error before anything runs.
func PlanAttention(o AttentionOptions, fits func(cfg models.Config, batch int) error) (Plan, error) {
	plan := Plan{TooLarge: map[Cell]string{}}
	for _, n := range o.Lengths {
		for _, variant := range o.Variants {
			cell := Cell{Variant: variant, N: n}
			plan.Cells = append(plan.Cells, cell)
			cfg, err := o.PatternConfig(variant, n)
			if err != nil {
				return plan, &OptionError{err}
			}
			cfg.Layers, cfg.Vocab = 1, 1 // one attention layer, no vocabulary
			if err := fits(cfg, o.Batch); err != nil {
				if !o.Apart {
					return plan, fmt.Errorf("%s at n=%d: %w", variant, n, err)
				}
				plan.TooLarge[cell] = err.Error()
			}
		}
	}
	return plan, nil
}

// Sweep measures a plan: every cell in this process (Attention), or with
// o.Apart each in a child process that child makes (MeasureApart). Such a
// child (PeakEnv set) adds its own peak memory to what it reports.
func Sweep(ctx context.Context, o AttentionOptions, plan Plan, backendName string, child func(ctx context.Context, c Cell) *exec.Cmd, report func(AttentionResult) error) error {
	if os.Getenv(PeakEnv) == "1" {
		parentReport := report
		report = func(r AttentionResult) error {
			r.PeakMB = ProcessPeakMB()
			return parentReport(r)
		}
	}
	if o.Apart {
		return MeasureApart(ctx, plan.Cells, plan.TooLarge, child, report)
	}
	return Attention(ctx, o, backendName, report)
}

// CellOptions are the key=value options that make a process measure one cell
// of o: o's own, narrowed to the cell, read back from AttentionTable so a new
// option reaches the children without a line here.
func CellOptions(o AttentionOptions, cell Cell) []string {
	o.Variants, o.Lengths, o.Apart = []string{cell.Variant}, []int{cell.N}, false
	args := make([]string, len(AttentionTable))
	for i, f := range AttentionTable {
		args[i] = f.Name + "=" + f.Get(o)
	}
	return args
}

// MeasureApart measures each cell in a child process of its own, which
// reports its peak resident memory with its result: a process's high-water
// mark is the one memory figure that covers every allocator (Go's, XLA's),
// and a fresh process keeps one measurement's memory from hiding in another's
// freed pages. child makes the command that measures one cell and prints its
// AttentionResult as the last JSON line; tooLarge holds the cells the machine
// cannot hold, with why: those are reported as not measured.
func MeasureApart(ctx context.Context, cells []Cell, tooLarge map[Cell]string, child func(ctx context.Context, c Cell) *exec.Cmd, report func(AttentionResult) error) error {
	for _, cell := range cells {
		if why, ok := tooLarge[cell]; ok {
			if err := report(AttentionResult{Variant: cell.Variant, N: cell.N, NotMeasured: why}); err != nil {
				return err
			}
			continue
		}
		r, err := measureChild(child(ctx, cell))
		if err != nil {
			return fmt.Errorf("%s at n=%d: %w", cell.Variant, cell.N, err)
		}
		if err := report(r); err != nil {
			return err
		}
	}
	return nil
}

func measureChild(cmd *exec.Cmd) (AttentionResult, error) {
	cmd.Env = append(os.Environ(), PeakEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return AttentionResult{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r AttentionResult
	if err := json.Unmarshal(lastJSONLine(out), &r); err != nil {
		return r, fmt.Errorf("reading the measurement: %w", err)
	}
	if usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && r.PeakMB == 0 {
		r.PeakMB = float64(usage.Maxrss) / 1024 // no /proc in the child: Linux's rusage, in kilobytes
	}
	return r, nil
}

// lastJSONLine is the last line of out that holds a JSON object.
func lastJSONLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(bytes.TrimSpace(lines[i]), []byte("{")) {
			return lines[i]
		}
	}
	return nil
}
