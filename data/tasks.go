package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Generated long-range tasks. Each generator is a pure function of its options and seed.

// ListOps tokens: 0 is padding, digits 0-9 are 1..10, then the operators and the closing bracket.
var ListOpsVocab = []string{"<pad>", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "[MAX", "[MIN", "[MED", "[SM", "]"}

const (
	listOpsMax = 11 + iota
	listOpsMin
	listOpsMed
	listOpsSum
	listOpsClose
)

// ListOpsOptions follows LRA: nested MAX, MIN, MED (median, truncated) and SM (sum mod 10) over digits,
// at most MaxDepth levels and MaxArgs arguments per operator, sequences of MinLen..MaxLen tokens,
// the label the value 0..9.
type ListOpsOptions struct {
	MinLen, MaxLen    int
	MaxDepth, MaxArgs int
}

// DefaultListOps is LRA's setting: lengths 500 to 2000, depth 10, up to 10 arguments.
var DefaultListOps = ListOpsOptions{MinLen: 500, MaxLen: 2000, MaxDepth: 10, MaxArgs: 10}

// ListOps generates n examples. LRA drew random trees and kept those of the right length; this
// generator instead draws a target length in [MinLen, MaxLen] and shares that token budget out
// among randomly many arguments, so every tree it grows is kept (the operator rules are LRA's).
func ListOps(n int, o ListOpsOptions, seed uint64) ([]Example, error) {
	if o.MinLen < 1 || o.MaxLen < o.MinLen || o.MaxDepth < 1 || o.MaxArgs < 2 {
		return nil, fmt.Errorf("ListOps options %+v: need 1 <= MinLen <= MaxLen, MaxDepth >= 1, MaxArgs >= 2", o)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6973746f7073))
	out := make([]Example, 0, n)
	for len(out) < n {
		target := o.MinLen + rng.IntN(o.MaxLen-o.MinLen+1)
		var toks []int32
		value := listOpsTree(rng, &toks, target, 0, o)
		if len(toks) >= o.MinLen && len(toks) <= o.MaxLen {
			out = append(out, Example{Tokens: toks, Label: int32(value)})
		}
	}
	return out, nil
}

// listOpsTree appends a tree of at most budget tokens and returns its value.
func listOpsTree(rng *rand.Rand, toks *[]int32, budget, depth int, o ListOpsOptions) int {
	if budget < 4 || depth >= o.MaxDepth { // an operator needs itself, two arguments and "]"
		d := rng.IntN(10)
		*toks = append(*toks, int32(d+1))
		return d
	}
	op := listOpsMax + rng.IntN(4)
	nArgs := 2 + rng.IntN(min(o.MaxArgs, budget-2)-1)
	*toks = append(*toks, int32(op))
	// Cut the remaining budget at nArgs-1 random points: children get the pieces (at least 1 each).
	cuts := []int{0, budget - 2 - nArgs}
	for range nArgs - 1 {
		cuts = append(cuts, rng.IntN(budget-2-nArgs+1))
	}
	slices.Sort(cuts)
	args := make([]int, nArgs)
	for i := range args {
		args[i] = listOpsTree(rng, toks, 1+cuts[i+1]-cuts[i], depth+1, o)
	}
	*toks = append(*toks, listOpsClose)
	return listOpsApply(op, args)
}

func listOpsApply(op int, args []int) int {
	switch op {
	case listOpsMax:
		return slices.Max(args)
	case listOpsMin:
		return slices.Min(args)
	case listOpsMed:
		s := slices.Sorted(slices.Values(args))
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2 // int(np.median(x)), as LRA
	}
	sum := 0
	for _, a := range args {
		sum += a
	}
	return sum % 10
}

// ListOpsString renders tokens as LRA's text form, e.g. "[MAX 2 9 [MIN 4 7 ] 0 ]".
func ListOpsString(toks []int32) string {
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = ListOpsVocab[t]
	}
	return strings.Join(words, " ")
}

// PathfinderOptions sets LRA Pathfinder's image task: Size×Size pixels, two marked endpoints that are
// (label 1) or are not (label 0) joined by one curved dashed path, plus Distractors unrelated paths.
type PathfinderOptions struct {
	Size        int
	PathLength  int     // pixels walked per path
	Distractors int     // extra paths
	Curvature   float64 // standard deviation of the heading change per pixel, radians
}

