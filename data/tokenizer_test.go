package data

import (
	"strings"
	"testing"
)

func TestByteTokenizerLossless(t *testing.T) {
	tok, err := NewTokenizer("byte")
	if err != nil {
		t.Fatal(err)
	}
	text := "Café — naïve \x00\xff bytes"
	ids := tok.Encode(text)
	if len(ids) != len(text) || tok.VocabSize() != 256 {
		t.Fatalf("%d ids for %d bytes, vocab %d", len(ids), len(text), tok.VocabSize())
	}
	if got := tok.Decode(ids); got != text {
		t.Errorf("round trip %q != %q", got, text)
	}
}

func TestGPT2Tokenizer(t *testing.T) {
	tok, err := NewTokenizer("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode("Hello world")
	// GPT-2's ids for "Hello" and " world".
	if len(ids) != 2 || ids[0] != 15496 || ids[1] != 995 {
		t.Errorf("Encode(\"Hello world\") = %v, want [15496 995]", ids)
	}
	text := "It is a truth universally acknowledged, that a single man in possession of a good fortune…"
	if got := tok.Decode(tok.Encode(text)); got != text {
		t.Errorf("round trip %q", got)
	}
	if got := tok.Decode([]int32{15496, 50256, 99999}); got != "Hello<|endoftext|>\uFFFD" {
		t.Errorf("Decode with special and out-of-range ids = %q", got)
	}
	if tok.VocabSize() != 50257 {
		t.Errorf("VocabSize = %d", tok.VocabSize())
	}
}

func TestUnknownTokenizer(t *testing.T) {
	_, err := NewTokenizer("sentencepiece")
	if err == nil || !strings.Contains(err.Error(), "byte, gpt2, wordpiece") {
		t.Fatalf("err = %v, want the list of valid names", err)
	}
}
