package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// TestBF16TrainsLikeFloat32: 300 steps in bf16 reach a validation loss
// within 2 % of float32's from the same seed (same initial weights, same
// batches), on both backends, and a bf16 run's checkpoint holds float32
// weights.
func TestBF16TrainsLikeFloat32(t *testing.T) {
	if testing.Short() {
		t.Skip("600 training steps per backend")
	}
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			valid, losses := map[string]float64{}, map[string][]float64{}
			for _, precision := range Precisions {
				o := tiny(t, map[string]string{"backend": backend, "precision": precision, "n": "64", "dim": "32", "segment": "16",
					"steps": "300", "warmup": "20", "lr": "3e-3", "eval_every": "0", "eval_batches": "8", "dropout": "0"})
				r, err := Run(context.Background(), o, nil)
				if err != nil {
					t.Fatalf("%s: %v", precision, err)
				}
				valid[precision] = r.ValidLoss
				m, _, err := LoadManifest(r.Checkpoint)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range m.Variables {
					if v.DType.IsFloat() && v.DType != dtypes.Float32 {
						t.Errorf("%s checkpoint: variable %s is %s, want float32", precision, v.Path, v.DType)
					}
				}
				losses[precision] = r.Losses
			}
			if slices.Equal(losses["bf16"], losses["float32"]) {
				t.Fatal("bf16 computed exactly the losses of float32: it did not compute in bfloat16")
			}
			t.Logf("valid loss after 300 steps: float32 %.4f, bf16 %.4f", valid["float32"], valid["bf16"])
			if math.Abs(valid["bf16"]-valid["float32"]) > 0.02*valid["float32"] {
				t.Errorf("bf16 valid loss %.4f, float32 %.4f: more than 2 %% apart", valid["bf16"], valid["float32"])
			}
		})
	}
}

// TestBF16ResumesExactly: a bf16 run stopped at step 4 and resumed computes
// the same losses as the run that was not stopped.
func TestBF16ResumesExactly(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			values := map[string]string{"backend": backend, "precision": "bf16", "eval_every": "3"}
			whole, err := Run(context.Background(), tiny(t, values), nil)
			if err != nil {
				t.Fatal(err)
			}
			resumed := stoppedAndResumed(t, tiny(t, values), 4)
			for i := range whole.Losses {
				if i >= len(resumed.Losses) || resumed.Losses[i] != whole.Losses[i] {
					t.Fatalf("losses %v after resume, %v uninterrupted", resumed.Losses, whole.Losses)
				}
			}
			if resumed.ValidLoss != whole.ValidLoss {
				t.Errorf("valid loss %.9g after resume, %.9g uninterrupted", resumed.ValidLoss, whole.ValidLoss)
			}
		})
	}
}
