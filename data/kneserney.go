package data

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
)

// KneserNeyBits is the cross-entropy, in bits per token, of an interpolated
// modified Kneser-Ney n-gram model (Chen & Goodman 1998) counted on train,
// measured on eval: the floor a token-level language model must beat, where
// add-½ (NgramBits) spreads too much mass over a large vocabulary.
//
// Each order has three discounts, D1, D2 and D3+, from its count-of-counts;
// the highest order counts n-grams, the lower ones continuation counts (the
// distinct tokens seen before them); the unigram is interpolated with the
// uniform distribution over vocab, so no token has probability 0. A context
// never seen in train backs off to the order below it whole.
//
// The order's tokens are packed into one 64-bit key, so order times the bits
// of a token id (13 at 8,192 tokens) may not pass 64.
func KneserNeyBits(train, eval []int32, order, vocab int) (float64, error) {
	if len(eval) <= order {
		return 0, fmt.Errorf("evaluation text of %d tokens is too short for order %d", len(eval), order)
	}
	m, err := newKneserNey(train, order, vocab)
	if err != nil {
		return 0, err
	}
	var total float64
	for i := order - 1; i < len(eval); i++ {
		total -= math.Log2(m.prob(eval[i-order+1:i], eval[i]))
	}
	return total / float64(len(eval)-order+1), nil
}

// kneserNey is the model: one level per order, the unigram first.
type kneserNey struct {
	vocab  int
	shift  uint // bits of a token id in a packed key
	levels []knLevel
}

type knLevel struct {
	counts    map[uint64]int64     // n-gram -> its count (highest order) or continuation count
	contexts  map[uint64]knContext // context (the n-gram less its last token) -> what follows it
	discounts [4]float64           // by count: 1, 2, 3 or more (index 0 unused)
}

// knContext sums a context's followers: their counts in all, and how many
// have count 1, 2 and 3 or more.
type knContext struct {
	total     int64
	followers [4]int64
}

func newKneserNey(train []int32, order, vocab int) (*kneserNey, error) {
	shift := uint(max(1, bits.Len(uint(vocab-1))))
	if order < 1 || uint(order)*shift > 64 {
		return nil, fmt.Errorf("Kneser-Ney order %d must be from 1 to %d at a vocabulary of %d tokens (%d bits each in a 64-bit key)",
			order, 64/shift, vocab, shift)
	}
	if len(train) < order {
		return nil, fmt.Errorf("training text of %d tokens is too short for order %d", len(train), order)
	}
	m := &kneserNey{vocab: vocab, shift: shift, levels: make([]knLevel, order)}
	top := map[uint64]int64{}
	for i := order; i <= len(train); i++ {
		top[m.pack(train[i-order:i])]++
	}
	m.levels[order-1].counts = top
	for k := order - 1; k >= 1; k-- { // a k-gram's continuation count: the (k+1)-grams it ends
		lower, suffix := map[uint64]int64{}, uint64(1)<<(uint(k)*shift)-1
		for key := range m.levels[k].counts {
			lower[key&suffix]++
		}
		m.levels[k-1].counts = lower
	}
	for k := range m.levels {
		m.levels[k].summarize(shift)
	}
	return m, nil
}

// pack makes a key of tokens, the last in the lowest bits.
func (m *kneserNey) pack(tokens []int32) uint64 {
	var key uint64
	for _, t := range tokens {
		key = key<<m.shift | uint64(t)
	}
	return key
}

