package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
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
	compareShapes(t, batch, heads, n, n, headDim, block, dense)
}

// compareShapes is compareForms with queries [B, H, queries, d] and keys and
// values [B, H, keys, d].
func compareShapes(t *testing.T, batch, heads, queries, keys, headDim int, block, dense func(q, k, v *graph.Node) *graph.Node) {
	t.Helper()
	compareWithin(t, 1e-4, batch, heads, queries, keys, headDim, block, dense)
}

// compareWithin is compareShapes within a tolerance of its own.
func compareWithin(t *testing.T, tolerance float64, batch, heads, queries, keys, headDim int, block, dense func(q, k, v *graph.Node) *graph.Node) {
	t.Helper()
	backend := testBackend(t)
	rng := rand.New(rand.NewPCG(uint64(queries), uint64(heads)))
	q := randomTensor(rng, batch, heads, queries, headDim)
	k := randomTensor(rng, batch, heads, keys, headDim)
	v := randomTensor(rng, batch, heads, keys, headDim)
	probe := randomTensor(rng, batch, heads, queries, headDim)
	run := func(attention func(q, k, v *graph.Node) *graph.Node) []*tensors.Tensor {
		exec, err := graph.NewExec(backend, func(q, k, v, probe *graph.Node) []*graph.Node {
			out := attention(q, k, v)
			// Patterns that return fewer rows (cross-attention: the latents) return the last ones.
			probe = graph.SliceAxis(probe, 2, graph.AxisRangeToEnd(queries-out.Shape().Dim(2)))
			loss := graph.ReduceAllSum(graph.Mul(out, probe))
			return append([]*graph.Node{out}, graph.Gradient(loss, q, k, v)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		outputs, err := exec.Call(q, k, v, probe)
		if err != nil {
			t.Fatal(err)
		}
		return outputs
	}
	got, want := run(block), run(dense)
	for i, name := range []string{"output", "dL/dq", "dL/dk", "dL/dv"} {
		assertClose(t, name, tensors.MustCopyFlatData[float32](got[i]), tensors.MustCopyFlatData[float32](want[i]), tolerance)
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

// TestTiledAttentionMatchesDense checks the tiled form with small tiles (so
// every band kind occurs: partial tiles, causal diagonals, queries that start
// later than the keys), one diagonal per band and as on the Go backend
// (diagonals folded into bands, which share query and key tiles), against
// dense attention, outputs and gradients, with and without dropout (the same
// hashed mask in both).
func TestTiledAttentionMatchesDense(t *testing.T) {
	cases := []struct {
		name                  string
		queries, keys, offset int
		causal                bool
	}{
		{"causal", 37, 37, 0, true},
		{"causal_whole_tiles", 32, 32, 0, true}, // no padding: the bands below the diagonal go unmasked
		{"bidirectional", 29, 29, 0, false},
		{"bidirectional_whole_tiles", 24, 24, 0, false}, // no band masked at all
		{"latents", 11, 37, 26, true},                   // PerceiverAR's cross-attention: 11 latents after 26 of history
	}
	for _, c := range cases {
		for _, rate := range []float64{0, 0.3} {
			for _, goBackend := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s_dropout%g_go%v", c.name, rate, goBackend), func(t *testing.T) {
					drop := func(g *graph.Graph) Dropout {
						if rate == 0 {
							return Dropout{}
						}
						return Dropout{Rate: rate, Seed: graph.Const(g, uint32(12345))}
					}
					tiled := func(q, k, v *graph.Node) *graph.Node {
						return tiledAttention(q, k, v, c.offset, c.causal, drop(q.Graph()), 8, goBackend)
					}
					dense := func(q, k, v *graph.Node) *graph.Node {
						allows := func(_, query, key int) bool { return !c.causal || key <= query }
						weights := denseWeights(q, k, allows, nil)
						g := q.Graph()
						query := graph.Reshape(graph.AddScalar(graph.Iota(g, shapeInt32(c.queries), 0), c.offset), 1, 1, c.queries, 1)
						key := graph.Reshape(graph.Iota(g, shapeInt32(c.keys), 0), 1, 1, 1, c.keys)
						return graph.Einsum("bhqk,bhkd->bhqd", drop(g).applyAt(weights, query, key), v)
					}
					compareShapes(t, 2, 3, c.queries, c.keys, 4, tiled, dense)
				})
			}
		}
	}
}

// TestSplitTiledAttentionMatchesDense checks the form for a split sequence
// with small tiles (partial tiles, causal tiles wholly masked) against dense
// attention, outputs and gradients, with and without dropout.
func TestSplitTiledAttentionMatchesDense(t *testing.T) {
	cases := []struct {
		name   string
		n      int
		causal bool
	}{{"causal", 37, true}, {"causal_whole_tiles", 32, true}, {"bidirectional", 29, false}, {"bidirectional_whole_tiles", 24, false}}
	for _, c := range cases {
		for _, rate := range []float64{0, 0.3} {
			t.Run(fmt.Sprintf("%s_dropout%g", c.name, rate), func(t *testing.T) {
				drop := func(g *graph.Graph) Dropout {
					if rate == 0 {
						return Dropout{}
					}
					return Dropout{Rate: rate, Seed: graph.Const(g, uint32(12345))}
				}
				split := func(q, k, v *graph.Node) *graph.Node {
					return splitTiledAttention(q, k, v, c.causal, drop(q.Graph()), 8)
				}
				dense := func(q, k, v *graph.Node) *graph.Node {
					allows := func(_, query, key int) bool { return !c.causal || key <= query }
					g := q.Graph()
					query := graph.Reshape(graph.Iota(g, shapeInt32(c.n), 0), 1, 1, c.n, 1)
					key := graph.Reshape(graph.Iota(g, shapeInt32(c.n), 0), 1, 1, 1, c.n)
					return graph.Einsum("bhqk,bhkd->bhqd", drop(g).applyAt(denseWeights(q, k, allows, nil), query, key), v)
				}
				compareShapes(t, 2, 3, c.n, c.n, 4, split, dense)
			})
		}
	}
}

// TestFoldedBandsHaveOneLength: folding packs a causal sequence's diagonals
// of a and T - a tile pairs into bands of T (the middle one alone), a
// bidirectional one's into bands of T, and covers every tile pair once.
func TestFoldedBandsHaveOneLength(t *testing.T) {
	cases := []struct {
		name                  string
		queries, keys, offset int
		causal                bool
		wantLengths           []int
	}{
		{"causal, 10 tiles", 80, 80, 0, true, []int{10, 10, 10, 10, 10, 5}},
		{"causal, 9 tiles", 72, 72, 0, true, []int{9, 9, 9, 9, 9}},
		{"bidirectional, 4 tiles", 32, 32, 0, false, []int{4, 4, 4, 4}},
		{"latents, 2 of 5 tiles", 11, 37, 26, true, []int{2, 2, 2, 2, 2}},
	}
	for _, c := range cases {
		layout := tileLayout(c.queries, c.keys, c.offset, c.causal, 8, true)
		var lengths []int
		covered := map[[2]int]int{}
		for _, b := range layout.bands() {
			lengths = append(lengths, b.pairs())
			for _, s := range b {
				for i := s.from; i < s.to; i++ {
					covered[[2]int{i, i + s.offset}]++
				}
			}
		}
		if fmt.Sprint(lengths) != fmt.Sprint(c.wantLengths) {
			t.Errorf("%s: band lengths %v, want %v", c.name, lengths, c.wantLengths)
		}
		unfolded := 0
		for _, d := range tileLayout(c.queries, c.keys, c.offset, c.causal, 8, false).bands() {
			unfolded += d.pairs()
			for i := d[0].from; i < d[0].to; i++ {
				pair := [2]int{i, i + d[0].offset}
				if covered[pair] != 1 {
					t.Errorf("%s: tile pair %v computed %d times folded, want once", c.name, pair, covered[pair])
				}
			}
		}
		if len(covered) != unfolded {
			t.Errorf("%s: folded bands cover %d tile pairs, the diagonals %d", c.name, len(covered), unfolded)
		}
	}
}

// TestSaltedDropoutMasks: salt 0 is the dropout itself; each other salt draws
// a mask of its own for a tensor of the same shape (apply hashes flat indices,
// so unsalted tensors of one layer would share a pattern), at the same rate.
func TestSaltedDropoutMasks(t *testing.T) {
	const rate, size = 0.3, 4096
	exec, err := graph.NewExec(testBackend(t), func(g *graph.Graph) []*graph.Node {
		ones := graph.OnesLike(graph.Zeros(g, shapes.Make(dtypes.Float32, size)))
		drop := Dropout{Rate: rate, Seed: graph.Const(g, uint32(12345))}
		return []*graph.Node{drop.apply(ones), drop.salted(0).apply(ones), drop.salted(1).apply(ones), drop.salted(2).apply(ones)}
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Call()
	if err != nil {
		t.Fatal(err)
	}
	masks := make([][]float32, len(outs))
	for i, out := range outs {
		masks[i] = tensors.MustCopyFlatData[float32](out)
	}
	same := func(a, b []float32) (n int) {
		for i := range a {
			if (a[i] == 0) == (b[i] == 0) {
				n++
			}
		}
		return n
	}
	if n := same(masks[0], masks[1]); n != size {
		t.Errorf("salt 0 agrees with the unsalted mask on %d of %d weights; want all", n, size)
	}
	// Independent masks at rate r agree on a fraction r² + (1-r)² = 0.58 of the weights.
	for _, pair := range [][2]int{{0, 2}, {0, 3}, {2, 3}} {
		if n := same(masks[pair[0]], masks[pair[1]]); n > size*65/100 {
			t.Errorf("masks %d and %d agree on %d of %d weights; want about 58%%", pair[0], pair[1], n, size)
		}
	}
	for i, mask := range masks {
		dropped := 0
		for _, x := range mask {
			if x == 0 {
				dropped++
			}
		}
		if math.Abs(float64(dropped)/size-rate) > 0.04 {
			t.Errorf("mask %d drops %d of %d weights; want about %g", i, dropped, size, rate)
		}
	}
}

// TestAttendBlocksMatchesAutodiff checks attendBlocks' written-out forward
// and backward against autodiff of the same attention (masked softmax,
// dropout by the same hash, product with the values), in blocks with
// padding, causal and bidirectional, with and without dropout.
func TestAttendBlocksMatchesAutodiff(t *testing.T) {
	for _, causal := range []bool{true, false} {
		for _, rate := range []float64{0, 0.3} {
			t.Run(fmt.Sprintf("causal%v_dropout%g", causal, rate), func(t *testing.T) {
				local := Local{Window: 9, Causal: causal} // blocks of 9 x 18 or 27 keys: past tinyBlockScores, so XLA takes attendBlocks too
				form := func(q, k, v *graph.Node) *blocked {
					return blockForm(q, k, v, windowSpec(local.Window, causal), local.mask)
				}
				drop := func(g *graph.Graph) Dropout {
					return Dropout{Rate: rate, Seed: graph.Const(g, uint32(777))}
				}
				written := func(q, k, v *graph.Node) *graph.Node { return form(q, k, v).attend(drop(q.Graph())) }
				autodiff := func(q, k, v *graph.Node) *graph.Node {
					b := form(q, k, v)
					return fromBlocks(plainValueProducts(drop(q.Graph()).apply(softmaxWithin(b.scores(), b.mask)), b.values), b.n)
				}
				compareShapes(t, 2, 3, 29, 29, 4, written, autodiff)
			})
		}
	}
}
