package models

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func smallConfig(t *testing.T, values map[string]string) Config {
	t.Helper()
	base := map[string]string{"n": "32", "dim": "16", "heads": "2", "layers": "3", "vocab": "11", "dropout": "0"}
	for k, v := range values {
		base[k] = v
	}
	cfg, err := ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var familyOptions = map[string]map[string]string{
	"full":        {"model": "full"},
	"local":       {"model": "local", "window": "5"},
	"s2":          {"model": "s2", "group": "8"},
	"ecp":         {"model": "ecp", "segment": "8"},
	"pi":          {"model": "pi", "window": "4", "skip_period": "6", "skips": "3", "head_phase": "true"},
	"perceiverar": {"model": "perceiverar", "latents": "12"},
	"double":      {"model": "double", "latents": "12"},
	"compressed":  {"model": "compressed", "latents": "12", "compress": "5"},
	"ssplit":      {"model": "ssplit", "latents": "12", "splits": "4"},
}

// TestModelsAreCausal builds every family, checks the logits cover exactly the
// loss positions, and that changing token j changes no logit at a position < j.
func TestModelsAreCausal(t *testing.T) {
	backend := testBackend(t)
	for _, family := range FamilyNames() {
		t.Run(family, func(t *testing.T) {
			cfg := smallConfig(t, familyOptions[family])
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			store := model.NewStore()
			exec := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
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

func TestECPFollowsTheReference(t *testing.T) {
	cfg := smallConfig(t, familyOptions["ecp"])
	m, _ := New(cfg)
	store := model.NewStore()
	backend := testBackend(t)
	exec := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		return m.Logits(scope, tokens)
	})
	exec.MustCall1(tensors.FromFlatDataAndDimensions(make([]int32, cfg.SeqLen), 1, cfg.SeqLen))
	names := map[string]bool{}
	for v := range store.IterVariables() {
		names[v.Path()] = true
	}
	for _, want := range []string{"/layer_00/attention/key_value/", "/layer_00/attention/output_first/", "/layer_00/attention/output_rest/"} {
		found := false
		for name := range names {
			found = found || strings.Contains(name, want)
		}
		if !found {
			t.Errorf("no variable under %s", want)
		}
	}
	for name := range names {
		if strings.Contains(name, "/attention/key/") || strings.Contains(name, "/attention/value/") {
			t.Errorf("ECP has separate key or value projection %s; the reference uses one K=V projection", name)
		}
	}
	if m.LossStart() != 0 {
		t.Errorf("ECP loss starts at %d, want 0 (all positions)", m.LossStart())
	}
}

func TestInvalidConfigsNameTheRule(t *testing.T) {
	cases := map[string]map[string]string{
		"segment size 7 must divide sequence length 32":    {"model": "ecp", "segment": "7"},
		"window 40 must be at least 1 and smaller":         {"model": "local", "window": "40"},
		"unknown model \"ecpp\"":                           {"model": "ecpp"},
		"dim=16 must be divisible by heads=3":              {"model": "full", "heads": "3"},
		"option segment does not apply to model local":     {"model": "local", "segment": "8"},
		"skips M=9 must be between 1 and the window k=4":   {"model": "pi", "window": "4", "skips": "9"},
		"splits s=3 must divide the context length":        {"model": "ssplit", "latents": "12", "splits": "3"},
		"option layers=\"x\" must be an integer":           {"model": "ecp", "layers": "x"},
		"latents 32 must be at least 1 and smaller":        {"model": "double", "latents": "32"},
		"group size 6 must be even and divide":             {"model": "s2", "group": "6"},
		"option fusion=\"sum\" must be one of: prior, mix": {"model": "pi", "fusion": "sum"},
	}
	for want, values := range cases {
		base := map[string]string{"n": "32", "dim": "16", "heads": "2"}
		for k, v := range values {
			base[k] = v
		}
		_, err := ParseConfig(base)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want it to contain %q", values, err, want)
		}
	}
}

func TestCostOfECPAt4096(t *testing.T) {
	cfg, err := ParseConfig(map[string]string{"model": "ecp", "n": "4096", "segment": "256"})
	if err != nil {
		t.Fatal(err)
	}
	c := CostOf(cfg)
	if c.Ratio != 0.125 {
		t.Errorf("ECP ratio at n=4096, h=256: %v, want 0.125 (one h x 2h block per half-segment)", c.Ratio)
	}
	const n, h = 4096, 256
	if want := int64(3*h*n/2 - h*h + n/2); c.CausalPairs != want {
		t.Errorf("causal pairs %d, want 3hn/2 - h² + n/2 = %d", c.CausalPairs, want)
	}
	full := CostOf(Config{Model: "full", Vocab: 256, SeqLen: n, Dim: 128, Heads: 4, Layers: 4, FFMult: 4, Causal: true})
	if full.Ratio != 1 || full.CausalRatio != 1 {
		t.Errorf("full attention ratios %v, %v, want 1, 1", full.Ratio, full.CausalRatio)
	}
}
