package train

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/xla"
)

// xlaCPU returns the XLA CPU backend with at least two devices, or skips.
// Compiling for XLA takes tens of seconds here, so -short skips too.
func xlaCPU(t *testing.T) *xla.Choice {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: XLA compilation takes tens of seconds")
	}
	if !hasXLACPU() {
		t.Skipf("no XLA CPU plugin in %v: run `make xla-plugin` (scripts/setup-xla.sh) to test devices=", xla.PluginDirs())
	}
	c, err := Backend("xla:cpu")
	if err != nil {
		t.Fatal(err)
	}
	if c.Devices < 2 {
		t.Skipf("the XLA CPU plugin exposes %d device; devices=2 needs two", c.Devices)
	}
	return c
}

// hasXLACPU reports whether an XLA CPU plugin is installed.
func hasXLACPU() bool {
	return slices.ContainsFunc(xla.FindPlugins(xla.PluginDirs()), func(p xla.Plugin) bool { return p.Platform == "cpu" })
}

// TestTwoDevicesTrainLikeOne trains the same model for a few steps on one
// device and with each batch split across two: the losses, the validation
// loss must agree within float32 reduction-order noise (dropout included:
// the replicated RNG state draws the same masks).
func TestTwoDevicesTrainLikeOne(t *testing.T) {
	xlaCPU(t)
	run := func(devices string) *Result {
		o := tiny(t, map[string]string{"backend": "xla:cpu", "devices": devices, "layers": "1", "steps": "8", "eval_every": "0",
			"eval_batches": "1", "lr": "1e-2"})
		r, err := Run(context.Background(), o, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, two := run("1"), run("2")
	if two.Devices != 2 || len(two.Losses) != 8 {
		t.Fatalf("devices %d, %d losses; want 2 and 8", two.Devices, len(two.Losses))
	}
	t.Logf("1 device %v valid %.6f; 2 devices %v valid %.6f", one.Losses, one.ValidLoss, two.Losses, two.ValidLoss)
	for i := range one.Losses {
		if math.Abs(one.Losses[i]-two.Losses[i]) > 1e-4*one.Losses[i] {
			t.Errorf("step %d: loss %.7f on 2 devices, %.7f on one", i+1, two.Losses[i], one.Losses[i])
		}
	}
	if math.Abs(one.ValidLoss-two.ValidLoss) > 1e-4*one.ValidLoss {
		t.Errorf("valid loss %.7f after 2-device training, %.7f after 1-device", two.ValidLoss, one.ValidLoss)
	}
	if one.Losses[7] >= one.Losses[0] {
		t.Errorf("loss did not move: %v", one.Losses)
	}
}

// TestSequenceSplitTrainsLikeOneDevice splits every sequence across two
// devices (parallel=sequence) for local, ECP, π and dense attention: each
// step's loss, each step's global gradient norm (before Adam, which would
// hide a scaled gradient) and the validation loss equal one device's within
// 1e-5.
func TestSequenceSplitTrainsLikeOneDevice(t *testing.T) {
	xlaCPU(t)
	families := map[string]map[string]string{
		"full": {"model": "full", "segment": ""}, "local": {"model": "local", "segment": "", "window": "8"},
		"ecp": {}, "pi": {"model": "pi", "segment": "", "window": "8"},
	}
	for name, values := range families {
		t.Run(name, func(t *testing.T) {
			run := func(devices, parallel string) (*Result, []float64) {
				all := map[string]string{"backend": "xla:cpu", "devices": devices, "parallel": parallel, "layers": "2", "steps": "6",
					"eval_every": "0", "eval_batches": "2", "lr": "1e-2"}
				maps.Copy(all, values)
				var gradNorms []float64
				r, err := Run(context.Background(), tiny(t, all), func(p Progress) {
					if !p.Compiling {
						gradNorms = append(gradNorms, p.GradNorm)
					}
				})
				if err != nil {
					t.Fatalf("devices=%s parallel=%s: %v", devices, parallel, err)
				}
				return r, gradNorms
			}
			one, oneNorms := run("1", "data")
			split, splitNorms := run("2", "sequence")
			for i := range one.Losses {
				if math.Abs(one.Losses[i]-split.Losses[i]) > 1e-5*one.Losses[i] {
					t.Errorf("step %d: loss %.8f with sequences split across 2 devices, %.8f on one", i+1, split.Losses[i], one.Losses[i])
				}
			}
			if len(oneNorms) != len(one.Losses) || len(splitNorms) != len(oneNorms) {
				t.Fatalf("%d and %d gradient norms reported for %d steps", len(oneNorms), len(splitNorms), len(one.Losses))
			}
			for i := range oneNorms {
				if oneNorms[i] <= 0 || math.Abs(oneNorms[i]-splitNorms[i]) > 1e-5*oneNorms[i] {
					t.Errorf("step %d: gradient norm %.8f with sequences split across 2 devices, %.8f on one", i+1, splitNorms[i], oneNorms[i])
				}
			}
			if math.Abs(one.ValidLoss-split.ValidLoss) > 1e-5*one.ValidLoss {
				t.Errorf("valid loss %.8f split, %.8f on one device", split.ValidLoss, one.ValidLoss)
			}
		})
	}
	if _, err := ParseOptions(map[string]string{"parallel": "sequence"}); err == nil || !strings.Contains(err.Error(), "devices=") {
		t.Errorf("parallel=sequence on one device: %v, want an error naming devices=", err)
	}
}

// TestSequenceSplitDividesStepMemory: with each sequence split across N
// devices (parallel=sequence), the temporary memory per device of the compiled
// training step of one layer at n = 4096, as XLA reports it, falls close to
// 1/N of one device's: at most 1.3/N (replicated variables and the exchanged
// keys and values stay), for local, ECP, π and dense attention.
func TestSequenceSplitDividesStepMemory(t *testing.T) {
	c := xlaCPU(t)
	if c.Devices < 4 {
		t.Skipf("the XLA CPU plugin exposes %d devices; this needs 4", c.Devices)
	}
	families := map[string]map[string]string{
		"local": {"model": "local", "segment": "", "window": "64"}, "ecp": {"segment": "64"},
		"pi": {"model": "pi", "segment": "", "window": "64"}, "full": {"model": "full", "segment": ""},
	}
	for _, name := range slices.Sorted(maps.Keys(families)) {
		t.Run(name, func(t *testing.T) {
			stepMiB := func(devices int) float64 {
				parallel := map[bool]string{true: "data", false: "sequence"}[devices == 1]
				all := map[string]string{"backend": "xla:cpu", "devices": fmt.Sprint(devices), "parallel": parallel, "layers": "1", "steps": "1",
					"eval_every": "0", "eval_batches": "1", "n": "4096", "batch": "2", "dim": "64", "heads": "4"}
				maps.Copy(all, families[name])
				o := tiny(t, all)
				programs, err := xla.CompiledMemory(func() error {
					_, err := Run(context.Background(), o, nil)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return programs[0].Temporary // the training step, compiled first
			}
			one := stepMiB(1)
			for _, devices := range []int{2, 4} {
				split := stepMiB(devices)
				t.Logf("%s: %.1f MiB per device on %d devices, %.1f MiB on one", name, split, devices, one)
				if split > 1.3*one/float64(devices) {
					t.Errorf("%d devices: %.1f MiB per device, want at most 1.3 × %.1f / %d = %.1f MiB", devices, split, one, devices, 1.3*one/float64(devices))
				}
			}
		})
	}
}

func TestDevicesRules(t *testing.T) {
	if _, err := ParseOptions(map[string]string{"devices": "2", "accum": "2"}); err == nil || !strings.Contains(err.Error(), "cannot accumulate") {
		t.Errorf("devices=2 accum=2: got %v, want an error about accumulation", err)
	}
	if _, err := ParseOptions(map[string]string{"devices": "3", "batch": "8"}); err == nil || !strings.Contains(err.Error(), "multiple of devices=3") {
		t.Errorf("devices=3 batch=8: got %v", err)
	}
	if _, err := newSession(tiny(t, map[string]string{"devices": "2"}), nil); err == nil || !strings.Contains(err.Error(), "option devices=2 on backend go") {
		t.Errorf("devices=2 on the Go backend: got %v, want an error naming the option and the backend", err)
	}
}
