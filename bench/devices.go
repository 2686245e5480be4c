package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/ecpi-dev/ecpi/xla"
)

// DevicesOptions configures `bench devices`: the memory each device holds
// for one layer's training step when every sequence is split across devices
// (devices=N parallel=sequence), as XLA's compiler plans it. The papers'
// "the same context on half the accelerators" is about that memory.
type DevicesOptions struct {
	Variants []string
	Lengths  []int
	Devices  []int // 1 is one device, the whole sequence on it
	Batch    int
	Dim      int
	Heads    int
	Window   int    // each family's window, half-segment or block (models.Config.WithWindow)
	Data     string // the corpus whose batches the step reads (prepared)
	Backend  string // an XLA backend with as many devices as the largest of Devices
}

// DevicesTable is the benchmark's options, as `bench devices` declares them.
var DevicesTable = option.Table[DevicesOptions]{
	option.List("models", "comma-separated model families", models.FamilyNames(), func(o *DevicesOptions) *[]string { return &o.Variants }).
		Alias("variants"), // as bench attention's
	option.Ints("n", "comma-separated sequence lengths", func(o *DevicesOptions) *[]int { return &o.Lengths }, option.AtLeast(1)),
	option.Ints("devices", "comma-separated device counts the sequence is split across (1: not split)", func(o *DevicesOptions) *[]int { return &o.Devices }, option.AtLeast(1)),
	option.Int("batch", "sequences per step", func(o *DevicesOptions) *int { return &o.Batch }, option.AtLeast(1)),
	option.Int("dim", "model width", func(o *DevicesOptions) *int { return &o.Dim }, option.AtLeast(2)),
	option.Int("heads", "attention heads", func(o *DevicesOptions) *int { return &o.Heads }, option.AtLeast(1)),
	option.Int("window", "each family's window: local/π window k, ECP half-segment h, ...", func(o *DevicesOptions) *int { return &o.Window }, option.AtLeast(1)),
	option.Text("data", "prepared corpus the step trains on", func(o *DevicesOptions) *string { return &o.Data }, option.NotEmpty()),
	option.Text("backend", "an XLA backend with enough devices (the CPU plugin's host devices stand in for accelerators)", func(o *DevicesOptions) *string { return &o.Backend }, option.NotEmpty()),
}

// DefaultDevices is dense attention against π-Attention at the sizes of
// claim 14's measurement: one layer of width 64, batch 4, window 64.
var DefaultDevices = DevicesOptions{Variants: []string{"full", "pi"}, Lengths: []int{2048, 4096, 8192}, Devices: []int{1, 2, 4},
	Batch: 4, Dim: 64, Heads: 4, Window: 64, Data: "opticks", Backend: "xla:cpu"}

// DevicesResult is one (variant, n, devices) measurement.
type DevicesResult struct {
	Variant string  `json:"variant"`
	N       int     `json:"n"`
	Devices int     `json:"devices"`
	MiB     float64 `json:"mib_per_device"` // the training step's temporary memory on each device
	Seconds float64 `json:"seconds"`        // compiling and one step
}

