package train

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
)

// generatedSet is a dataset train makes from data's generators. The model's
// sequence length n sets the length of its sequences (defaultN when no n is
// given), so a task shrinks with the model: `data=listops n=128` is ListOps
// of at most 128 tokens. Its splits use fixed seeds, independent of the run's.
type generatedSet struct {
	kind     string // TaskClassify or TaskRetrieve
	summary  string
	reads    []string // data options beyond examples=
	classes  int      // TaskClassify: the number of classes
	defaultN int
	show     func(count int) ([]ShownExample, error)
	vocab    func(p genParams) int
	// make returns count examples. Retrieval examples hold n+1 tokens (the
	// prompt, then the answer) and their Label is the answer's length.
	make func(p genParams, count int, seed uint64) ([]data.Example, error)
}

// genParams are what a generated set's examples depend on besides the seed.
type genParams struct {
	n, distance, spread int
	tok                 data.Tokenizer
}

// defaultExamples is the training split of a generated set when examples= is 0.
const defaultExamples = 10000

var generatedSets = map[string]generatedSet{
	"listops": {kind: TaskClassify, classes: 10, defaultN: data.DefaultListOps.MaxLen, show: showListOps,
		summary: "classification: ListOps expressions of n/4..n tokens and their values (LRA; default n=2000)",
		vocab:   func(genParams) int { return len(data.ListOpsVocab) },
		make: func(p genParams, count int, seed uint64) ([]data.Example, error) {
			o := data.DefaultListOps // LRA: lengths n/4 .. n, depth 10, 10 arguments
			o.MinLen, o.MaxLen = max(1, p.n/4), p.n
			return data.ListOps(count, o, seed)
		}},
	"pathfinder": {kind: TaskClassify, classes: 2, defaultN: 1024, show: showPathfinder,
		summary: "classification: are two dots joined by a dashed path? √n×√n pixels (LRA; n a square, default 1024)",
		vocab:   func(genParams) int { return 256 },
		make: func(p genParams, count int, seed uint64) ([]data.Example, error) {
			side := int(math.Round(math.Sqrt(float64(p.n))))
			if side*side != p.n {
				return nil, fmt.Errorf("data pathfinder: n=%d must be a square number of pixels (e.g. 1024 = 32², 256 = 16²)", p.n)
			}
			o := data.DefaultPathfinder
			o.Size, o.PathLength = side, max(4, o.PathLength*side/o.Size) // paths keep their share of the image
			return data.Pathfinder(count, o, seed)
		}},
	"passkey": {kind: TaskRetrieve, defaultN: 512, reads: []string{"distance", "tokenizer"}, show: showPasskey,
		summary: "retrieval: a pass key hidden distance= tokens before the question, in filler text (default n=512)",
		vocab:   func(p genParams) int { return p.tok.VocabSize() },
		make:    passkeyExamples},
	"assoc": {kind: TaskRetrieve, defaultN: 256, reads: []string{"distance", "spread"}, show: showAssoc,
		summary: "retrieval: associative recall of the value of a key seen distance= tokens back (default n=256)",
		vocab:   func(p genParams) int { return assocOptions(p).AssocRecallVocab() },
		make:    assocExamples},
}

// Each generated set registers as a dataset of its own, in name order.
func init() {
	for _, name := range slices.Sorted(maps.Keys(generatedSets)) {
		g := generatedSets[name]
		registerDataset(Dataset{
			Names: func() []string { return []string{name} }, Kind: g.kind, Summary: g.summary,
			Reads: append([]string{"examples"}, g.reads...), BothWays: g.kind == TaskClassify,
			Build: func(o Options, cfg models.Config) (task, models.Config, error) {
				p, err := generatedParams(o, g, cfg.SeqLen)
				if err != nil {
					return nil, cfg, err
				}
				cfg.SeqLen = p.n
				t, err := newGeneratedTask(o, g, p)
				return t, cfg, err
			},
			Show: func(_, _ string, count, _ int) ([]ShownExample, error) { return g.show(count) },
		})
	}
}

// answerRoom is the room kept for a pass key's answer " 12345": six bytes,
// so no tokenizer needs more than six tokens.
const answerRoom = 6

// passkeyExamples hides the key distance tokens before the question (the
// classic repeated-sentence filler) in a prompt of n+1-answerRoom tokens;
// shorter answers are made up by padding token 0 in front.
func passkeyExamples(p genParams, count int, seed uint64) ([]data.Example, error) {
	prompts, err := data.Passkey(p.tok, count, p.n+1-answerRoom, p.distance, "", seed)
	if err != nil {
		return nil, fmt.Errorf("data passkey with n=%d: %w", p.n, err)
	}
	out := make([]data.Example, len(prompts))
	for i, e := range prompts {
		seq := make([]int32, p.n+1)
		start := len(seq) - len(e.Prompt) - len(e.Answer)
		copy(seq[start:], e.Prompt)
		copy(seq[start+len(e.Prompt):], e.Answer)
		out[i] = data.Example{Tokens: seq, Label: int32(len(e.Answer))}
	}
	return out, nil
}

// assocValues is the number of value tokens of associative recall (chance: 1/16).
const assocValues = 16

