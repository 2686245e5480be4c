package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
)

func goBackend(t testing.TB) compute.Backend {
	backend, err := compute.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	return backend
}

// TestAttentionReportsEveryMeasurement runs the benchmark at toy sizes: one
// result per (length, variant), with the pattern's cost beside the time.
func TestAttentionReportsEveryMeasurement(t *testing.T) {
	o := AttentionOptions{Variants: []string{"full", "ecp", "pi"}, Lengths: []int{32, 64}, Batch: 1, Heads: 2, HeadDim: 4,
		Window: 8, Runs: 1, Backend: goBackend(t)}
	var results []AttentionResult
	err := Attention(context.Background(), o, "go", func(r AttentionResult) error {
		results = append(results, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 6 {
		t.Fatalf("%d results, want 6", len(results))
	}
	for _, r := range results {
		if r.MS <= 0 || r.Pairs <= 0 {
			t.Errorf("%s at n=%d: ms %v, pairs %d; both must be positive", r.Variant, r.N, r.MS, r.Pairs)
		}
		if r.Variant == "full" && r.Pairs != int64(r.N*r.N) {
			t.Errorf("full at n=%d scores %d pairs, want n²", r.N, r.Pairs)
		}
	}
	if got := GrowthSummary(results); len(got) != 3 {
		t.Errorf("growth summary %q: want one line per variant", got)
	}
}

// BenchmarkAttention is forward+backward of one attention layer at the
// README's settings (batch 2, 4 heads of 32, window / half-segment 256) on the
// Go backend: `go test -run '^$' -bench . ./bench/`.
func BenchmarkAttention(b *testing.B) {
	o := AttentionOptions{Batch: 2, Heads: 4, HeadDim: 32, Window: 256, Backend: goBackend(b)}
	for _, n := range []int{1024, 4096} {
		for _, variant := range []string{"full", "local", "s2", "ecp", "pi"} {
			b.Run(fmt.Sprintf("%s/n=%d", variant, n), func(b *testing.B) {
				cfg, err := o.PatternConfig(variant, n)
				if err != nil {
					b.Fatal(err)
				}
				o.Runs = b.N
				timing, err := timeAttention(o, cfg.Pattern(), n)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(timing.ms, "ms/median")
				b.ReportMetric(timing.compileMS, "ms/compile")
			})
		}
	}
}

// TestAttentionFallsBackOffCUDA: with bfloat16 inputs and fused=masked, the
// Go backend and the XLA CPU plugin run every pattern in ecpi's own form, and
// each result says why.
func TestAttentionFallsBackOffCUDA(t *testing.T) {
	for _, name := range []string{"go", "xla:cpu"} {
		t.Run(name, func(t *testing.T) {
			choice, err := train.Backend(name)
			if err != nil {
				t.Fatal(err)
			}
			o := AttentionOptions{Variants: []string{"full", "local", "ecp"}, Lengths: []int{64}, Batch: 1, Heads: 2, HeadDim: 8,
				Window: 16, Runs: 1, Precision: "bf16", Fused: string(models.FusedMasked), Backend: choice.Backend}
			err = Attention(context.Background(), o, name, func(r AttentionResult) error {
				if r.Form != "own" || !strings.Contains(r.FormWhy, "has no fused attention") || r.MS <= 0 {
					t.Errorf("%s on %s: form %q (%s), %v ms; want its own form, the backend named as why", r.Variant, name, r.Form, r.FormWhy, r.MS)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
