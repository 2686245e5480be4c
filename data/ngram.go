package data

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// NgramBits is the cross-entropy, in bits per token, of a token n-gram model
// with add-½ smoothing counted on train, measured on eval: the trivial
// baselines every language-model table reports beside the models (order 1
// uses the frequencies of tokens alone, order 2 the previous token, ...). A
// model that does not beat the bigram does not use its context yet.
//
// Tokens are the ids of a vocabulary of vocab tokens; contexts are counted in
// a hash map, so the order is limited by memory, not by vocab^order.
func NgramBits(train, eval []int32, order, vocab int) (float64, error) {
	if order < 1 {
		return 0, fmt.Errorf("n-gram order %d must be at least 1", order)
	}
	if len(eval) <= order {
		return 0, fmt.Errorf("evaluation text of %d tokens is too short for order %d", len(eval), order)
	}
	type key struct {
		context uint64
		next    int32
	}
	pairs := map[key]float64{}
	contexts := map[uint64]float64{}
	for i := order - 1; i < len(train); i++ {
		c := contextKey(train[i-order+1:i], vocab)
		pairs[key{c, train[i]}]++
		contexts[c]++
	}
	const alpha = 0.5
	var bits float64
	for i := order - 1; i < len(eval); i++ {
		c := contextKey(eval[i-order+1:i], vocab)
		p := (pairs[key{c, eval[i]}] + alpha) / (contexts[c] + alpha*float64(vocab))
		bits -= math.Log2(p)
	}
	return bits / float64(len(eval)-order+1), nil
}

// contextKey packs a context of tokens into one hash key (FNV-1a over the ids).
func contextKey(context []int32, vocab int) uint64 {
	h := uint64(14695981039346656037)
	for _, t := range context {
		h ^= uint64(t) + uint64(vocab)
		h *= 1099511628211
	}
	return h
}

// Baselines are the byte n-gram models' bits per byte on a corpus's
// validation split (orders 1 to 4), counted on its train split.
type Baselines struct {
	Corpus string    `json:"corpus"`
	Bits   []float64 `json:"bits_per_byte"` // order 1 (unigram) first
}

// NgramBaselines computes (or reads back) a prepared corpus's baselines; the
// counts take seconds on the larger corpora, so they are kept beside it.
func NgramBaselines(home, name string) (Baselines, error) {
	path := filepath.Join(corpusDir(home, name), "ngram-baselines.json")
	var b Baselines
	if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &b) == nil && len(b.Bits) == 4 {
		return b, nil
	}
	corpus, err := LoadCorpus(home, name)
	if err != nil {
		return b, err
	}
	tok, _ := NewTokenizer("byte")
	train, err := corpus.Tokens(tok, "train")
	if err != nil {
		return b, err
	}
	valid, err := corpus.Tokens(tok, "valid")
	if err != nil {
		return b, err
	}
	b = Baselines{Corpus: name}
	for order := 1; order <= 4; order++ {
		bits, err := NgramBits(train, valid, order, tok.VocabSize())
		if err != nil {
			return b, err
		}
		b.Bits = append(b.Bits, bits)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return b, err
	}
	return b, writeFileAtomic(path, raw)
}
