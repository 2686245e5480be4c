package xla

import (
	"bytes"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"k8s.io/klog/v2"
)

// compiledMemory matches the per-device temporary memory in PJRT's compiled
// memory statistics, which go-xla logs at klog verbosity 1 when it compiles.
var compiledMemory = regexp.MustCompile(`On Device: \[[^]]*Temporary:([0-9.]+) (KiB|MiB|GiB)`)

var klogMu sync.Mutex

// CompiledTemporaryMiB runs compile (anything that compiles XLA programs)
// and returns the temporary memory per device, in MiB, that XLA reported
// for each program it compiled, in order: the one place GoMLX exposes what
// a compiled program will hold on a device. It takes over klog while it runs.
func CompiledTemporaryMiB(compile func() error) ([]float64, error) {
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
	var sizes []float64
	for _, m := range compiledMemory.FindAllSubmatch(log.Bytes(), -1) {
		size, _ := strconv.ParseFloat(string(m[1]), 64)
		sizes = append(sizes, size*map[string]float64{"KiB": 1.0 / 1024, "MiB": 1, "GiB": 1024}[string(m[2])])
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("no compiled memory statistics in go-xla's log (%d bytes logged)", log.Len())
	}
	return sizes, nil
}
