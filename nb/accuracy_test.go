package nb

import (
	"math"
	"testing"
)

func TestAccuracyMetrics(t *testing.T) {
	r := trainedFrom(t, map[string]any{"valid_acc": 0.875})
	if Percent(r) != 87.5 || ErrorRate(r) != 0.125 || AsAccuracy(ErrorRate(r)) != "87.5" {
		t.Errorf("accuracy 0.875: %v %%, error rate %v, shown as %q", Percent(r), ErrorRate(r), AsAccuracy(ErrorRate(r)))
	}
	if none := (Trained{}); !math.IsNaN(Percent(none)) || !math.IsNaN(ErrorRate(none)) {
		t.Errorf("a run without accuracy: %v %%, error rate %v; want NaN", Percent(none), ErrorRate(none))
	}
}
