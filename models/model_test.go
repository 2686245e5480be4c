package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

func TestECPFollowsTheReference(t *testing.T) {
	cfg := caseConfig(t, map[string]string{"model": "ecp", "half_segment": "8"})
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
		"half-segment half_segment=7 must divide sequence length n=32": {"model": "ecp", "segment": "7"},
		"window k=40 must be smaller than sequence length n=32":        {"model": "local", "window": "40"},
		"option window=0 must be at least 1":                           {"model": "local", "window": "0"},
		"unknown model \"ecpp\"":                                       {"model": "ecpp"},
		"dim=16 must be divisible by heads=3":                          {"model": "full", "heads": "3"},
		"option half_segment does not apply to model local":            {"model": "local", "half_segment": "8"},
		"skips M=9 must be at most the window k=4":                     {"model": "pi", "window": "4", "skips": "9"},
		"splits s=3 must divide the context length":                    {"model": "ssplit", "latents": "12", "splits": "3"},
		"option layers=\"x\" must be an integer":                       {"model": "ecp", "layers": "x"},
		"latents l=32 must be smaller than sequence length n=32":       {"model": "double", "latents": "32"},
		"group size group=6 must be even and divide":                   {"model": "s2", "group": "6"},
		"option fusion=\"sum\" must be one of: prior, mix":             {"model": "pi", "fusion": "sum"},
		"option dropout=\"nan\" must be a finite number":               {"model": "ecp", "dropout": "nan"},
		"option causal does not apply to model ecp":                    {"model": "ecp", "causal": "false"},
		"option dropout=1 must be in [0, 1)":                           {"model": "full", "dropout": "1"},
		"compress c=30 must be at most the context length":             {"model": "compressed", "latents": "12", "compress": "30"},
		"option residual=\"mine\" must be one of: authors, aligned":    {"model": "compressed", "residual": "mine"},
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
	cfg, err := ParseConfig(map[string]string{"model": "ecp", "n": "4096", "half_segment": "256"})
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
	full := CostOf(DefaultConfig("full").MustWith("n", fmt.Sprint(n)))
	if full.Ratio != 1 || full.CausalRatio != 1 {
		t.Errorf("full attention ratios %v, %v, want 1, 1", full.Ratio, full.CausalRatio)
	}
}
