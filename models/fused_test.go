package models

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// fusedCases are the patterns Attend may send to the fused op: dense
// attention always, the others with fused=masked.
var fusedCases = []Pattern{
	Full{Causal: true},
	Full{Causal: false},
	Local{Window: 5, Causal: true},
	ECP{HalfSegment: 8},
	Longformer{Window: 3, Dilations: []int{1, 2}, Global: 2, Causal: true},
	Longformer{Window: 3, Dilations: []int{1, 2}, Global: 2, Causal: false},
}

// TestFusedMaskIsTheIndexSet checks the n×n mask fused=masked hands the
// fused op against K(i) itself.
func TestFusedMaskIsTheIndexSet(t *testing.T) {
	const heads, n = 2, 24
	backend := testBackend(t)
	for _, p := range fusedCases {
		m, ok := p.(masker)
		if !ok {
			continue
		}
		t.Run(fmt.Sprintf("%s_%v", p.Name(), isCausalPattern(p)), func(t *testing.T) {
			exec, err := graph.NewExec(backend, func(g *graph.Graph) *graph.Node {
				mask := m.denseMask(g, heads, n)
				return graph.BroadcastToDims(mask, heads, n, n)
			})
			if err != nil {
				t.Fatal(err)
			}
			got := tensors.MustCopyFlatData[bool](exec.MustCall()[0])
			want := tensors.MustCopyFlatData[bool](DenseMask(p.Allows, heads, n, n))
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("mask of head %d, query %d, key %d is %v, K(i) says %v", i/(n*n), i/n%n, i%n, got[i], want[i])
				}
			}
		})
	}
}

// fusedShape is a layer's q and k as the fused op would see them.
func fusedShape(dtype dtypes.DType) shapes.Shape { return shapes.Make(dtype, 2, 2, 32, 16) }

// TestFusedAttentionMatchesDenseReference runs Attend in bfloat16 (where a
// CUDA backend runs cuDNN's fused attention) against the float32 dense
// reference, outputs and gradients, within bfloat16's rounding. On every
// other backend it checks that the dispatch falls back, and the test is the
// own forms' in bfloat16.
func TestFusedAttentionMatchesDenseReference(t *testing.T) {
	backend := testBackend(t)
	hasFused := hasFusedAttention(backend)
	shape := fusedShape(dtypes.BFloat16)
	for _, p := range fusedCases {
		for _, mode := range []Fused{FusedDense, FusedMasked} {
			t.Run(fmt.Sprintf("%s_%v/%s", p.Name(), isCausalPattern(p), mode), func(t *testing.T) {
				plan := ChooseFused(backend, p, shape, shape, Dropout{}, mode)
				_, dense := p.(Full)
				if want := hasFused && (dense || mode == FusedMasked); plan.Fused != want {
					t.Fatalf("ChooseFused on %s: fused=%v (%s), want %v", backend.Name(), plan.Fused, plan.Why, want)
				}
				bf16 := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtypes.BFloat16) }
				compareWithin(t, 3e-2, shape.Dim(0), shape.Dim(1), shape.Dim(2), shape.Dim(2), shape.Dim(3),
					func(q, k, v *graph.Node) *graph.Node {
						out, ran := Attend(p, bf16(q), bf16(k), bf16(v), Dropout{}, mode)
						if ran.Fused != plan.Fused {
							panic(fmt.Errorf("planned %s, ran %s: %s", plan.Form(), ran.Form(), ran.Why))
						}
						return toFloat32(out)
					},
					func(q, k, v *graph.Node) *graph.Node { return Reference(p, q, k, v) })
			})
		}
	}
}

