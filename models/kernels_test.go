package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	_ "github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// testBackend is the backend named by GOMLX_BACKEND (the Go backend when unset),
// so the same tests run on XLA in CI.
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		config = "go"
	}
	backend, err := compute.NewWithConfig(config)
	if err != nil {
		t.Fatalf("backend %q: %v", config, err)
	}
	return backend
}

func randomTensor(rng *rand.Rand, dims ...int) *tensors.Tensor {
	size := 1
	for _, d := range dims {
		size *= d
	}
	flat := make([]float32, size)
	for i := range flat {
		flat[i] = float32(rng.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(flat, dims...)
}

// compareForms runs attention in block form and densely on the same random
// q, k, v and checks outputs and the gradients of a random projection of the
// output with respect to q, k and v agree within 1e-4.
func compareForms(t *testing.T, batch, heads, n, headDim int, block, dense func(q, k, v *graph.Node) *graph.Node) {
	t.Helper()
	backend := testBackend(t)
	rng := rand.New(rand.NewPCG(uint64(n), uint64(heads)))
	q := randomTensor(rng, batch, heads, n, headDim)
	k := randomTensor(rng, batch, heads, n, headDim)
	v := randomTensor(rng, batch, heads, n, headDim)
	probe := randomTensor(rng, batch, heads, n, headDim)
	run := func(attention func(q, k, v *graph.Node) *graph.Node) []*tensors.Tensor {
		exec, err := graph.NewExec(backend, func(q, k, v, probe *graph.Node) []*graph.Node {
			out := attention(q, k, v)
			loss := graph.ReduceAllSum(graph.Mul(out, probe))
			return append([]*graph.Node{out}, graph.Gradient(loss, q, k, v)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		outputs, err := exec.Exec(q, k, v, probe)
		if err != nil {
			t.Fatal(err)
		}
		return outputs
	}
	got, want := run(block), run(dense)
	for i, name := range []string{"output", "dL/dq", "dL/dk", "dL/dv"} {
		assertClose(t, name, tensors.MustCopyFlatData[float32](got[i]), tensors.MustCopyFlatData[float32](want[i]), 1e-4)
	}
}

func assertClose(t *testing.T, name string, got, want []float32, tolerance float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if diff := math.Abs(float64(got[i] - want[i])); diff > tolerance*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d] = %g, want %g (|diff| %g > %g)", name, i, got[i], want[i], diff, tolerance)
		}
	}
}

type shape struct{ batch, heads, n, headDim int }

func (s shape) String() string {
	return fmt.Sprintf("B%d_H%d_n%d_d%d", s.batch, s.heads, s.n, s.headDim)
}

func TestBlockFormsMatchDenseReference(t *testing.T) {
	cases := []struct {
		pattern Pattern
		shapes  []shape
	}{
		{ECP{HalfSegment: 8}, []shape{{2, 2, 32, 8}, {1, 3, 8, 4}, {1, 1, 20, 4}}}, // n = one half-segment; n not a multiple of h
		{ECP{HalfSegment: 1}, []shape{{1, 2, 5, 4}}},
		{Local{Window: 6, Causal: true}, []shape{{2, 2, 32, 8}, {1, 3, 17, 4}, {1, 1, 6, 4}}},
		{Local{Window: 5, Causal: false}, []shape{{2, 3, 23, 4}}},
		{S2{Group: 8, Heads: 4}, []shape{{2, 4, 32, 8}}},
		{S2{Group: 6, Heads: 3}, []shape{{1, 3, 18, 4}}}, // odd head count: 1 plain, 2 shifted
		{Full{Causal: true}, []shape{{1, 3, 16, 4}}},
		{Split{Context: 12, Splits: 1}, []shape{{2, 2, 20, 4}}},
		{Split{Context: 12, Splits: 3, CausalContext: true}, []shape{{1, 3, 16, 4}}},
		{Split{Context: 16, Splits: 4}, []shape{{1, 2, 17, 4}}},                                                                     // a single latent
		{Pi{Window: 4, SkipPeriod: 6, Skips: 3, Heads: 2, Causal: true, Fusion: FusionPrior}, []shape{{2, 2, 40, 4}, {1, 2, 5, 4}}}, // n < π: no skip reaches position 0
		{Pi{Window: 4, SkipPeriod: 6, Skips: 3, Heads: 3, Causal: true, HeadPhase: true, Fusion: FusionPrior}, []shape{{1, 3, 37, 4}}},
		{Pi{Window: 3, SkipPeriod: 5, Skips: 2, Heads: 2, Causal: false, HeadPhase: true, Fusion: FusionPrior}, []shape{{1, 2, 31, 4}}},
		{Pi{Window: 4, SkipPeriod: 4, Skips: 4, Heads: 2, Causal: true, Fusion: FusionMix}, []shape{{2, 2, 33, 4}}}, // π = k: first skip is local
	}
	for _, c := range cases {
		for _, s := range c.shapes {
			t.Run(fmt.Sprintf("%s_%+v_%s", c.pattern.Name(), c.pattern, s), func(t *testing.T) {
				compareForms(t, s.batch, s.heads, s.n, s.headDim, c.pattern.Attend, func(q, k, v *graph.Node) *graph.Node {
					return Reference(c.pattern, q, k, v)
				})
			})
		}
	}
}

func TestPiGateMatchesDenseReference(t *testing.T) {
	for _, fusion := range []string{FusionPrior, FusionMix} {
		pi := Pi{Window: 4, SkipPeriod: 6, Skips: 3, Heads: 2, Causal: true, HeadPhase: true, Fusion: fusion}
		t.Run(fusion, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			alpha := randomTensor(rng, 2, 2, 29) // logits of α, one per (batch, head, token)
			gate := func(q *graph.Node) *graph.Node { return graph.Sigmoid(graph.Const(q.Graph(), alpha)) }
			compareForms(t, 2, 2, 29, 4,
				func(q, k, v *graph.Node) *graph.Node { return pi.AttendGated(q, k, v, gate(q)) },
				func(q, k, v *graph.Node) *graph.Node { return pi.ReferenceGated(q, k, v, gate(q)) })
		})
	}
}

// TestNoFutureLeaks changes the key and value at position j and checks that no
// output before j moves, for every causal pattern in block form.
func TestNoFutureLeaks(t *testing.T) {
	const n, heads, headDim = 24, 2, 4
	patterns := []Pattern{
		Full{Causal: true}, Local{Window: 5, Causal: true}, ECP{HalfSegment: 4}, S2{Group: 6, Heads: heads},
		Pi{Window: 3, SkipPeriod: 5, Skips: 3, Heads: heads, Causal: true, HeadPhase: true, Fusion: FusionPrior},
		Pi{Window: 3, SkipPeriod: 5, Skips: 3, Heads: heads, Causal: true, Fusion: FusionMix},
	}
	backend := testBackend(t)
	rng := rand.New(rand.NewPCG(1, 2))
	q := randomTensor(rng, 1, heads, n, headDim)
	k := randomTensor(rng, 1, heads, n, headDim)
	v := randomTensor(rng, 1, heads, n, headDim)
	for _, p := range patterns {
		t.Run(p.Name(), func(t *testing.T) {
			exec, err := graph.NewExec(backend, p.Attend)
			if err != nil {
				t.Fatal(err)
			}
			base := tensors.MustCopyFlatData[float32](exec.MustExec(q, k, v)[0])
			for _, changed := range []int{0, 7, 12, n - 1} {
				k2, v2 := perturbPosition(k, changed), perturbPosition(v, changed)
				out := tensors.MustCopyFlatData[float32](exec.MustExec(q, k2, v2)[0])
				for head := range heads {
					for i := 0; i < changed; i++ {
						for d := range headDim {
							idx := (head*n+i)*headDim + d
							if out[idx] != base[idx] {
								t.Fatalf("changing position %d moved output %d of head %d", changed, i, head)
							}
						}
					}
				}
			}
		})
	}
}

// perturbPosition returns a copy of x [1, H, n, d] with position pos changed in every head.
func perturbPosition(x *tensors.Tensor, pos int) *tensors.Tensor {
	dims := x.Shape().Dimensions
	flat := tensors.MustCopyFlatData[float32](x)
	for head := range dims[1] {
		for d := range dims[3] {
			flat[(head*dims[2]+pos)*dims[3]+d] += 3
		}
	}
	return tensors.FromFlatDataAndDimensions(flat, dims...)
}

// TestIndexSets pins K(i) to the definitions in attention-variants.md on
// hand-checked positions.
func TestIndexSets(t *testing.T) {
	ecp := ECP{HalfSegment: 256}
	pi := Pi{Window: 4, SkipPeriod: 10, Skips: 2, Heads: 4, Causal: true, HeadPhase: true}
	s2 := S2{Group: 8, Heads: 2}
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"ecp: half-segment 0 sees itself causally", ecp.Allows(0, 100, 0), true},
		{"ecp: no future", ecp.Allows(0, 100, 101), false},
		{"ecp: previous half-segment fully", ecp.Allows(0, 300, 0), true},
		{"ecp: two half-segments back is out", ecp.Allows(0, 600, 255), false},
		{"ecp: start of previous half-segment", ecp.Allows(0, 600, 256), true},
		{"local: edge of window", Local{Window: 4, Causal: true}.Allows(0, 10, 6), true},
		{"local: beyond window", Local{Window: 4, Causal: true}.Allows(0, 10, 5), false},
		{"local bidirectional: ahead", Local{Window: 4}.Allows(0, 10, 14), true},
		{"s2 plain head: same group", s2.Allows(0, 15, 8), true},
		{"s2 plain head: previous group", s2.Allows(0, 8, 7), false},
		{"s2 shifted head: across the plain border", s2.Allows(1, 8, 5), true},
		{"s2 shifted head: border of shifted group", s2.Allows(1, 12, 11), false},
		{"pi head 0: skip m=1", pi.Allows(0, 30, 20), true},
		{"pi head 0: skip m=2", pi.Allows(0, 30, 10), true},
		{"pi head 0: m=3 beyond M", pi.Allows(0, 30, 0), false},
		{"pi head 0: gap between window and skip", pi.Allows(0, 30, 21), false},
		{"pi head 1: phase 2 shifts the lattice", pi.Allows(1, 30, 18), true},
		{"pi head 1: unshifted point is off", pi.Allows(1, 30, 20), false},
		{"pi: local key is not a skip", pi.IsSkip(0, 30, 26), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}