// assocOptions fills n tokens with n/2-1 key-value pairs, the query token
// and the queried key; every key appears once.
func assocOptions(p genParams) data.AssocRecallOptions {
	pairs := p.n/2 - 1
	return data.AssocRecallOptions{Pairs: pairs, Keys: pairs, Values: assocValues, Distance: p.distance, Spread: p.spread}
}

func assocExamples(p genParams, count int, seed uint64) ([]data.Example, error) {
	if p.n%2 != 0 || p.n < 4 {
		return nil, fmt.Errorf("data assoc: n=%d must be even and at least 4 (key-value pairs, then the query and its key)", p.n)
	}
	examples, err := data.AssocRecall(count, assocOptions(p), seed)
	if err != nil {
		return nil, fmt.Errorf("data assoc with n=%d: %w", p.n, err)
	}
	for i, e := range examples {
		examples[i] = data.Example{Tokens: append(e.Tokens, e.Label), Label: 1}
	}
	return examples, nil
}

// generatedParams resolves a generated set's options: n from the model
// config (0: the set's default), the distance (else n/2) and the tokenizer.
func generatedParams(o Options, g generatedSet, n int) (genParams, error) {
	p := genParams{n: cmp.Or(n, g.defaultN), distance: o.Distance, spread: o.Spread}
	if p.distance == 0 {
		p.distance = p.n / 2
	}
	tok, err := data.NewTokenizer(o.Tokenizer)
	p.tok = tok
	return p, err
}

// generate makes the three splits: examples for training (default
// defaultExamples), a tenth of that each for valid and test.
func generate(o Options, g generatedSet, p genParams) (map[string][]data.Example, error) {
	train := o.Examples
	if train == 0 {
		train = defaultExamples
	}
	sizes := map[string]int{"train": train, "valid": max(1, train/10), "test": max(1, train/10)}
	splits := map[string][]data.Example{}
	for i, split := range data.SplitNames {
		examples, err := g.make(p, sizes[split], uint64(1000+i))
		if err != nil {
			return nil, err
		}
		splits[split] = examples
	}
	return splits, nil
}

// newGeneratedTask makes a generated set's splits for a model of sequence length p.n.
func newGeneratedTask(o Options, g generatedSet, p genParams) (task, error) {
	splits, err := generate(o, g, p)
	if err != nil {
		return nil, err
	}
	if g.kind == TaskRetrieve {
		examples, err := newExampleSet(splits, o, p.n+1)
		return &retrievalTask{exampleSet: examples, voc: g.vocab(p), n: p.n}, err
	}
	examples, err := newExampleSet(splits, o, p.n) // ListOps: shorter expressions padded to n
	return &classTask{exampleSet: examples, classes: g.classes, voc: g.vocab(p)}, err
}

// showListOps shows short expressions and their values.
func showListOps(count int) ([]ShownExample, error) {
	examples, err := data.ListOps(count, data.ListOpsOptions{MinLen: 16, MaxLen: 48, MaxDepth: 3, MaxArgs: 4}, 1)
	if err != nil {
		return nil, err
	}
	var out []ShownExample
	for _, e := range examples {
		out = append(out, ShownExample{Text: data.ListOpsString(e.Tokens), Label: fmt.Sprintf("value %d", e.Label)})
	}
	return out, nil
}

// showPathfinder shows 32×32 images and whether their dots are joined.
func showPathfinder(count int) ([]ShownExample, error) {
	examples, err := data.Pathfinder(count, data.DefaultPathfinder, 1)
	if err != nil {
		return nil, err
	}
	var out []ShownExample
	for _, e := range examples {
		label := map[int32]string{0: "not joined", 1: "joined"}[e.Label]
		out = append(out, ShownExample{Label: label, Pixels: square(e.Tokens, data.DefaultPathfinder.Size)})
	}
	return out, nil
}

// showPasskey shows prompts of 200 bytes with the key 100 bytes back.
func showPasskey(count int) ([]ShownExample, error) {
	tok, err := data.NewTokenizer("byte")
	if err != nil {
		return nil, err
	}
	prompts, err := data.Passkey(tok, count, 200, 100, "", 1)
	if err != nil {
		return nil, err
	}
	var out []ShownExample
	for _, e := range prompts {
		out = append(out, ShownExample{Text: tok.Decode(e.Prompt), Label: "answer" + tok.Decode(e.Answer)})
	}
	return out, nil
}

// showAssoc shows associative-recall sequences of 8 key-value pairs, as
// `train data=assoc n=18` builds them: the pairs, the query token, a key; the
// answer is its value.
func showAssoc(count int) ([]ShownExample, error) {
	o := data.AssocRecallOptions{Pairs: 8, Keys: 8, Values: 16, Distance: 10}
	examples, err := data.AssocRecall(count, o, 1)
	if err != nil {
		return nil, err
	}
	token := func(t int32) string {
		switch {
		case int(t) < o.Keys:
			return fmt.Sprintf("k%d", t)
		case int(t) < o.Keys+o.Values:
			return fmt.Sprintf("v%d", int(t)-o.Keys)
		}
		return "?"
	}
	var out []ShownExample
	for _, e := range examples {
		words := make([]string, len(e.Tokens))
		for i, t := range e.Tokens {
			words[i] = token(t)
		}
		out = append(out, ShownExample{Text: strings.Join(words, " "), Label: "answer " + token(e.Label)})
	}
	return out, nil
}
