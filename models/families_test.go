package models

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// familyCases are the configs every generic test of this package runs: the
// whole model is causal and has the loss positions its family declares, each
// layer's block form matches its dense reference (outputs and gradients), no
// causal pattern leaks the future, and AllowedPairs counts K(i) exactly.
// Adding a family adds a row here (bidirectional families add a causal=false
// row too). Sizes are small: n=32, d=16, 2 heads, 3 layers unless a row says.
var familyCases = []map[string]string{
	{"model": "full"},
	{"model": "full", "causal": "false"},
	{"model": "local", "window": "5"},
	{"model": "local", "window": "5", "causal": "false", "n": "23"},
	// Windows of 128 and more are cut into blocks smaller than the window (windowSpec).
	{"model": "local", "window": "130", "n": "300", "layers": "1"},
	{"model": "local", "window": "129", "causal": "false", "n": "290", "layers": "1"},
	{"model": "s2", "group": "8"},
	{"model": "s2", "group": "6", "n": "18", "heads": "3", "dim": "12"},
	{"model": "ecp", "half_segment": "8"},
	{"model": "ecp", "half_segment": "1", "n": "5", "heads": "2", "dim": "8"},
	{"model": "ecp", "half_segment": "8", "rope": "every", "kv": "separate"},
	{"model": "pi", "window": "4", "skip_period": "6", "skips": "3", "head_phase": "true"},
	{"model": "pi", "window": "4", "skip_period": "6", "skips": "3", "n": "40"},
	{"model": "pi", "window": "4", "skip_period": "4", "skips": "4", "fusion": "mix", "n": "33"},
	{"model": "pi", "window": "3", "skip_period": "5", "skips": "2", "head_phase": "true", "causal": "false", "n": "31"},
	{"model": "pi", "window": "4", "skip_period": "6", "skips": "3", "gate": "false"},
	{"model": "pi", "window": "130", "skip_period": "140", "skips": "1", "n": "300", "layers": "1"},
	// M reaching every other row of a skip channel: one block of all rows (skipSpec).
	{"model": "pi", "window": "4", "skip_period": "8", "skips": "4", "head_phase": "true", "n": "29"},
	{"model": "pi", "window": "3", "skip_period": "8", "skips": "3", "causal": "false", "n": "31"},
	{"model": "perceiverar", "latents": "12"},
	{"model": "perceiverar", "latents": "12", "kv": "separate"},
	{"model": "double", "latents": "12"},
	{"model": "double", "latents": "12", "causal_context": "true"},
	{"model": "compressed", "latents": "12", "compress": "5"},
	{"model": "compressed", "latents": "12", "compress": "5", "residual": "aligned"},
	{"model": "ssplit", "latents": "12", "splits": "4"},
	{"model": "ssplit", "latents": "20", "splits": "3", "causal_context": "true", "n": "32"},
	{"model": "longformer", "window": "3", "dilation": "1,2", "global": "2"},
	{"model": "longformer", "window": "2", "dilation": "3", "global": "3", "causal": "false", "n": "29"},
	{"model": "longformer", "window": "130", "dilation": "1,2", "global": "2", "n": "300", "layers": "1"},
	{"model": "bigbird", "block": "4", "global_blocks": "1", "random_blocks": "2"},
	{"model": "bigbird", "block": "3", "global_blocks": "2", "random_blocks": "3", "causal": "false", "n": "30"},
}

func caseName(values map[string]string) string {
	name := values["model"]
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if k != "model" {
			name += fmt.Sprintf("_%s=%s", k, values[k])
		}
	}
	return name
}

