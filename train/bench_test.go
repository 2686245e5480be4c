package train

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// shrunkPreset is what a test can afford of a paper preset: one layer of
// width 32 at n = 256, one sequence a step.
var shrunkPreset = map[string]string{"layers": "1", "dim": "32", "heads": "2", "n": "256"}

// TestBenchPresetPricesTheSchedule runs shrunk presets, a language model and
// a classifier, for one timed step and checks the schedule is priced from the
// preset's own n, steps and batch at the speed measured.
func TestBenchPresetPricesTheSchedule(t *testing.T) {
	cases := []struct {
		preset string
		vocab  int
		tokens int64 // the schedule: steps × batch × the preset's n
	}{
		{"ecp-wikitext103", 50257, 20000 * 8 * 2048},
		{"ecp-scifar10", 256, 20000 * 50 * 1024},
	}
	for _, c := range cases {
		t.Run(c.preset, func(t *testing.T) {
			r, err := BenchPreset(context.Background(), PresetBenchOptions{Preset: c.preset, Backend: "go", Steps: 1, Batch: 1, Devices: 4, Shrink: shrunkPreset})
			if err != nil {
				t.Fatal(err)
			}
			if r.N != 256 || r.Batch != 1 || r.Vocab != c.vocab || r.Precision != "bf16" || r.Params <= 0 || r.Params > 10_000_000 {
				t.Errorf("ran n=%d batch %d vocab %d %s with %d parameters; want the shrunk model, n=256, batch 1, vocab %d, bf16", r.N, r.Batch, r.Vocab, r.Precision, r.Params, c.vocab)
			}
			if r.TokensPerS <= 0 || r.MsPerStep <= 0 || r.ScheduleTokens != c.tokens {
				t.Fatalf("%.0f tokens/s, %.1f ms/step, schedule of %d tokens (want %d)", r.TokensPerS, r.MsPerStep, r.ScheduleTokens, c.tokens)
			}
			if want := float64(c.tokens) / r.TokensPerS / 3600; math.Abs(r.Hours-want) > 1e-9*want || math.Abs(r.HoursOnDevices-want/4) > 1e-9*want {
				t.Errorf("%g h, %g h on 4 devices; want %g and a quarter of it", r.Hours, r.HoursOnDevices, want)
			}
			if !strings.Contains(r.Shrunk, "layers=1") || !strings.Contains(r.Text(), "not the preset's cost") || r.MemoryMiB != 0 {
				t.Errorf("shrunk %q, memory %.1f MiB on the Go backend; text:\n%s", r.Shrunk, r.MemoryMiB, r.Text())
			}
		})
	}
}

// TestBenchPresetPlansDeviceMemory: on XLA the step's planned memory holds at
// least the weights and Adam's two moments, in float32.
func TestBenchPresetPlansDeviceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: XLA compiles the step for several seconds")
	}
	r, err := BenchPreset(context.Background(), PresetBenchOptions{Preset: "pi-125m", Backend: "xla:cpu", Steps: 1, Batch: 1, Shrink: shrunkPreset})
	if err != nil {
		t.Fatal(err)
	}
	if least := float64(12*r.Params) / (1 << 20); r.MemoryMiB < least {
		t.Errorf("XLA planned %.1f MiB for %d parameters: less than their weights and moments, %.1f MiB", r.MemoryMiB, r.Params, least)
	}
	t.Logf("%s", r.Text())
}

func TestBenchPresetNamesThePresets(t *testing.T) {
	_, err := BenchPreset(context.Background(), PresetBenchOptions{Preset: "ecp-wiki", Backend: "go", Steps: 1})
	if err == nil || !strings.Contains(err.Error(), "ecp-wikitext103") || !strings.Contains(err.Error(), "pi-125m") {
		t.Errorf("unknown preset: %v; want the error to list the presets", err)
	}
}

// TestFusedOptionFallsBackOffCUDA: fused= is left out of a run's options
// (and so of its cache key) when unset, and off CUDA a run with fused=masked
// trains exactly as one without it.
func TestFusedOptionFallsBackOffCUDA(t *testing.T) {
	if raw, _ := json.Marshal(DefaultOptions()); strings.Contains(string(raw), "fused") {
		t.Errorf("unset fused= is in the options every cache key hashes: %s", raw)
	}
	losses := map[string][]float64{}
	for _, fused := range []string{"", "masked"} {
		o := tiny(t, map[string]string{"model": "full", "segment": "", "precision": "bf16", "dropout": "0", "fused": fused, "steps": "3", "eval_every": "0"})
		r, err := Run(context.Background(), o, nil)
		if err != nil {
			t.Fatal(err)
		}
		losses[fused] = r.Losses
	}
	if len(losses[""]) != 3 || !slices.Equal(losses[""], losses["masked"]) {
		t.Errorf("losses %v with fused=masked, %v without: off CUDA they must be the same", losses["masked"], losses[""])
	}
}