// DefaultPathfinder is the 32×32 setting (1024-step sequences).
var DefaultPathfinder = PathfinderOptions{Size: 32, PathLength: 40, Distractors: 2, Curvature: 0.25}

// Pathfinder generates n examples, balanced between the classes, as row-major pixel tokens 0..255.
func Pathfinder(n int, o PathfinderOptions, seed uint64) ([]Example, error) {
	if o.Size < 8 || o.PathLength < 4 || o.Distractors < 0 {
		return nil, fmt.Errorf("Pathfinder options %+v: need Size >= 8, PathLength >= 4, Distractors >= 0", o)
	}
	rng := rand.New(rand.NewPCG(seed, 0x70617468))
	out := make([]Example, n)
	for i := range out {
		connected := i%2 == 0
		img := make([]byte, o.Size*o.Size)
		a := pathfinderPath(rng, img, o)
		b := pathfinderPath(rng, img, o)
		for range o.Distractors {
			pathfinderPath(rng, img, o)
		}
		end := b[1]
		if connected {
			end = a[1]
		}
		pathfinderMarker(img, o.Size, a[0])
		pathfinderMarker(img, o.Size, end)
		toks := make([]int32, len(img))
		for p, v := range img {
			toks[p] = int32(v)
		}
		out[i] = Example{Tokens: toks, Label: int32(boolToInt(connected))}
	}
	return out, nil
}

// pathfinderPath walks a smooth random curve, drawing two pixels in every three (a dashed line),
// turning back from the border; it returns its two end points.
func pathfinderPath(rng *rand.Rand, img []byte, o PathfinderOptions) [2][2]int {
	margin := 2.0
	lo, hi := margin, float64(o.Size)-1-margin
	x, y := lo+rng.Float64()*(hi-lo), lo+rng.Float64()*(hi-lo)
	heading := rng.Float64() * 2 * math.Pi
	start := [2]int{int(math.Round(x)), int(math.Round(y))}
	for step := range o.PathLength {
		heading += rng.NormFloat64() * o.Curvature
		nx, ny := x+math.Cos(heading), y+math.Sin(heading)
		if nx < lo || nx > hi || ny < lo || ny > hi {
			heading += math.Pi / 2
			nx, ny = math.Max(lo, math.Min(hi, x+math.Cos(heading))), math.Max(lo, math.Min(hi, y+math.Sin(heading)))
		}
		x, y = nx, ny
		if step%3 != 2 {
			img[int(math.Round(y))*o.Size+int(math.Round(x))] = 200
		}
	}
	return [2][2]int{start, {int(math.Round(x)), int(math.Round(y))}}
}

