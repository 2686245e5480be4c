package train

import (
	"math"
	"testing"
)

// TestAttentionAndGateProbes trains a tiny π-Attention model briefly and
// checks the probed weights: each row sums to 1 over K(i), is zero outside
// it, and the gate statistics lie in [0, 1].
func TestAttentionAndGateProbes(t *testing.T) {
	l := trainedTiny(t, map[string]string{"model": "pi", "window": "4", "segment": "", "steps": "2", "eval_every": "0"})
	tokens, err := l.InputTokens("Light is propagated from luminous bodies in time.")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := l.Attention(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 2 || len(maps[0].Weights) != 2 || maps[0].Alpha == nil {
		t.Fatalf("got %d layers, %d heads, alpha %v; want 2, 2, present", len(maps), len(maps[0].Weights), maps[0].Alpha != nil)
	}
	for _, m := range maps {
		for h, rows := range m.Weights {
			for i, row := range rows {
				var sum float64
				for j, w := range row {
					if !m.pattern.Allows(h, i, j) && w != 0 {
						t.Fatalf("layer %d head %d: weight %g at (%d,%d) outside K(i)", m.Layer, h, w, i, j)
					}
					sum += float64(w)
				}
				if math.Abs(sum-1) > 1e-4 {
					t.Fatalf("layer %d head %d row %d sums to %g", m.Layer, h, i, sum)
				}
			}
		}
	}
	gate, err := GateStatistics("pi", maps)
	if err != nil {
		t.Fatal(err)
	}
	for _, gl := range gate.Layers {
		for h := range gl.MeanAlpha {
			if gl.MeanAlpha[h] <= 0 || gl.MeanAlpha[h] >= 1 || gl.SkipMass[h] <= 0 || gl.SkipMass[h] >= 1 {
				t.Errorf("layer %d head %d: mean α %g, skip mass %g; want both in (0,1)", gl.Layer, h, gl.MeanAlpha[h], gl.SkipMass[h])
			}
		}
	}
}