// Devices measures every variant at every length on every device count,
// calling report after each measurement.
func Devices(ctx context.Context, o DevicesOptions, home string, report func(DevicesResult) error) error {
	for _, n := range o.Lengths {
		for _, variant := range o.Variants {
			for _, devices := range o.Devices {
				start := time.Now()
				mib, err := stepMemory(ctx, o, home, variant, n, devices)
				if err != nil {
					return fmt.Errorf("%s at n=%d on %d devices: %w", variant, n, devices, err)
				}
				if err := report(DevicesResult{Variant: variant, N: n, Devices: devices, MiB: mib, Seconds: time.Since(start).Seconds()}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// stepMemory compiles one layer's training step and runs it once (the first
// program XLA compiles for a run), then stops the run before it evaluates.
func stepMemory(ctx context.Context, o DevicesOptions, home, variant string, n, devices int) (float64, error) {
	runDir, err := os.MkdirTemp("", "ecpi-bench-devices-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(runDir)
	parallel := "sequence"
	if devices == 1 {
		parallel = "data"
	}
	opts, err := train.ParseOptions(map[string]string{"data": o.Data, "backend": o.Backend, "devices": fmt.Sprint(devices),
		"parallel": parallel, "batch": fmt.Sprint(o.Batch), "steps": "2", "eval_every": "0", "eval_batches": "1", "run": runDir})
	if err != nil {
		return 0, err
	}
	cfg, err := models.Parse(map[string]string{"model": variant, "n": fmt.Sprint(n), "dim": fmt.Sprint(o.Dim), "heads": fmt.Sprint(o.Heads), "layers": "1"})
	if err == nil {
		cfg = cfg.WithWindow(o.Window)
		err = cfg.Validate()
	}
	if err != nil {
		return 0, err
	}
	opts.Model, opts.Home = cfg, home
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	stepped, stop := context.WithCancel(ctx)
	defer stop()
	programs, err := xla.CompiledMemory(func() error {
		_, err := train.Run(stepped, opts, func(p train.Progress) {
			if p.Step >= 1 {
				stop()
			}
		})
		return err
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	return programs[0].Temporary, nil
}

// DevicesSummary is what `bench devices` concludes for dense attention
// (full) and π-Attention (pi): claim 14's measure, and the longest context
// each variant holds on each device count within a budget.
type DevicesSummary struct {
	// HalfDevicesRatio is the largest, over the lengths and device counts N
	// measured with N/2 measured too, of π's memory per device on N/2
	// devices over dense attention's on N (0: no such pair measured). At
	// most 1: π holds every context on half the devices dense needs.
	HalfDevicesRatio float64 `json:"half_devices_ratio"`
	AtN              int     `json:"at_n"`       // where the largest ratio is
	AtDevices        int     `json:"at_devices"` // dense attention's devices there
	BudgetMiB        float64 `json:"budget_mib"`
	// Longest is, by variant and device count, the longest n measured that
	// fits within BudgetMiB per device (0: none).
	Longest map[string]map[int]int `json:"longest"`
}

// Summarize concludes a measurement.
func Summarize(results []DevicesResult, budget float64) DevicesSummary {
	s := DevicesSummary{BudgetMiB: budget, Longest: map[string]map[int]int{}}
	memory := map[DevicesResult]float64{}
	for _, r := range results {
		memory[DevicesResult{Variant: r.Variant, N: r.N, Devices: r.Devices}] = r.MiB
		if s.Longest[r.Variant] == nil {
			s.Longest[r.Variant] = map[int]int{}
		}
		if r.MiB <= budget && r.N > s.Longest[r.Variant][r.Devices] {
			s.Longest[r.Variant][r.Devices] = r.N
		}
	}
	for _, dense := range results {
		if dense.Variant != "full" || dense.Devices%2 != 0 {
			continue
		}
		pi, found := memory[DevicesResult{Variant: "pi", N: dense.N, Devices: dense.Devices / 2}]
		if ratio := pi / dense.MiB; found && ratio > s.HalfDevicesRatio {
			s.HalfDevicesRatio, s.AtN, s.AtDevices = ratio, dense.N, dense.Devices
		}
	}
	return s
}

// Text says it in two or three lines.
func (s DevicesSummary) Text() string {
	var b strings.Builder
	if s.HalfDevicesRatio > 0 {
		fmt.Fprintf(&b, "π on half the devices: at most %.2f × dense attention's memory per device (the largest at n=%d, dense on %d devices)\n",
			s.HalfDevicesRatio, s.AtN, s.AtDevices)
	}
	for _, variant := range slices.Sorted(maps.Keys(s.Longest)) {
		var parts []string
		for _, devices := range slices.Sorted(maps.Keys(s.Longest[variant])) {
			parts = append(parts, fmt.Sprintf("n=%d on %d", s.Longest[variant][devices], devices))
		}
		fmt.Fprintf(&b, "%-6s longest n within %.0f MiB per device: %s\n", variant, s.BudgetMiB, strings.Join(parts, ", "))
	}
	return b.String()
}

// Text is the measurement on one line.
func (r DevicesResult) Text() string {
	return fmt.Sprintf("%-12s n=%-6d devices=%d  %8.1f MiB per device  (%.0f s)", r.Variant, r.N, r.Devices, r.MiB, r.Seconds)
}
