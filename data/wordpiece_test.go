package data

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// helloText has five letters; "he" starts both words and is the best first
// merge: 60·log(60·270/(60·60)) beats (##e, ##l)'s 60·log 3.
var helloText = strings.Repeat("hello, help. ", 30)

func TestWordPieceFirstMerge(t *testing.T) {
	// UNK, then h e l o p , . each as a first piece and as a "##" piece.
	const alphabet = 1 + 2*7
	w, err := TrainWordPiece(helloText, alphabet+1)
	if err != nil {
		t.Fatal(err)
	}
	if w.VocabSize() != alphabet+1 || w.pieces[alphabet] != "he" {
		t.Errorf("vocabulary %q, want the alphabet and then he", w.pieces)
	}
	if _, err := TrainWordPiece(helloText, alphabet-1); err == nil {
		t.Error("a vocabulary smaller than the alphabet was accepted")
	}
}

func TestWordPieceEncodeDecode(t *testing.T) {
	w, err := TrainWordPiece(helloText, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if w.VocabSize() >= 1000 {
		t.Errorf("vocabulary of %d pieces from two words: merges past the last pair", w.VocabSize())
	}
	ids := w.Encode("help, hello.")
	want := []int32{w.initial["help"], w.initial[","], w.initial["hello"], w.initial["."]}
	if !slices.Equal(ids, want) || slices.Contains(ids, 0) {
		t.Errorf("Encode = %v, want whole words %v", ids, want)
	}
	if got := w.Decode(ids); got != "help, hello." {
		t.Errorf("Decode = %q", got)
	}
	// A piece longer than any word seen is spelled in pieces of the vocabulary.
	if got := w.Decode(w.Encode("hellohelp")); got != "hellohelp" {
		t.Errorf("round trip of an unseen word: %q", got)
	}
	// x was never seen: the word that holds it is one UNK, the rest stays.
	if got := w.Encode("hexlo help"); !slices.Equal(got, []int32{unknownToken, w.initial["help"]}) {
		t.Errorf("Encode(\"hexlo help\") = %v, want [UNK] help", got)
	}
}

func TestCorpusTokenizerKeepsVocabulary(t *testing.T) {
	home := t.TempDir()
	if _, err := writePrepared(home, CorpusMeta{Name: "opticks"}, [3]string{helloText, helloText, helloText}); err != nil {
		t.Fatal(err)
	}
	tok, err := CorpusTokenizer(home, "opticks", "wordpiece")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(corpusDir(home, "opticks"), "wordpiece-8192.json")
	var kept wordPieceFile
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &kept) != nil || len(kept.Pieces) != tok.VocabSize() {
		t.Fatalf("vocabulary file %s: %v, %d pieces, want %d", path, err, len(kept.Pieces), tok.VocabSize())
	}
	// A second load reads the file (here made smaller than training gives).
	kept.Pieces = kept.Pieces[:3]
	raw, _ = json.Marshal(kept)
	if err := writeFileAtomic(path, raw); err != nil {
		t.Fatal(err)
	}
	if again, err := CorpusTokenizer(home, "opticks", "wordpiece"); err != nil || again.VocabSize() != 3 {
		t.Errorf("second load: %v, %d pieces, want the file's 3", err, again.VocabSize())
	}
	if tok, err := CorpusTokenizer(home, "opticks", "byte"); err != nil || tok.Name() != "byte" {
		t.Errorf("CorpusTokenizer(byte) = %v, %v", tok, err)
	}
	if _, err := NewTokenizer("wordpiece"); err == nil || !strings.Contains(err.Error(), "needs one (data=") {
		t.Errorf("NewTokenizer(wordpiece) = %v, want an error asking for a corpus", err)
	}
}

func TestTokenBaselinesBitsPerByte(t *testing.T) {
	home := t.TempDir()
	text := byteTokenizer{}.Decode(opticksBytes(t))
	cut := len(text) * 9 / 10
	if _, err := writePrepared(home, CorpusMeta{Name: "opticks"}, [3]string{text[:cut], text[cut:], text[cut:]}); err != nil {
		t.Fatal(err)
	}
	f, err := TokenBaselines(home, "opticks", "wordpiece")
	if err != nil {
		t.Fatal(err)
	}
	if f.ValidBytes != len(text)-cut || f.ValidTokens >= f.ValidBytes/3 {
		t.Errorf("valid split: %d tokens of %d bytes, want %d bytes at 3 or more a token", f.ValidTokens, f.ValidBytes, len(text)-cut)
	}
	for order, bits := range f.BitsPerToken {
		if want := bits * float64(f.ValidTokens) / float64(f.ValidBytes); math.Abs(f.BitsPerByte[order]-want) > 1e-12 {
			t.Errorf("order %d: %g bits per byte, want %g", order+1, f.BitsPerByte[order], want)
		}
	}
	if !(f.BitsPerToken[3] < f.BitsPerToken[1] && f.BitsPerToken[1] < f.BitsPerToken[0]) {
		t.Errorf("bits per token by order %v: want a longer context to help", f.BitsPerToken)
	}
	bytes, err := TokenBaselines(home, "opticks", "byte")
	if err != nil || !slices.EqualFunc(bytes.BitsPerByte, bytes.BitsPerToken, func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }) {
		t.Errorf("byte tokenizer: bits per byte %v, per token %v (%v); want equal", bytes.BitsPerByte, bytes.BitsPerToken, err)
	}
}
