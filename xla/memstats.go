package xla

import (
	"bytes"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"
)

// compiledMemory matches the per-device memory in PJRT's compiled memory
// statistics, which go-xla logs at klog verbosity 1 when it compiles
// ("On Device: [Code:1.2 MiB, Inputs:..., Outputs:..., Aliases:..., Temporary:...]").
var compiledMemory = regexp.MustCompile(`On Device: \[Code:(-?[0-9.]+ [KMGT]?i?B), Inputs:(-?[0-9.]+ [KMGT]?i?B), Outputs:(-?[0-9.]+ [KMGT]?i?B), Aliases:(-?[0-9.]+ [KMGT]?i?B), Temporary:(-?[0-9.]+ [KMGT]?i?B)\]`)

var klogMu sync.Mutex

// ProgramMemory is what XLA planned for one compiled program on one device, in MiB.
type ProgramMemory struct {
	Code, Inputs, Outputs, Aliases, Temporary float64
}

// PlannedMiB is the memory the program holds on a device while it runs:
// its code, inputs and outputs (less the outputs that reuse an input's
// buffer) and its temporaries (go-xla's ExecutableMemoryUsageStats.Requirements).
func (m ProgramMemory) PlannedMiB() float64 {
	return m.Code + m.Inputs + m.Outputs - m.Aliases + m.Temporary
}

// CompiledMemory runs compile (anything that compiles XLA programs) and
// returns what XLA planned per device for each program it compiled, in
// order: the one place GoMLX exposes what a compiled program will hold on a
// device. It takes over klog while it runs.
func CompiledMemory(compile func() error) ([]ProgramMemory, error) {
	klogMu.Lock()
	defer klogMu.Unlock()
	var log bytes.Buffer
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{"v": "1", "logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := flags.Set(name, value); err != nil {
			return nil, err
		}
	}
	klog.SetOutput(&log)
	err := compile()
	klog.Flush()
	flags.Set("v", "0")
	klog.SetOutput(nil)
	flags.Set("logtostderr", "true")
	if err != nil {
		return nil, err
	}
	var programs []ProgramMemory
	for _, m := range compiledMemory.FindAllSubmatch(log.Bytes(), -1) {
		var sizes [5]float64
		for i := range sizes {
			sizes[i] = mebibytes(string(m[i+1]))
		}
		programs = append(programs, ProgramMemory{Code: sizes[0], Inputs: sizes[1], Outputs: sizes[2], Aliases: sizes[3], Temporary: sizes[4]})
	}
	if len(programs) == 0 {
		return nil, fmt.Errorf("no compiled memory statistics in go-xla's log (%d bytes logged)", log.Len())
	}
	return programs, nil
}

// mebibytes reads a size as go-xla's humanize.Bytes writes it ("512 B", "1.5 MiB").
func mebibytes(size string) float64 {
	number, unit, _ := strings.Cut(size, " ")
	value, _ := strconv.ParseFloat(number, 64)
	return value * map[string]float64{"B": 1.0 / (1 << 20), "KiB": 1.0 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1 << 20}[unit]
}
