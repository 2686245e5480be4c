package data

import (
	"fmt"
	"math/rand/v2"
)

// Batches are plain Go slices, flattened row-major with their shape alongside, so the training
// side can wrap them in tensors without this package knowing about GoMLX.
//
// Every random batcher draws batch number k from a generator seeded by (seed, k) alone. Its whole
// state is therefore the pair BatchState{Seed, Step}: a resumed run that restores it sees exactly
// the batches the interrupted run would have seen.

// BatchState is the serialisable position of a batcher.
type BatchState struct {
	Seed uint64 `json:"seed"`
	Step int64  `json:"step"`
}

func stepRNG(seed uint64, step int64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(step)))
}

// LMBatch is a language-modelling batch: Inputs and Targets are [Batch, SeqLen], Targets shifted by
// one token.
type LMBatch struct {
	Inputs, Targets []int32
	Batch, SeqLen   int
}

// LMBatches draws windows of SeqLen+1 tokens at seeded random positions of a token stream.
type LMBatches struct {
	tokens        []int32
	batch, seqLen int
	state         BatchState
}

// NewLMBatches returns a batcher over tokens; it fails when the stream is shorter than one window.
func NewLMBatches(tokens []int32, batchSize, seqLen int, seed uint64) (*LMBatches, error) {
	if batchSize < 1 || seqLen < 1 {
		return nil, fmt.Errorf("batch size %d and sequence length %d must be positive", batchSize, seqLen)
	}
	if len(tokens) < seqLen+1 {
		return nil, fmt.Errorf("token stream of %d tokens is shorter than one window of sequence length %d + 1", len(tokens), seqLen)
	}
	return &LMBatches{tokens: tokens, batch: batchSize, seqLen: seqLen, state: BatchState{Seed: seed}}, nil
}

// Next returns the batch of the current step and advances.
func (b *LMBatches) Next() LMBatch {
	rng := stepRNG(b.state.Seed, b.state.Step)
	b.state.Step++
	out := LMBatch{Batch: b.batch, SeqLen: b.seqLen,
		Inputs: make([]int32, b.batch*b.seqLen), Targets: make([]int32, b.batch*b.seqLen)}
	for i := range b.batch {
		start := rng.IntN(len(b.tokens) - b.seqLen)
		copy(out.Inputs[i*b.seqLen:], b.tokens[start:start+b.seqLen])
		copy(out.Targets[i*b.seqLen:], b.tokens[start+1:start+1+b.seqLen])
	}
	return out
}

// State returns the batcher's position; Restore returns to one.
func (b *LMBatches) State() BatchState    { return b.state }
func (b *LMBatches) Restore(s BatchState) { b.state = s }

// EvalWindow is one window of the sequential evaluation protocol. Inputs and Targets (SeqLen each)
// are views into the token stream; only Targets[FirstCounted:] are scored, the earlier positions
// are context already scored by the previous window.
type EvalWindow struct {
	Start        int // stream index of Inputs[0]
	Inputs       []int32
	Targets      []int32
	FirstCounted int
}

// EvalWindows cuts tokens into windows of seqLen+1 at stride seqLen/2, the ECP paper's protocol: each
// target after the first window is predicted with at least seqLen/2 tokens of context, and every
// target position of the stream is counted exactly once. The last window is aligned to the end of
// the stream.
func EvalWindows(tokens []int32, seqLen int) ([]EvalWindow, error) {
	if seqLen < 2 {
		return nil, fmt.Errorf("sequence length %d must be at least 2 for stride seqLen/2", seqLen)
	}
	if len(tokens) < seqLen+1 {
		return nil, fmt.Errorf("token stream of %d tokens is shorter than one window of sequence length %d + 1", len(tokens), seqLen)
	}
	stride, last := seqLen/2, len(tokens)-seqLen-1
	var ws []EvalWindow
	scoredUpTo := 0 // targets at stream positions <= scoredUpTo are counted already
	for start := 0; ; start += stride {
		start = min(start, last)
		w := EvalWindow{Start: start, Inputs: tokens[start : start+seqLen], Targets: tokens[start+1 : start+seqLen+1]}
		if len(ws) > 0 {
			w.FirstCounted = scoredUpTo - start // target j sits at stream position start+1+j
		}
		ws = append(ws, w)
		scoredUpTo = start + seqLen
		if start == last {
			return ws, nil
		}
	}
}