// caseConfig is a row's config: small sizes, no dropout.
func caseConfig(t testing.TB, values map[string]string) Config {
	t.Helper()
	base := map[string]string{"n": "32", "dim": "16", "heads": "2", "layers": "3", "vocab": "11", "dropout": "0"}
	maps.Copy(base, values)
	cfg, err := ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestEveryFamilyHasARow keeps the table complete.
func TestEveryFamilyHasARow(t *testing.T) {
	for _, family := range FamilyNames() {
		found := false
		for _, values := range familyCases {
			found = found || values["model"] == family
		}
		if !found {
			t.Errorf("family %s has no row in familyCases", family)
		}
	}
}

// TestModelsAreCausal builds every causal row, checks the logits cover exactly
// the loss positions, and that changing token j changes no logit at a position
// < j (but some at j or after).
func TestModelsAreCausal(t *testing.T) {
	backend := testBackend(t)
	for _, values := range familyCases {
		if values["causal"] == "false" {
			continue
		}
		t.Run(caseName(values), func(t *testing.T) {
			cfg := caseConfig(t, values)
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			exec := model.MustNewExec(backend, model.NewStore(), func(scope *model.Scope, tokens *graph.Node) *graph.Node {
				return m.Logits(scope, tokens)
			})
			rng := rand.New(rand.NewPCG(3, 4))
			tokens := make([]int32, cfg.SeqLen)
			for i := range tokens {
				tokens[i] = int32(rng.IntN(cfg.Vocab))
			}
			run := func(tokens []int32) []float32 {
				out := exec.MustCall1(tensors.FromFlatDataAndDimensions(tokens, 1, cfg.SeqLen))
				if got, want := out.Shape().Dimensions, []int{1, cfg.SeqLen - m.LossStart(), cfg.Vocab}; !equalInts(got, want) {
					t.Fatalf("logits shape %v, want %v", got, want)
				}
				return tensors.MustCopyFlatData[float32](out)
			}
			base := run(tokens)
			for _, changed := range []int{m.LossStart() + 3, cfg.SeqLen - 1} {
				perturbed := append([]int32(nil), tokens...)
				perturbed[changed] = (perturbed[changed] + 1) % int32(cfg.Vocab)
				out := run(perturbed)
				moved := false
				for pos := m.LossStart(); pos < cfg.SeqLen; pos++ {
					row := (pos - m.LossStart()) * cfg.Vocab
					for v := range cfg.Vocab {
						if out[row+v] != base[row+v] {
							if pos < changed {
								t.Fatalf("changing token %d moved the logits at position %d", changed, pos)
							}
							moved = true
						}
					}
				}
				if !moved {
					t.Fatalf("changing token %d moved no logit at all", changed)
				}
			}
		})
	}
}

// layerPatterns are the distinct (pattern, length) pairs of a row's layers.
func layerPatterns(cfg Config) []Layer {
	var out []Layer
	for _, l := range cfg.LayerPatterns() {
		seen := false
		for _, o := range out {
			seen = seen || (fmt.Sprintf("%#v", o.Pattern) == fmt.Sprintf("%#v", l.Pattern) && o.SeqLen == l.SeqLen)
		}
		if !seen {
			out = append(out, l)
		}
	}
	return out
}

func TestBlockFormsMatchDenseReference(t *testing.T) {
	for _, values := range familyCases {
		cfg := caseConfig(t, values)
		for _, layer := range layerPatterns(cfg) {
			p := layer.Pattern
			t.Run(fmt.Sprintf("%s/%s_n%d", caseName(values), p.Name(), layer.SeqLen), func(t *testing.T) {
				compareForms(t, 2, cfg.Heads, layer.SeqLen, 4,
					func(q, k, v *graph.Node) *graph.Node { return p.Attend(q, k, v, Dropout{}) },
					func(q, k, v *graph.Node) *graph.Node {
						ref := Reference(p, q, k, v)
						if cross, ok := p.(Cross); ok { // the block form returns the latent rows only
							ref = graph.SliceAxis(ref, 2, graph.AxisRangeToEnd(cross.Context))
						}
						return ref
					})
			})
		}
	}
}

// TestNoFutureLeaks changes the key and value at position j and checks that no
// output before j moves, for every causal layer pattern in block form.
func TestNoFutureLeaks(t *testing.T) {
	const headDim = 4
	backend := testBackend(t)
	for _, values := range familyCases {
		cfg := caseConfig(t, values)
		for _, layer := range layerPatterns(cfg) {
			p, n := layer.Pattern, layer.SeqLen
			if !isCausal(p, cfg.Heads, n) {
				continue // bidirectional (classification, or a context the authors left bidirectional)
			}
			if _, cross := p.(Cross); cross {
				continue // returns the latent rows only; the whole-model test covers it
			}
			t.Run(fmt.Sprintf("%s/%s", caseName(values), p.Name()), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 2))
				heads := cfg.Heads
				q, k, v := randomTensor(rng, 1, heads, n, headDim), randomTensor(rng, 1, heads, n, headDim), randomTensor(rng, 1, heads, n, headDim)
				exec, err := graph.NewExec(backend, func(q, k, v *graph.Node) *graph.Node { return p.Attend(q, k, v, Dropout{}) })
				if err != nil {
					t.Fatal(err)
				}
				base := tensors.MustCopyFlatData[float32](exec.MustCall(q, k, v)[0])
				for _, changed := range []int{0, n / 3, n / 2, n - 1} {
					out := tensors.MustCopyFlatData[float32](exec.MustCall(q, perturbPosition(k, changed), perturbPosition(v, changed))[0])
					for head := range heads {
						for i := range changed {
							for d := range headDim {
								if idx := (head*n+i)*headDim + d; out[idx] != base[idx] {
									t.Fatalf("changing position %d moved output %d of head %d", changed, i, head)
								}
							}
						}
					}
				}
			})
		}
	}
}

