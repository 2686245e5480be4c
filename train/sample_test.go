package train

import (
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

func TestReadabilityHintSaysWhatTheModelHasLearned(t *testing.T) {
	corpus := &data.Corpus{Name: "toy", Train: "The cat sat on the warm mat; computers compute."}
	m := &Manifest{Step: 50, Eval: &Eval{BPC: 3.9}}
	hint := ReadabilityHint(m, "xq Warm zzzz, computers a", corpus)
	for _, want := range []string{"trained 50 steps", "predicts 3.90 bits per character", "2 of the 3 words of 4 letters or more", "words of toy"} {
		if !strings.Contains(hint, want) {
			t.Errorf("hint lacks %q: %s", want, hint)
		}
	}
	if hint := ReadabilityHint(&Manifest{Step: 1, Losses: []float64{5.5}}, "", corpus); !strings.Contains(hint, "trained 1 step and predicts 7.93") {
		t.Errorf("without an evaluation the hint should use the train loss (5.5 nats = 7.93 bits): %s", hint)
	}
	m.Eval.BPC = 2.1
	if hint := ReadabilityHint(m, "whatever", corpus); hint != "" {
		t.Errorf("a model at 2.1 bits per character gets a hint: %s", hint)
	}
}
