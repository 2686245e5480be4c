package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ecpi-dev/ecpi/data"
)

// SampleOptions controls generation.
type SampleOptions struct {
	Prompt      string
	Tokens      int     // tokens to generate
	Temperature float64 // 0: greedy
	TopK        int     // 0: the whole vocabulary
	Seed        uint64
}

// SampleResult is a prompt and its continuation.
type SampleResult struct {
	Prompt     string `json:"prompt"`
	Text       string `json:"text"` // the continuation
	Tokens     int    `json:"tokens"`
	Checkpoint string `json:"checkpoint"`
	Hint       string `json:"hint,omitempty"` // why the text may not read as words yet (ReadabilityHint)
}

// String is the prompt followed by the continuation, made Visible: what
// every front end prints (the JSON form keeps the text as generated).
func (r *SampleResult) String() string { return Visible(r.Prompt + r.Text) }

// Sample continues a prompt with the LM, one token at a time, from softmax(logits/T)
// restricted to the top k. Each new token runs alone against a key/value cache
// (Decoder); when the window of n tokens is full it moves on by n/2 tokens
// (the PerceiverAR family: back to its first latent) and is prefilled again.
func (l *Loaded) Sample(ctx context.Context, o SampleOptions) (*SampleResult, error) {
	tok := l.Tokenizer()
	if tok == nil {
		return nil, errors.New("sample needs a language model; this checkpoint is a classifier")
	}
	if o.Tokens < 1 || o.Temperature < 0 || o.TopK < 0 {
		return nil, fmt.Errorf("sample: tokens=%d must be positive, temperature=%g and top_k=%d not negative", o.Tokens, o.Temperature, o.TopK)
	}
	pad := padToken(tok)
	context := tok.Encode(o.Prompt)
	if len(context) == 0 {
		context = []int32{pad}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x73616d706c65))
	choose := func(logits []float32) int32 { return pick(logits, o.Temperature, o.TopK, rng) }
	if l.decoder == nil {
		var err error
		if l.decoder, err = NewDecoder(l.backend.Backend, l.store, l.model); err != nil {
			return nil, err
		}
	}
	generated, err := decodeTokens(ctx, l.decoder, context, o.Tokens, pad, choose)
	if err != nil {
		return nil, err
	}
	r := &SampleResult{Prompt: o.Prompt, Text: continuation(tok, context, generated), Tokens: len(generated), Checkpoint: l.Dir}
	if text, ok := l.task.(textTask); ok && l.opts.Tokenizer == "byte" {
		_, corpus := text.text()
		r.Hint = ReadabilityHint(l.Manifest, r.Text, corpus)
	}
	return r, nil
}

// padToken is what fills a window before its text: the newline, or id 0
// for a tokenizer of words, which drops white space (UNK is its id 0).
func padToken(tok data.Tokenizer) int32 {
	if ids := tok.Encode("\n"); len(ids) > 0 {
		return ids[0]
	}
	return 0
}

// continuation is the text of generated as it goes on from context: with a
// tokenizer of words, what separates them (wordpiece puts the spaces back).
func continuation(tok data.Tokenizer, context, generated []int32) string {
	before := tok.Decode(context)
	if all := tok.Decode(append(slices.Clip(context), generated...)); strings.HasPrefix(all, before) {
		return all[len(before):]
	}
	return tok.Decode(generated)
}

// readableBPC is about where a byte-level model's samples start to read as
// words; at about 4 bits per character (English letter frequencies alone) a
// model writes letter soup.
const readableBPC = 2.5

// ReadabilityHint says, when a byte-level model still predicts worse than
// readableBPC, what it has learned so far: the steps it trained, its bits per
// character (validation, else train), and the share of the sample's words
// that are words of the corpus it trained on. "" once it predicts better.
func ReadabilityHint(m *Manifest, sample string, corpus *data.Corpus) string {
	bpc := 0.0
	switch {
	case m.Eval != nil && m.Eval.BPC > 0:
		bpc = m.Eval.BPC
	case len(m.Losses) > 0:
		tail := m.Losses[max(0, len(m.Losses)-10):]
		for _, l := range tail {
			bpc += l / math.Ln2 / float64(len(tail))
		}
	}
	if bpc <= readableBPC {
		return ""
	}
	known, total := corpusWords(sample, corpus.Train)
	steps := "steps"
	if m.Step == 1 {
		steps = "step"
	}
	words := fmt.Sprintf("%d of the %d words of %d letters or more in this sample are words of %s", known, total, minWordLetters, corpus.Name)
	if total == 0 {
		words = fmt.Sprintf("this sample has no word of %d letters or more", minWordLetters)
	}
	return fmt.Sprintf("the model has trained %d %s and predicts %.2f bits per character; %s. Samples read as words "+
		"below about %.1f bits per character: train longer (`resume steps=...` continues this run).",
		m.Step, steps, bpc, words, readableBPC)
}

// minWordLetters: shorter runs of letters (a, of, the) occur by chance in letter soup.
const minWordLetters = 4

// corpusWords counts the words of text (runs of at least minWordLetters
// letters, any case) and those of them that occur in the corpus text.
func corpusWords(text, corpus string) (known, total int) {
	words := func(s string) []string {
		return slices.DeleteFunc(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }),
			func(w string) bool { return utf8.RuneCountInString(w) < minWordLetters })
	}
	sampled := words(text)
	if len(sampled) == 0 {
		return 0, 0
	}
	vocabulary := map[string]bool{}
	for _, w := range words(corpus) {
		vocabulary[w] = true
	}
	for _, w := range sampled {
		if vocabulary[w] {
			known++
		}
	}
	return known, len(sampled)
}

// sampleWindow returns the n tokens fed to the model and the position whose
// logits predict the next token.
func sampleWindow(context []int32, n, start int, pad int32) ([]int32, int) {
	if len(context) >= n {
		return slices.Clone(context[len(context)-n:]), n - 1
	}
	window := make([]int32, n)
	if start == 0 {
		copy(window, context)
		for i := len(context); i < n; i++ {
			window[i] = pad
		}
		return window, len(context) - 1
	}
	for i := range n - len(context) {
		window[i] = pad
	}
	copy(window[n-len(context):], context)
	return window, n - 1
}

// pick draws a token from logits at temperature t among the k most likely.
func pick(logits []float32, t float64, k int, rng *rand.Rand) int32 {
	order := make([]int, len(logits))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	if t == 0 {
		return int32(order[0])
	}
	if k > 0 && k < len(order) {
		order = order[:k]
	}
	weights := make([]float64, len(order))
	var total float64
	for i, id := range order {
		weights[i] = math.Exp((float64(logits[id]) - float64(logits[order[0]])) / t)
		total += weights[i]
	}
	r := rng.Float64() * total
	for i, w := range weights {
		if r -= w; r < 0 {
			return int32(order[i])
		}
	}
	return int32(order[len(order)-1])
}
