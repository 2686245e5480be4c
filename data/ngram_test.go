package data

import (
	"math"
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