// EvalBatch stacks windows into [len(ws), SeqLen] inputs and targets plus Weights, 1 where a target
// is counted and 0 where it is context. Summing loss×weight over every batch of EvalWindows and
// dividing by the sum of weights gives the per-token loss of the whole stream.
func EvalBatch(ws []EvalWindow) (inputs, targets []int32, weights []float32) {
	for _, w := range ws {
		inputs = append(inputs, w.Inputs...)
		targets = append(targets, w.Targets...)
		for j := range w.Targets {
			weights = append(weights, float32(boolToInt(j >= w.FirstCounted)))
		}
	}
	return inputs, targets, weights
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Example is one classification example: a token sequence and its class.
type Example struct {
	Tokens []int32
	Label  int32
}

// ClassBatch is a classification batch: Inputs (batch, SeqLen) padded with the pad token, Lengths
// (batch) real lengths, Mask (batch, SeqLen) true on real tokens, Labels (batch). Rows that only fill
// up a final evaluation batch have length 0 and label -1.
type ClassBatch struct {
	Inputs        []int32
	Mask          []bool
	Lengths       []int32
	Labels        []int32
	Batch, SeqLen int
}

// ClassBatches draws fixed-size batches of examples, reshuffled each epoch by a seeded permutation,
// padded to the longest example of the dataset so every batch has the same shape.
type ClassBatches struct {
	examples      []Example
	batch, seqLen int
	pad           int32
	state         BatchState
}

// NewClassBatches returns a shuffling batcher; pad is the token that fills short sequences.
func NewClassBatches(examples []Example, batchSize int, pad int32, seed uint64) (*ClassBatches, error) {
	if batchSize < 1 {
		return nil, fmt.Errorf("batch size %d must be positive", batchSize)
	}
	if len(examples) == 0 {
		return nil, fmt.Errorf("no examples to batch")
	}
	return &ClassBatches{examples: examples, batch: batchSize, seqLen: maxLen(examples), pad: pad, state: BatchState{Seed: seed}}, nil
}

func maxLen(examples []Example) int {
	n := 0
	for _, e := range examples {
		n = max(n, len(e.Tokens))
	}
	return n
}

// Next returns the batch of the current step and advances. Batch k holds the examples at positions
// k·B ... k·B+B-1 of the endless sequence of epoch permutations (epoch e shuffled by (seed, e)).
func (c *ClassBatches) Next() ClassBatch {
	n := len(c.examples)
	rows := make([]Example, c.batch)
	var perm []int
	permEpoch := int64(-1)
	for i := range rows {
		pos := c.state.Step*int64(c.batch) + int64(i)
		if epoch := pos / int64(n); epoch != permEpoch {
			perm, permEpoch = stepRNG(c.state.Seed^0x9e3779b97f4a7c15, epoch).Perm(n), epoch
		}
		rows[i] = c.examples[perm[pos%int64(n)]]
	}
	c.state.Step++
	return padBatch(rows, c.batch, c.seqLen, c.pad)
}

func (c *ClassBatches) State() BatchState    { return c.state }
func (c *ClassBatches) Restore(s BatchState) { c.state = s }

// SeqLen is the padded length of every batch.
func (c *ClassBatches) SeqLen() int { return c.seqLen }

// ClassEvalBatches returns every example once, in order, in batches of batchSize; the last batch is
// filled up with empty rows (length 0, label -1) so all batches share one shape.
func ClassEvalBatches(examples []Example, batchSize int, pad int32) []ClassBatch {
	seqLen := maxLen(examples)
	var out []ClassBatch
	for i := 0; i < len(examples); i += batchSize {
		out = append(out, padBatch(examples[i:min(i+batchSize, len(examples))], batchSize, seqLen, pad))
	}
	return out
}

func padBatch(rows []Example, batch, seqLen int, pad int32) ClassBatch {
	b := ClassBatch{Batch: batch, SeqLen: seqLen, Inputs: make([]int32, batch*seqLen), Mask: make([]bool, batch*seqLen),
		Lengths: make([]int32, batch), Labels: make([]int32, batch)}
	for i := range batch {
		row := b.Inputs[i*seqLen : (i+1)*seqLen]
		for j := range row {
			row[j] = pad
		}
		b.Labels[i] = -1
		if i >= len(rows) {
			continue
		}
		copy(row, rows[i].Tokens)
		for j := range rows[i].Tokens {
			b.Mask[i*seqLen+j] = true
		}
		b.Lengths[i], b.Labels[i] = int32(len(rows[i].Tokens)), rows[i].Label
	}
	return b
}
