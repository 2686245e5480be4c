package train

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

func TestAnswerBatchWeightsTheAnswerOnly(t *testing.T) {
	// Two rows of n+1 = 5 tokens: a 2-token answer, and an evaluation filler row.
	b := data.ClassBatch{Inputs: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Labels: []int32{2, -1}, Batch: 2, SeqLen: 5}
	inputs, targets, weights := answerBatch(b, 4)
	if !slices.Equal(inputs, []int32{1, 2, 3, 4, 6, 7, 8, 9}) || !slices.Equal(targets, []int32{2, 3, 4, 5, 7, 8, 9, 10}) {
		t.Errorf("inputs %v targets %v", inputs, targets)
	}
	if !slices.Equal(weights, []float32{0, 0, 1, 1, 0, 0, 0, 0}) {
		t.Errorf("weights %v, want the last two targets of row 0 only", weights)
	}
}

// TestPasskeyLayout checks a passkey example: n+1 byte tokens ending with
// the answer, the same key stated in the prompt.
func TestPasskeyLayout(t *testing.T) {
	g := generatedSets["passkey"]
	tok, _ := data.NewTokenizer("byte")
	examples, err := g.make(genParams{n: 200, distance: 60, tok: tok}, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		text := tok.Decode(e.Tokens)
		if len(e.Tokens) != 201 || e.Label != 6 {
			t.Fatalf("%d tokens, answer of %d; want 201 and 6", len(e.Tokens), e.Label)
		}
		m := regexp.MustCompile(`The pass key is (\d{5})\.(?s:.*)The pass key is (\d{5})$`).FindStringSubmatch(text)
		if m == nil || m[1] != m[2] {
			t.Errorf("example does not end with the key it states: %q", text)
		}
	}
}

// TestRetrievalLearnsAShortDistance trains associative recall with the
// queried pair 4 tokens back: a two-layer dense model must beat chance (1/16)
// by far, and Retrieval reports each distance on the test split.
func TestRetrievalLearnsAShortDistance(t *testing.T) {
	o := tinyTask(t, map[string]string{"model": "full", "data": "assoc", "n": "8", "examples": "400", "batch": "16", "dim": "32", "layers": "2",
		"steps": "150", "warmup": "5", "lr": "1e-2", "eval_every": "0", "dropout": "0"})
	var steps []int
	results, err := Retrieval(context.Background(), o, []int{4, 8}, func(d int, p Progress) {
		if !p.Compiling {
			steps = append(steps, d)
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Distance != 4 || results[1].Distance != 8 || len(steps) != 300 {
		t.Fatalf("results %v, %d progress calls; want distances 4 and 8, 150 steps each", results, len(steps))
	}
	for _, r := range results {
		if r.Count != 40 || r.N != 8 || r.Steps != 150 {
			t.Errorf("distance %d: %d test answers, n %d, %d steps; want 40, 8, 150", r.Distance, r.Count, r.N, r.Steps)
		}
	}
	t.Logf("accuracy: distance 4 %.2f, distance 8 %.2f", results[0].Acc, results[1].Acc)
	if results[0].Acc < 0.5 {
		t.Errorf("distance 4: accuracy %.2f after 150 steps, want above 0.5 (chance 1/16)", results[0].Acc)
	}
}

func TestRetrievalRefusesBadDistancesFirst(t *testing.T) {
	o := tinyTask(t, map[string]string{"model": "full", "data": "assoc", "n": "8"})
	if _, err := Retrieval(context.Background(), o, []int{4, 9}, nil, nil); err == nil {
		t.Error("distance 9 in sequences of 8 tokens: want an error before any training")
	}
	o.Data = "listops"
	if _, err := Retrieval(context.Background(), o, []int{4}, nil, nil); err == nil {
		t.Error("Retrieval on listops: want an error")
	}
}
