package bench

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/xla"
)

// TestSummarizeHalfDevices: claim 14's measure is the largest of π on N/2
// devices over dense attention on N, and the longest context is the longest
// n measured within the budget, per variant and device count.
func TestSummarizeHalfDevices(t *testing.T) {
	results := []DevicesResult{
		{Variant: "full", N: 1024, Devices: 1, MiB: 100}, {Variant: "full", N: 1024, Devices: 2, MiB: 40},
		{Variant: "pi", N: 1024, Devices: 1, MiB: 50}, {Variant: "pi", N: 1024, Devices: 2, MiB: 35},
		{Variant: "full", N: 2048, Devices: 1, MiB: 400}, {Variant: "full", N: 2048, Devices: 2, MiB: 80},
		{Variant: "pi", N: 2048, Devices: 1, MiB: 120}, {Variant: "pi", N: 2048, Devices: 2, MiB: 70},
	}
	s := Summarize(results, 100)
	if s.HalfDevicesRatio != 120.0/80 || s.AtN != 2048 || s.AtDevices != 2 {
		t.Errorf("ratio %v at n=%d on %d devices, want 1.5 at n=2048 (π on 1 device: 120 MiB, dense on 2: 80)", s.HalfDevicesRatio, s.AtN, s.AtDevices)
	}
	if s.Longest["full"][1] != 1024 || s.Longest["full"][2] != 2048 || s.Longest["pi"][1] != 1024 || s.Longest["pi"][2] != 2048 {
		t.Errorf("longest %v, want full 1024 on one device and 2048 on two, π the same", s.Longest)
	}
}

// TestSplittingHalvesMemoryPerDevice measures dense and π attention on one
// and two of the XLA CPU plugin's devices: splitting the sequence lowers the
// memory each device holds, and the summary relates π on one device to dense
// attention on two.
func TestSplittingHalvesMemoryPerDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles four training steps on XLA")
	}
	if !slices.ContainsFunc(xla.FindPlugins(xla.PluginDirs()), func(p xla.Plugin) bool { return p.Platform == "cpu" }) {
		t.Skip("no XLA CPU plugin: run `make xla-plugin`")
	}
	home := t.TempDir()
	if err := data.Prepare(context.Background(), home, "opticks", io.Discard); err != nil {
		t.Fatal(err)
	}
	o := DefaultDevices
	o.Lengths, o.Devices = []int{512}, []int{1, 2}
	var results []DevicesResult
	if err := Devices(context.Background(), o, home, func(r DevicesResult) error { results = append(results, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d results, want 4: %v", len(results), results)
	}
	memory := map[string]map[int]float64{"full": {}, "pi": {}}
	for _, r := range results {
		memory[r.Variant][r.Devices] = r.MiB
	}
	for variant, byDevices := range memory {
		if !(byDevices[2] > 0 && byDevices[2] < 0.75*byDevices[1]) {
			t.Errorf("%s: %.1f MiB per device on two devices, %.1f on one: want under 3/4 of it", variant, byDevices[2], byDevices[1])
		}
	}
	if s := Summarize(results, 256); s.HalfDevicesRatio != memory["pi"][1]/memory["full"][2] {
		t.Errorf("ratio %v, want π on one device over dense on two: %v", s.HalfDevicesRatio, memory["pi"][1]/memory["full"][2])
	}
}
