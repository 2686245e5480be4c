package train

import (
	"context"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
)

// TestReceptiveFieldMatchesBounds measures random models: ECP and local reach
// exactly their bound (the gradient is exactly zero beyond it, non-zero
// inside), and never beyond it.
func TestReceptiveFieldMatchesBounds(t *testing.T) {
	backend, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, values := range []map[string]string{
		{"model": "ecp", "n": "64", "segment": "8", "layers": "3", "dim": "16", "heads": "2", "dropout": "0"},
		{"model": "local", "n": "64", "window": "5", "layers": "3", "dim": "16", "heads": "2", "dropout": "0"},
	} {
		cfg, err := models.ParseConfig(values)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReceptiveField(context.Background(), cfg, nil, backend, RFOptions{Position: -1, Threshold: 1e-6, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Layers {
			if l.Measured != l.Bound {
				t.Errorf("%s after %d layers: measured %d, bound %d", cfg.Model, l.Layers, l.Measured, l.Bound)
			}
		}
		if want := RFBound(cfg, 63, 3); r.Layers[2].Bound != want || want == 63 {
			t.Errorf("%s: bound %d after 3 layers, want %d (< 63)", cfg.Model, r.Layers[2].Bound, want)
		}
	}
}

// TestReceptiveFieldOfTrainedWeights measures every depth of a trained
// checkpoint: each depth builds its own store from the same saved values.
func TestReceptiveFieldOfTrainedWeights(t *testing.T) {
	loaded := trainedTiny(t, map[string]string{"steps": "2", "eval_every": "0"})
	r, err := loaded.ReceptiveField(context.Background(), RFOptions{Position: -1, Threshold: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Trained || len(r.Layers) != 2 {
		t.Fatalf("got trained=%v with %d depths, want trained weights measured at 2 depths", r.Trained, len(r.Layers))
	}
	for _, l := range r.Layers {
		if l.Measured > l.Bound {
			t.Errorf("ECP at depth %d reaches %d back, beyond its bound %d", l.Layers, l.Measured, l.Bound)
		}
	}
}