// summarize sums each context's followers and sets the discounts from the
// count-of-counts n1..n4: Y = n1/(n1+2n2), Dc = c - (c+1)·Y·n(c+1)/nc.
func (l *knLevel) summarize(shift uint) {
	var countOfCounts [5]float64
	l.contexts = map[uint64]knContext{}
	for key, c := range l.counts {
		ctx := l.contexts[key>>shift]
		ctx.total += c
		ctx.followers[min(c, 3)]++
		l.contexts[key>>shift] = ctx
		if c <= 4 {
			countOfCounts[c]++
		}
	}
	n := countOfCounts
	y := n[1] / (n[1] + 2*n[2])
	for c := 1; c <= 3; c++ {
		d := float64(c) - float64(c+1)*y*n[c+1]/n[c]
		if !(d > 0 && d <= float64(c)) { // too few counts for the estimate (a tiny text)
			d = 0.5
		}
		l.discounts[c] = d
	}
}

// prob is the probability of next after context (the order's last tokens
// before it, order-1 of them).
func (m *kneserNey) prob(context []int32, next int32) float64 {
	p := 1 / float64(m.vocab)
	for k, l := range m.levels {
		ctx := m.pack(context[len(context)-k:])
		c, ok := l.contexts[ctx]
		if !ok {
			continue
		}
		count := l.counts[ctx<<m.shift|uint64(next)]
		var kept float64
		if count > 0 {
			kept = float64(count) - l.discounts[min(count, 3)]
		}
		var backoff float64
		for i := 1; i <= 3; i++ {
			backoff += l.discounts[i] * float64(c.followers[i])
		}
		p = (kept + backoff*p) / float64(c.total)
	}
	return p
}

// TokenFloors are a corpus's Kneser-Ney floors at one tokenizer: orders 1 to
// 4 counted on the train split, measured on the validation split.
type TokenFloors struct {
	Corpus       string    `json:"corpus"`
	Tokenizer    string    `json:"tokenizer"`
	Vocab        int       `json:"vocab"`
	Train        uint64    `json:"train_fnv64a"` // the train split they were counted on
	ValidTokens  int       `json:"valid_tokens"`
	ValidBytes   int       `json:"valid_bytes"`
	BitsPerToken []float64 `json:"bits_per_token"` // order 1 first
	BitsPerByte  []float64 `json:"bits_per_byte"`
}

// TokenBaselines computes (or reads back) a prepared corpus's Kneser-Ney
// floors with the tokenizer called tokenizer (CorpusTokenizer's); they take
// seconds to count, so they are kept beside the corpus.
func TokenBaselines(home, corpus, tokenizer string) (TokenFloors, error) {
	c, err := LoadCorpus(home, corpus)
	if err != nil {
		return TokenFloors{}, err
	}
	path := filepath.Join(corpusDir(home, corpus), "kneser-ney-"+tokenizer+".json")
	f := TokenFloors{Corpus: corpus, Tokenizer: tokenizer, Train: textHash(c.Train), ValidBytes: len(c.Valid)}
	var kept TokenFloors
	if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &kept) == nil && kept.Train == f.Train && len(kept.BitsPerToken) == 4 {
		return kept, nil
	}
	tok, err := CorpusTokenizer(home, corpus, tokenizer)
	if err != nil {
		return f, err
	}
	train, valid := tok.Encode(c.Train), tok.Encode(c.Valid)
	f.Vocab, f.ValidTokens = tok.VocabSize(), len(valid)
	for order := 1; order <= 4; order++ {
		bits, err := KneserNeyBits(train, valid, order, f.Vocab)
		if err != nil {
			return f, fmt.Errorf("corpus %s, tokenizer %s: %w", corpus, tokenizer, err)
		}
		f.BitsPerToken = append(f.BitsPerToken, bits)
		f.BitsPerByte = append(f.BitsPerByte, BitsPerByte(bits, len(valid), len(c.Valid)))
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return f, err
	}
	return f, writeFileAtomic(path, raw)
}

// BitsPerByte turns bits per token into bits per byte of the text the tokens
// were encoded from (its UTF-8 bytes, white space included: what a lossy
// tokenizer drops is still text the model had to account for).
func BitsPerByte(bitsPerToken float64, tokens, textBytes int) float64 {
	return bitsPerToken * float64(tokens) / float64(textBytes)
}
