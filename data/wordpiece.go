package data

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WordPieceVocab is the size of the vocabulary a corpus's WordPiece tokenizer
// is trained to: the ECP authors' experiments are at token level (BERT's
// WordPiece), and at 8,192 tokens trained on a stand-in's train split small
// models learn in minutes (about 4 characters a token).
const WordPieceVocab = 8192

// Training thresholds. A character seen fewer than wordPieceMinChar times is
// left out of the alphabet, so a word that holds one encodes as UNK (BERT's
// vocabulary likewise lacks most of Unicode); a pair seen once is a rare
// word's own and is not merged.
const (
	wordPieceMinChar = 20
	wordPieceMinPair = 2
)

// unknownToken is the id of UNK, which stands for a word with a character
// outside the vocabulary.
const unknownToken = 0

// continuation prefixes a piece that goes on a word rather than starting one.
const continuation = "##"

// WordPiece is a vocabulary of word pieces and BERT's tokenizer over it.
// TrainWordPiece trains one; CorpusTokenizer gives a corpus's own. No
// maintained Go library trains a WordPiece or BPE vocabulary (tiktoken-go only
// encodes), so this is ecpi's own code.
type WordPiece struct {
	pieces  []string         // by id; id 0 is [UNK]
	initial map[string]int32 // pieces that start a word
	inner   map[string]int32 // pieces that go on a word, without their "##"
	longest int              // bytes of the longest piece (without "##")
}

// Name is "wordpiece".
func (w *WordPiece) Name() string { return "wordpiece" }

// VocabSize is the number of pieces, UNK included: WordPieceVocab for a
// corpus's tokenizer unless its train split ran out of pairs to merge first.
func (w *WordPiece) VocabSize() int { return len(w.pieces) }

// words splits text as BERT's basic tokenizer does (cased): at white space
// (and control characters), and every punctuation or symbol character a word
// of its own.
func words(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text {
			separate := unicode.IsSpace(r) || unicode.IsControl(r)
			if !separate && !isPunctuation(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && !yield(text[start:i]) {
				return
			}
			start = -1
			if !separate && !yield(text[i:i+utf8.RuneLen(r)]) {
				return
			}
		}
		if start >= 0 {
			yield(text[start:])
		}
	}
}

// isPunctuation is BERT's rule: every ASCII character that is neither a
// letter, a digit nor a space, and Unicode's punctuation; symbols (€, ±, →)
// too.
func isPunctuation(r rune) bool {
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7f && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// Encode splits text into words and each word into the longest pieces of the
// vocabulary, first to last (WordPiece's greedy longest match); a word with no
// such split is one UNK. Each distinct word is split once.
func (w *WordPiece) Encode(text string) []int32 {
	split := map[string][]int32{}
	ids := make([]int32, 0, len(text)/4)
	for word := range words(text) {
		pieces, ok := split[word]
		if !ok {
			pieces = w.encodeWord(word)
			split[word] = pieces
		}
		ids = append(ids, pieces...)
	}
	return ids
}

func (w *WordPiece) encodeWord(word string) []int32 {
	var ids []int32
	for start := 0; start < len(word); {
		pieces := w.initial
		if start > 0 {
			pieces = w.inner
		}
		end, id := min(len(word), start+w.longest), int32(-1)
		for ; end > start; end-- {
			if end < len(word) && !utf8.RuneStart(word[end]) {
				continue // not at a character boundary
			}
			if i, ok := pieces[word[start:end]]; ok {
				id = i
				break
			}
		}
		if id < 0 {
			return []int32{unknownToken}
		}
		ids = append(ids, id)
		start = end
	}
	return ids
}

// Decode joins the pieces: a "##" piece to the one before, words with a space
// between them except before punctuation. Lossy: the text's own white space
// is gone (line breaks included), and "a (b)" comes back as "a(b)".
func (w *WordPiece) Decode(ids []int32) string {
	var sb strings.Builder
	for i, id := range ids {
		if id < 0 || int(id) >= len(w.pieces) {
			sb.WriteRune(utf8.RuneError)
			continue
		}
		piece := w.pieces[id]
		if inner, ok := strings.CutPrefix(piece, continuation); ok {
			sb.WriteString(inner)
			continue
		}
		if r, size := utf8.DecodeRuneInString(piece); i > 0 && !(size == len(piece) && isPunctuation(r)) {
			sb.WriteByte(' ')
		}
		sb.WriteString(piece)
	}
	return sb.String()
}

// newWordPiece indexes a vocabulary whose id 0 is UNK.
func newWordPiece(pieces []string) (*WordPiece, error) {
	if len(pieces) == 0 || pieces[unknownToken] != "[UNK]" {
		return nil, fmt.Errorf("a WordPiece vocabulary starts with [UNK]")
	}
	w := &WordPiece{pieces: pieces, initial: map[string]int32{}, inner: map[string]int32{}}
	for id, p := range pieces[1:] {
		inner, ok := strings.CutPrefix(p, continuation)
		if ok {
			w.inner[inner] = int32(id + 1)
		} else {
			w.initial[p] = int32(id + 1)
		}
		w.longest = max(w.longest, len(inner))
	}
	return w, nil
}

// wordPieceFile is a corpus's vocabulary as kept beside it.
type wordPieceFile struct {
	Corpus string   `json:"corpus"`
	Train  uint64   `json:"train_fnv64a"` // the train split it was trained on
	Pieces []string `json:"pieces"`       // by id
}

// CorpusTokenizer returns the tokenizer called name for a corpus: for
// "wordpiece" the corpus's own vocabulary of WordPieceVocab pieces, trained on
// its train split the first time and kept in <corpus dir>/wordpiece-8192.json
// (trained again if the split has changed); any other name is NewTokenizer's.
// Every command that tokenizes a corpus gets its tokenizer here, so a model
// trained on it decodes with the vocabulary it learned.
func CorpusTokenizer(home, corpus, name string) (Tokenizer, error) {
	if name != "wordpiece" {
		return NewTokenizer(name)
	}
	c, err := LoadCorpus(home, corpus)
	if err != nil {
		return nil, err
	}
	return corpusWordPiece(home, c)
}

func corpusWordPiece(home string, c *Corpus) (*WordPiece, error) {
	path := filepath.Join(corpusDir(home, c.Name), fmt.Sprintf("wordpiece-%d.json", WordPieceVocab))
	train := textHash(c.Train)
	var f wordPieceFile
	if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &f) == nil && f.Train == train {
		w, err := newWordPiece(f.Pieces)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (delete it to train the vocabulary again)", path, err)
		}
		return w, nil
	}
	w, err := TrainWordPiece(c.Train, WordPieceVocab)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", c.Name, err)
	}
	raw, err := json.Marshal(wordPieceFile{Corpus: c.Name, Train: train, Pieces: w.pieces})
	if err != nil {
		return nil, err
	}
	return w, writeFileAtomic(path, raw)
}

// textHash identifies a text, so what is computed from it can be kept.
func textHash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}
