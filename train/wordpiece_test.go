package train

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

// A model trained on wordpiece tokens reopens with its corpus's vocabulary,
// and its evaluation reports bits per token and per byte of the split's text.
func TestWordPieceRun(t *testing.T) {
	r, err := Run(context.Background(), tiny(t, map[string]string{"tokenizer": "wordpiece", "steps": "4", "eval_every": "0"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(r.Checkpoint, "go")
	if err != nil {
		t.Fatal(err)
	}
	tok := l.Tokenizer()
	if tok.Name() != "wordpiece" || tok.VocabSize() != l.Model().Config.Vocab {
		t.Fatalf("reopened with tokenizer %s of %d tokens, model vocab %d", tok.Name(), tok.VocabSize(), l.Model().Config.Vocab)
	}
	if _, err := os.Stat(filepath.Join(home(t), "data", "opticks", "wordpiece-8192.json")); err != nil {
		t.Errorf("the vocabulary is not kept beside the corpus: %v", err)
	}
	e, err := l.Evaluate(context.Background(), EvalOptions{Batches: 2})
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := data.LoadCorpus(home(t), "opticks")
	if err != nil {
		t.Fatal(err)
	}
	tokens := len(tok.Encode(corpus.Valid))
	if tokens >= len(corpus.Valid)/3 {
		t.Errorf("%d tokens for %d bytes: want words, not letters", tokens, len(corpus.Valid))
	}
	wantBPB := e.Loss / math.Ln2 * float64(tokens) / float64(len(corpus.Valid))
	if e.BPC != 0 || math.Abs(e.BitsPerToken-e.Loss/math.Ln2) > 1e-9 || math.Abs(e.BPB-wantBPB) > 1e-9 {
		t.Errorf("bpc %g, bits/token %g, bits/byte %g; want 0, %g, %g", e.BPC, e.BitsPerToken, e.BPB, e.Loss/math.Ln2, wantBPB)
	}
	if r.ValidBPB != e.BPB || r.ValidBPC != 0 {
		t.Errorf("the run reports valid bits/byte %g (bpc %g), its checkpoint evaluates to %g", r.ValidBPB, r.ValidBPC, e.BPB)
	}
	s, err := l.Sample(context.Background(), SampleOptions{Prompt: "Light is", Tokens: 3})
	if err != nil || s.Tokens != 3 {
		t.Errorf("sample %+v (%v): want 3 tokens", s, err)
	}
	// The probes fill a window before a short text as sample does: wordpiece
	// has no token for the newline.
	if ids, err := l.InputTokens("Light is"); err != nil || len(ids) != l.Model().Config.SeqLen {
		t.Errorf("probe input %v (%v): want a window of %d", ids, err, l.Model().Config.SeqLen)
	}
}

// A sample goes on from its prompt with the space wordpiece's Decode puts
// between words.
func TestContinuationSpacesWords(t *testing.T) {
	tok, err := data.TrainWordPiece(strings.Repeat("hello, help. ", 30), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prompt, generated, want string }{
		{"hello", "help", " help"}, {"hello", ".", "."}, {"hello", "", ""},
	} {
		if got := continuation(tok, tok.Encode(c.prompt), tok.Encode(c.generated)); got != c.want {
			t.Errorf("%q continued by %q: %q, want %q", c.prompt, c.generated, got, c.want)
		}
	}
	bytes, _ := data.NewTokenizer("byte")
	if got := continuation(bytes, bytes.Encode("a"), bytes.Encode("b c")); got != "b c" {
		t.Errorf("bytes: %q, want %q", got, "b c")
	}
}
