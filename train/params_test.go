package train

import (
	"context"
	"math"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
)

// TestPresetsMatchThePapers: each preset whose paper gives a parameter count
// has it within 5 %, counted from the built graph; tying the embeddings
// removes exactly the output layer.
func TestPresetsMatchThePapers(t *testing.T) {
	for _, p := range models.Presets {
		r, err := CountPreset(p.Name)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		t.Logf("%s: %d parameters, paper %d", p.Name, r.Params, r.PaperSays)
		if p.Params > 0 && math.Abs(r.Off) > 0.05 {
			t.Errorf("%s: %d parameters, the paper %d (%+.1f %%)", p.Name, r.Params, p.Params, 100*r.Off)
		}
	}
	tied, err := models.ParseConfig(map[string]string{"model": "full", "n": "32", "dim": "16", "heads": "2", "layers": "1", "vocab": "100", "tied": "true"})
	if err != nil {
		t.Fatal(err)
	}
	untied := tied
	untied.Tied = false
	withTies, err1 := CountParams(tied, 0)
	without, err2 := CountParams(untied, 0)
	if err1 != nil || err2 != nil || without-withTies != 100*16+100 {
		t.Errorf("tied %d, untied %d parameters (%v, %v): want the 100×16 matrix and 100 biases less", withTies, without, err1, err2)
	}
}

// TestPresetsTrainOneStep builds each preset's training graph at its own
// width and trains one step at batch 1 and a short length on the Go
// backend. Presets over 400M parameters keep 2 of their layers, so that
// their weights and Adam's state fit a laptop's memory.
func TestPresetsTrainOneStep(t *testing.T) {
	if testing.Short() {
		t.Skip("one step of every preset at full width: about a minute")
	}
	short := map[string]map[string]string{ // lengths the families accept, under the presets' 1024-2048
		"ecp": {"n": "512"}, "perceiverar": {"n": "128", "latents": "64"}, "pi": {"n": "256"},
	}
	for _, p := range models.Presets {
		t.Run(p.Name, func(t *testing.T) {
			values := map[string]string{"preset": p.Name, "model": "", "segment": "", "dim": "", "heads": "", "layers": "",
				"batch": "1", "steps": "1", "warmup": "0", "eval_every": "0", "eval_batches": "1"}
			for name, value := range short[p.Options["model"]] {
				values[name] = value
			}
			if cfg, err := models.ParseConfig(map[string]string{"preset": p.Name}); err != nil {
				t.Fatal(err)
			} else if 12*cfg.Dim*cfg.Dim*cfg.Layers > 400_000_000 {
				values["layers"] = "2"
			}
			r, err := Run(context.Background(), tiny(t, values), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Steps != 1 || math.IsNaN(r.TrainLoss) || r.Config.Dim == 16 {
				t.Fatalf("%d steps, loss %v, width %d: want one step of the preset's width", r.Steps, r.TrainLoss, r.Config.Dim)
			}
			t.Logf("%s: %d parameters trained one step in %.1f s", p.Name, r.Params, r.Seconds)
		})
	}
}
