package data

import (
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// TrainWordPiece learns a vocabulary of at most size pieces from text.
//
// It starts from UNK and the characters seen at least wordPieceMinChar
// times, each as a word's first piece and as a "##" piece, then repeatedly
// merges the adjacent pair of pieces (a, b) whose merge most raises the
// likelihood of the training words under a unigram model of pieces —
// WordPiece's rule (Schuster & Nakajima 2012) — scored count(ab)·log(count(ab)·N
// / (count(a)·count(b))), among pairs seen at least wordPieceMinPair times,
// until the vocabulary has size pieces or no pair is left. The ratio
// count(ab)/(count(a)·count(b)) often quoted as WordPiece's score is the log's
// argument alone: it ranks pairs of rare pieces first, and on wiki gave 2.9
// bytes a token where this gives 4.1.
//
// Words are counted once each with their frequency, and pair counts are kept
// up to date through an index from each pair to the words that hold it, so a
// merge touches only the words it changes (wiki's 18 MB train in about a
// second). Ties go to the pair of lower ids, so training is deterministic.
func TrainWordPiece(text string, size int) (*WordPiece, error) {
	t := newPieceTrainer(text)
	if len(t.pieces) > size {
		return nil, fmt.Errorf("vocabulary size %d is below the %d pieces of the alphabet (each character seen at least %d times, twice, and [UNK])",
			size, len(t.pieces), wordPieceMinChar)
	}
	for len(t.pieces) < size && t.mergeBest() {
	}
	return newWordPiece(t.pieces)
}

// pieceTrainer holds the training words as sequences of piece ids and the
// counts WordPiece's score needs.
type pieceTrainer struct {
	pieces     []string
	ids        map[string]int32
	words      [][]int32        // distinct training words, spelled in pieces
	freq       []int64          // each word's count in the text
	pieceCount []int64          // occurrences of each piece in the text
	pairCount  map[pair]int64   // occurrences of each adjacent pair
	pairWords  map[pair][]int32 // the words a pair was seen in (some may have lost it since)
	pairsOf    [][]pair         // the pairs each piece was seen in (some may be gone)
	queue      pairQueue
	total      float64 // pieces in the words before any merge
}

type pair struct{ a, b int32 }

func newPieceTrainer(text string) *pieceTrainer {
	wordFreq := map[string]int64{}
	for w := range words(text) {
		wordFreq[w]++
	}
	charFreq := map[rune]int64{}
	for w, n := range wordFreq {
		for _, r := range w {
			charFreq[r] += n
		}
	}
	t := &pieceTrainer{pieces: []string{"[UNK]"}, ids: map[string]int32{}, pairCount: map[pair]int64{}, pairWords: map[pair][]int32{}}
	for _, r := range slices.Sorted(maps.Keys(charFreq)) {
		if charFreq[r] >= wordPieceMinChar {
			t.add(string(r))
			t.add(continuation + string(r))
		}
	}
	t.pieceCount = make([]int64, len(t.pieces))
	t.pairsOf = make([][]pair, len(t.pieces))
	for _, w := range slices.Sorted(maps.Keys(wordFreq)) {
		if spelled, ok := t.spell(w); ok {
			t.words, t.freq = append(t.words, spelled), append(t.freq, wordFreq[w])
			t.count(int32(len(t.words)-1), +1)
			t.index(int32(len(t.words)-1), -1)
		}
	}
	for _, n := range t.pieceCount {
		t.total += float64(n)
	}
	t.requeue()
	return t
}

// add appends a piece to the vocabulary (or finds it: two merges can spell
// the same piece) and returns its id.
func (t *pieceTrainer) add(piece string) int32 {
	if id, ok := t.ids[piece]; ok {
		return id
	}
	id := int32(len(t.pieces))
	t.pieces, t.ids[piece] = append(t.pieces, piece), id
	if t.pieceCount != nil {
		t.pieceCount, t.pairsOf = append(t.pieceCount, 0), append(t.pairsOf, nil)
	}
	return id
}

// spell writes a word in characters; false if one is not in the alphabet.
func (t *pieceTrainer) spell(word string) ([]int32, bool) {
	var ids []int32
	for i, r := range word {
		piece := string(r)
		if i > 0 {
			piece = continuation + piece
		}
		id, ok := t.ids[piece]
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// count adds (sign +1) or removes (-1) word w's pieces and pairs.
func (t *pieceTrainer) count(w int32, sign int64) {
	spelled, n := t.words[w], sign*t.freq[w]
	for i, id := range spelled {
		t.pieceCount[id] += n
		if i == 0 {
			continue
		}
		p := pair{spelled[i-1], id}
		if t.pairCount[p] == 0 {
			t.pairsOf[p.a] = append(t.pairsOf[p.a], p)
			t.pairsOf[p.b] = append(t.pairsOf[p.b], p)
		}
		if t.pairCount[p] += n; t.pairCount[p] == 0 {
			delete(t.pairCount, p)
		}
	}
}

// index records that word w holds its pairs that contain the piece id (every
// pair when id < 0): the others it held before.
func (t *pieceTrainer) index(w int32, id int32) {
	spelled := t.words[w]
	for i := 1; i < len(spelled); i++ {
		if p := (pair{spelled[i-1], spelled[i]}); id < 0 || p.a == id || p.b == id {
			t.pairWords[p] = append(t.pairWords[p], w)
		}
	}
}

// score is the gain in log likelihood of the training words under a unigram
// model of pieces when the pair is merged: count(ab)·log(count(ab)·N /
// (count(a)·count(b))), N the characters of the words (held fixed, so a
// merge changes only the scores of pairs with a piece it changed).
func (t *pieceTrainer) score(p pair) float64 {
	ab := float64(t.pairCount[p])
	return ab * math.Log(ab*t.total/(float64(t.pieceCount[p.a])*float64(t.pieceCount[p.b])))
}

// mergeBest merges the best pair into a new piece; false if none is left.
func (t *pieceTrainer) mergeBest() bool {
	for t.queue.Len() > 0 {
		best := heap.Pop(&t.queue).(scored)
		if t.pairCount[best.pair] < wordPieceMinPair || t.score(best.pair) != best.score {
			continue // stale: a fresher entry was queued when its score changed
		}
		t.merge(best.pair)
		return true
	}
	return false
}

func (t *pieceTrainer) merge(p pair) {
	merged := t.add(t.pieces[p.a] + strings.TrimPrefix(t.pieces[p.b], continuation))
	for _, w := range t.pairWords[p] {
		joined := joinPairs(t.words[w], p, merged)
		if len(joined) == len(t.words[w]) {
			continue // the word lost the pair to an earlier merge
		}
		t.count(w, -1)
		t.words[w] = joined
		t.count(w, +1)
		t.index(w, merged)
	}
	delete(t.pairWords, p)
	// Only pairs with a piece whose count changed have a new score.
	for _, id := range []int32{p.a, p.b, merged} {
		t.pairsOf[id] = livePairs(t.pairsOf[id], t.pairCount)
		for _, q := range t.pairsOf[id] {
			heap.Push(&t.queue, scored{q, t.score(q)})
		}
	}
	if len(t.queue) > 4*len(t.pairCount)+1<<20 {
		t.requeue()
	}
}

// livePairs drops from pairs those no word holds any more, and repeats (a
// pair that vanished and came back is listed twice).
func livePairs(pairs []pair, count map[pair]int64) []pair {
	pairs = slices.DeleteFunc(pairs, func(q pair) bool { return count[q] == 0 })
	slices.SortFunc(pairs, func(x, y pair) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	return slices.Compact(pairs)
}

// requeue rebuilds the queue from the live pairs when stale entries pile up.
func (t *pieceTrainer) requeue() {
	t.queue = t.queue[:0]
	for p := range t.pairCount {
		t.queue = append(t.queue, scored{p, t.score(p)})
	}
	heap.Init(&t.queue)
}

// joinPairs replaces each occurrence of p in spelled, left to right, by merged.
func joinPairs(spelled []int32, p pair, merged int32) []int32 {
	out := make([]int32, 0, len(spelled))
	for i := 0; i < len(spelled); i++ {
		if i+1 < len(spelled) && spelled[i] == p.a && spelled[i+1] == p.b {
			out = append(out, merged)
			i++
			continue
		}
		out = append(out, spelled[i])
	}
	return out
}

// scored is a queued pair with its score when queued.
type scored struct {
	pair
	score float64
}

// pairQueue is a max-heap of scores, ties to the lower pair.
type pairQueue []scored

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	if q[i].a != q[j].a {
		return q[i].a < q[j].a
	}
	return q[i].b < q[j].b
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(scored)) }
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
