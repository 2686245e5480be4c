package data

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer turns text into token ids and back.
type Tokenizer interface {
	Name() string
	VocabSize() int
	Encode(text string) []int32
	Decode(ids []int32) string
}

// TokenizerNames lists the tokenizers: NewTokenizer's and CorpusTokenizer's.
var TokenizerNames = []string{"byte", "gpt2", "wordpiece"}

// NewTokenizer returns the tokenizer called name: "byte" (the 256 byte values, lossless on any
// input) or "gpt2" (GPT-2's r50k BPE, compiled into the binary, no network needed). "wordpiece" is
// trained on a corpus: CorpusTokenizer gives it.
func NewTokenizer(name string) (Tokenizer, error) {
	switch name {
	case "byte":
		return byteTokenizer{}, nil
	case "gpt2":
		codec, err := tokenizer.Get(tokenizer.R50kBase)
		if err != nil {
			return nil, fmt.Errorf("gpt2 tokenizer: %w", err)
		}
		return &bpeTokenizer{codec: codec}, nil
	case "wordpiece":
		return nil, fmt.Errorf("tokenizer wordpiece is trained on a text corpus and needs one (data=%s); elsewhere use byte or gpt2",
			strings.Join(CorpusNames(), "|"))
	}
	return nil, fmt.Errorf("unknown tokenizer %q (valid: %s)", name, strings.Join(TokenizerNames, ", "))
}

type byteTokenizer struct{}

func (byteTokenizer) Name() string   { return "byte" }
func (byteTokenizer) VocabSize() int { return 256 }

func (byteTokenizer) Encode(text string) []int32 {
	ids := make([]int32, len(text))
	for i := 0; i < len(text); i++ {
		ids[i] = int32(text[i])
	}
	return ids
}

// Decode maps each id to its byte; ids outside 0..255 (which no Encode produces) become U+FFFD.
func (byteTokenizer) Decode(ids []int32) string {
	var sb strings.Builder
	sb.Grow(len(ids))
	for _, id := range ids {
		if id < 0 || id > 255 {
			sb.WriteRune(utf8.RuneError)
			continue
		}
		sb.WriteByte(byte(id))
	}
	return sb.String()
}

type bpeTokenizer struct {
	codec tokenizer.Codec
}

func (t *bpeTokenizer) Name() string { return "gpt2" }

// endOfText is GPT-2's one special token, the last id of its vocabulary.
const endOfText = 50256

// VocabSize is r50k's 50,256 byte-pair tokens plus <|endoftext|>.
func (t *bpeTokenizer) VocabSize() int { return endOfText + 1 }

func (t *bpeTokenizer) Encode(text string) []int32 {
	ids, _, err := t.codec.Encode(text)
	if err != nil { // only possible in the strict UTF-8 mode, which this codec does not use
		panic(fmt.Sprintf("gpt2 tokenizer: %v", err))
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// Decode returns the text of ids; an id outside the vocabulary becomes U+FFFD rather than failing the
// whole sequence (a sampled model may produce one).
func (t *bpeTokenizer) Decode(ids []int32) string {
	var sb strings.Builder
	run := make([]uint, 0, len(ids))
	flush := func() {
		if len(run) > 0 {
			s, _ := t.codec.Decode(run)
			sb.WriteString(s)
			run = run[:0]
		}
	}
	for _, id := range ids {
		switch {
		case id == endOfText:
			flush()
			sb.WriteString("<|endoftext|>")
			continue
		case id < 0 || id > endOfText:
			flush()
			sb.WriteRune(utf8.RuneError)
			continue
		}
		run = append(run, uint(id))
	}
	flush()
	return sb.String()
}