// pathfinderMarker draws a bright plus sign on an endpoint.
func pathfinderMarker(img []byte, size int, p [2]int) {
	for _, d := range [][2]int{{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
		x, y := p[0]+d[0], p[1]+d[1]
		if x >= 0 && y >= 0 && x < size && y < size {
			img[y*size+x] = 255
		}
	}
}

// RetrievalExample is a prompt whose correct continuation is Answer; Distance is the number of
// prompt tokens between the end of the hidden fact and the end of the prompt.
type RetrievalExample struct {
	Prompt   []int32
	Answer   []int32
	Distance int
}

const passkeyFiller = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "

// Passkey hides a random five-digit pass key in about length tokens of filler, distance tokens before
// the question that ends the prompt. With filler == "" the filler is the classic repeated sentences;
// otherwise it is taken from seeded random places in filler (e.g. a prepared corpus's test split).
func Passkey(tok Tokenizer, n, length, distance int, filler string, seed uint64) ([]RetrievalExample, error) {
	question := tok.Encode(" What is the pass key? The pass key is")
	if distance < len(question) || length < distance+64 {
		return nil, fmt.Errorf("passkey distance %d must be at least the question's %d tokens and length %d at least distance + 64",
			distance, len(question), length)
	}
	rng := rand.New(rand.NewPCG(seed, 0x706b))
	fillTokens := tok.Encode(passkeyFiller)
	if filler != "" {
		if fillTokens = tok.Encode(filler); len(fillTokens) < length {
			return nil, fmt.Errorf("filler of %d tokens is shorter than the prompt length %d", len(fillTokens), length)
		}
	}
	out := make([]RetrievalExample, n)
	for i := range out {
		key := strconv.Itoa(10000 + rng.IntN(90000))
		fact := tok.Encode(" The pass key is " + key + ". Remember it. " + key + " is the pass key. ")
		after := distance - len(question)
		before := length - distance - len(fact)
		if before < 0 {
			return nil, fmt.Errorf("prompt length %d leaves no room for the %d-token fact at distance %d", length, len(fact), distance)
		}
		prompt := make([]int32, 0, length)
		prompt = append(prompt, fillerSlice(rng, fillTokens, before, filler == "")...)
		prompt = append(prompt, fact...)
		prompt = append(prompt, fillerSlice(rng, fillTokens, after, filler == "")...)
		prompt = append(prompt, question...)
		out[i] = RetrievalExample{Prompt: prompt, Answer: tok.Encode(" " + key), Distance: distance}
	}
	return out, nil
}

// fillerSlice takes n filler tokens: from the start of the repeated sentences, or from a random place
// of real text.
func fillerSlice(rng *rand.Rand, fill []int32, n int, repeated bool) []int32 {
	if n == 0 {
		return nil
	}
	if repeated {
		out := make([]int32, 0, n+len(fill))
		for len(out) < n {
			out = append(out, fill...)
		}
		return out[:n]
	}
	start := rng.IntN(len(fill) - n + 1)
	return fill[start : start+n]
}

// AssocRecallOptions sets the associative-recall task: Pairs key-value pairs, keys tokens
// 0..Keys-1 (distinct within a sequence), values Keys..Keys+Values-1, then the query token
// (Keys+Values) and one of the keys; the label is that key's value token. The queried pair is the one
// about Distance tokens before the end of the sequence; with Spread > 0, one drawn per example among the
// pairs Distance ± Spread tokens before the end, so that the answer's position alone does not give it
// away and the model must find the key (a model that reads a position once, like PerceiverAR's latents
// reading the history, can then no longer answer from the position alone).
type AssocRecallOptions struct {
	Pairs, Keys, Values, Distance, Spread int
}

// AssocRecallVocab is the vocabulary size a model needs for o: keys, values and the query token.
func (o AssocRecallOptions) AssocRecallVocab() int { return o.Keys + o.Values + 1 }

// AssocRecall generates n examples of 2·Pairs+2 tokens.
func AssocRecall(n int, o AssocRecallOptions, seed uint64) ([]Example, error) {
	seqLen := 2*o.Pairs + 2
	if o.Pairs < 1 || o.Keys < o.Pairs || o.Values < 2 {
		return nil, fmt.Errorf("associative recall options %+v: need Pairs >= 1, Keys >= Pairs (distinct keys), Values >= 2", o)
	}
	if o.Distance < 3 || o.Distance > seqLen {
		return nil, fmt.Errorf("associative recall distance %d must be in 3..%d (the sequence length)", o.Distance, seqLen)
	}
	if o.Spread < 0 {
		return nil, fmt.Errorf("associative recall spread %d must be at least 0", o.Spread)
	}
	// key i sits at position 2i; its distance to the end of the sequence is seqLen-2i.
	nearest := min(o.Pairs-1, max(0, (seqLen-o.Distance)/2))
	var candidates []int
	for pair := range o.Pairs {
		if distance := seqLen - 2*pair; o.Spread > 0 && distance >= o.Distance-o.Spread && distance <= o.Distance+o.Spread {
			candidates = append(candidates, pair)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6172))
	out := make([]Example, n)
	for i := range out {
		keys := rng.Perm(o.Keys)[:o.Pairs]
		toks := make([]int32, 0, seqLen)
		for _, k := range keys {
			toks = append(toks, int32(k), int32(o.Keys+rng.IntN(o.Values)))
		}
		queried := nearest
		if len(candidates) > 0 { // drawn only with a spread: without one, the sets stay as they were
			queried = candidates[rng.IntN(len(candidates))]
		}
		toks = append(toks, int32(o.Keys+o.Values), int32(keys[queried]))
		out[i] = Example{Tokens: toks, Label: toks[2*queried+1]}
	}
	return out, nil
}
