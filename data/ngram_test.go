package data

import (
	"math"
	"runtime"
	"testing"
)

func TestNgramBits(t *testing.T) {
	// A text that alternates two tokens: a unigram model needs about 1 bit per
	// token, a bigram model knows the next token almost surely.
	text := make([]int32, 4000)
	for i := range text {
		text[i] = int32(i % 2)
	}
	unigram, err := NgramBits(text, text, 1, 2)
	if err != nil || math.Abs(unigram-1) > 0.01 {
		t.Errorf("unigram of an alternating text: %v bits (%v), want about 1", unigram, err)
	}
	bigram, err := NgramBits(text, text, 2, 2)
	if err != nil || bigram > 0.01 {
		t.Errorf("bigram of an alternating text: %v bits (%v), want about 0", bigram, err)
	}
	if _, err := NgramBits(text, text[:2], 3, 2); err == nil {
		t.Error("an evaluation text shorter than the order was accepted")
	}
}

func TestKneserNeyNormalised(t *testing.T) {
	text := opticksBytes(t)
	m, err := newKneserNey(text, 3, 256)
	if err != nil {
		t.Fatal(err)
	}
	// Seen, rare and unseen contexts.
	for _, context := range [][]int32{{'t', 'h'}, {'q', 'u'}, {'x', 'Q'}, {0, 255}} {
		var sum float64
		for next := range int32(256) {
			p := m.prob(context, next)
			if p <= 0 {
				t.Fatalf("P(%d | %q) = %g, want above 0", next, context, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("probabilities after %q sum to %.12f, want 1", context, sum)
		}
	}
}

func TestKneserNeyBeatsAddHalf(t *testing.T) {
	text := opticksBytes(t)
	cut := len(text) * 9 / 10
	train, eval := text[:cut], text[cut:]
	kn, err := KneserNeyBits(train, eval, 3, 256)
	if err != nil {
		t.Fatal(err)
	}
	addHalf, _ := NgramBits(train, eval, 3, 256)
	if kn >= addHalf-0.1 {
		t.Errorf("trigram bits per byte: Kneser-Ney %.3f, add-½ %.3f; want Kneser-Ney clearly lower", kn, addHalf)
	}
	if _, err := KneserNeyBits(train, eval, 9, 256); err == nil {
		t.Error("order 9 at 8 bits a token was accepted (72 bits do not fit a key)")
	}
}

// opticksBytes is Newton's Opticks from the Go toolchain, as bytes.
func opticksBytes(t *testing.T) []int32 {
	t.Helper()
	docs, err := opticksSource(runtime.GOROOT())
	if err != nil {
		t.Skipf("no Opticks in the Go toolchain: %v", err)
	}
	return byteTokenizer{}.Encode(docs[0].text)
}