// isCausal reports whether K(i) holds no key after i.
func isCausal(p Pattern, heads, n int) bool {
	for head := range heads {
		for i := range n {
			for j := i + 1; j < n; j++ {
				if p.Allows(head, i, j) {
					return false
				}
			}
		}
	}
	return true
}

// TestAllowedPairsCountsK checks each pattern's arithmetic count against
// counting Allows pair by pair, at the row's length and a few others.
func TestAllowedPairsCountsK(t *testing.T) {
	for _, values := range familyCases {
		cfg := caseConfig(t, values)
		for _, layer := range layerPatterns(cfg) {
			p := layer.Pattern
			if got, want := p.AllowedPairs(cfg.Heads, layer.SeqLen), CountAllowed(p, cfg.Heads, layer.SeqLen); got != want {
				t.Errorf("%s/%s n=%d: AllowedPairs %d, counted %d", caseName(values), p.Name(), layer.SeqLen, got, want)
			}
		}
	}
}

// TestGateMatchesDenseReference checks π's gated block form against its dense
// form with a random gate, for both fusions.
func TestGateMatchesDenseReference(t *testing.T) {
	for _, fusion := range []string{FusionPrior, FusionMix} {
		pi := Pi{Window: 4, SkipPeriod: 6, Skips: 3, Heads: 2, Causal: true, HeadPhase: true, Fusion: fusion}
		t.Run(fusion, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			alpha := randomTensor(rng, 2, 2, 29) // logits of α, one per (batch, head, token)
			gate := func(q *graph.Node) *graph.Node { return graph.Sigmoid(graph.Const(q.Graph(), alpha)) }
			compareForms(t, 2, 2, 29, 4,
				func(q, k, v *graph.Node) *graph.Node { return pi.AttendGated(q, k, v, gate(q), Dropout{}) },
				func(q, k, v *graph.Node) *graph.Node {
					return graph.Einsum("bhqk,bhkd->bhqd", pi.DenseWeightsGated(q, k, gate(q)), v)
				})
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

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSaturatedGateKeepsGradientsFinite: a gate at exactly 0 or 1 (its logit
// saturated, as happens at high learning rates) must leave the outputs and
// every gradient finite under both fusions; log 0 in prior fusion made them NaN.
func TestSaturatedGateKeepsGradientsFinite(t *testing.T) {
	backend := testBackend(t)
	rng := rand.New(rand.NewPCG(3, 3))
	q, k, v := randomTensor(rng, 1, 2, 29, 4), randomTensor(rng, 1, 2, 29, 4), randomTensor(rng, 1, 2, 29, 4)
	for _, fusion := range []string{FusionPrior, FusionMix} {
		for _, saturated := range []float32{0, 1} {
			pi := Pi{Window: 4, SkipPeriod: 6, Skips: 3, Heads: 2, Causal: true, HeadPhase: true, Fusion: fusion}
			exec, err := graph.NewExec(backend, func(q, k, v *graph.Node) []*graph.Node {
				alpha := graph.BroadcastToDims(graph.Scalar(q.Graph(), q.DType(), saturated), 1, 2, 29)
				loss := graph.ReduceAllSum(graph.Square(pi.AttendGated(q, k, v, alpha, Dropout{})))
				return append([]*graph.Node{loss}, graph.Gradient(loss, q, k, v, alpha)...)
			})
			if err != nil {
				t.Fatal(err)
			}
			outputs, err := exec.Call(q, k, v)
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"loss", "dL/dq", "dL/dk", "dL/dv", "dL/dα"} {
				for _, x := range tensors.MustCopyFlatData[float32](outputs[i]) {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("%s fusion, α = %g: %s is %g", fusion, saturated, name, x)
					}
				}
			}
		}
	}
}