// TestFusedFallsBackBitForBit: where the dispatch says no (float32 always;
// bfloat16 off CUDA), Attend is the pattern's own form, to the bit.
func TestFusedFallsBackBitForBit(t *testing.T) {
	backend := testBackend(t)
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		shape := fusedShape(dtype)
		for _, p := range fusedCases {
			if ChooseFused(backend, p, shape, shape, Dropout{}, FusedMasked).Fused {
				continue // a CUDA backend: TestFusedAttentionMatchesDenseReference checks it
			}
			t.Run(fmt.Sprintf("%s_%v/%s", p.Name(), isCausalPattern(p), dtype), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				dims := shape.Dimensions
				q, k, v := randomTensor(rng, dims...), randomTensor(rng, dims...), randomTensor(rng, dims...)
				run := func(attend func(q, k, v *graph.Node) *graph.Node) []float32 {
					exec, err := graph.NewExec(backend, func(q, k, v *graph.Node) *graph.Node {
						convert := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtype) }
						return toFloat32(attend(convert(q), convert(k), convert(v)))
					})
					if err != nil {
						t.Fatal(err)
					}
					return tensors.MustCopyFlatData[float32](exec.MustCall(q, k, v)[0])
				}
				got := run(func(q, k, v *graph.Node) *graph.Node {
					out, plan := Attend(p, q, k, v, Dropout{}, FusedMasked)
					if plan.Fused {
						t.Errorf("ran %s after ChooseFused said no", plan.Form())
					}
					return out
				})
				want := run(func(q, k, v *graph.Node) *graph.Node {
					return graph.ConvertDType(p.Attend(toFloat32(q), toFloat32(k), toFloat32(v), Dropout{}), q.DType())
				})
				if !slices.Equal(got, want) {
					t.Fatal("Attend's fallback differs from the pattern's own form")
				}
			})
		}
	}
}

// TestChooseFusedSaysWhy pins each rule of the dispatch with the reason it
// gives; the backend's own rule last, where the backend lacks the fused op.
func TestChooseFusedSaysWhy(t *testing.T) {
	backend := testBackend(t)
	bf16, f32 := fusedShape(dtypes.BFloat16), fusedShape(dtypes.Float32)
	full, local := Full{Causal: true}, Local{Window: 5, Causal: true}
	long := shapes.Make(dtypes.BFloat16, 2, 4, 16384, 32)
	checks := []struct {
		plan FusedPlan
		want string
	}{
		{ChooseFused(backend, full, bf16, bf16, Dropout{}, FusedOff), "fused=off"},
		{ChooseFused(backend, local, bf16, bf16, Dropout{}, FusedDense), "keeps its block form"},
		{ChooseFused(backend, Pi{Window: 4, SkipPeriod: 5, Skips: 1, Heads: 2, Causal: true}, bf16, bf16, Dropout{}, FusedMasked), "keeps its block form"},
		{ChooseFused(backend, full, f32, f32, Dropout{}, FusedDense), "not Float32"},
		{ChooseFused(backend, full, bf16, shapes.Make(dtypes.BFloat16, 2, 2, 48, 16), Dropout{}, FusedDense), "not one sequence's"},
		{ChooseFused(backend, full, shapes.Make(dtypes.BFloat16, 2, 2, 32, 12), shapes.Make(dtypes.BFloat16, 2, 2, 32, 12), Dropout{}, FusedDense), "multiples of 8"},
		{ChooseFused(backend, local, long, long, Dropout{}, FusedMasked), "mask would take 4096 MiB"},
	}
	if !hasFusedAttention(backend) {
		checks = append(checks, struct {
			plan FusedPlan
			want string
		}{ChooseFused(backend, full, bf16, bf16, Dropout{}, FusedDense), "has no fused attention"})
	} else if plan := ChooseFused(backend, full, long, long, Dropout{}, FusedDense); !plan.Fused {
		t.Errorf("dense attention at n=16384 on %s: %s, want fused (no mask to hold)", backend.Name(), plan.Why)
	}
	for _, c := range checks {
		if c.plan.Fused || !strings.Contains(c.plan.Why, c.want) {
			t.Errorf("%+v, want not fused, saying %q", c.plan, c.want)
		}
	}
}
