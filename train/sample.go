package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
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
}

// String is the prompt followed by the continuation, made Visible: what
// every front end prints (the JSON form keeps the text as generated).
func (r *SampleResult) String() string { return Visible(r.Prompt + r.Text) }

// Sample continues a prompt with the LM, one token at a time, from softmax(logits/T)
// restricted to the top k. The window is the last n tokens: left-aligned
// while shorter than n for families scored on every position, right-aligned
// (padded with newlines) for those scored on their latents only.
func (l *Loaded) Sample(ctx context.Context, o SampleOptions) (*SampleResult, error) {
	tok := l.Tokenizer()
	if tok == nil {
		return nil, errors.New("sample needs a language model; this checkpoint is a classifier")
	}
	if o.Tokens < 1 || o.Temperature < 0 || o.TopK < 0 {
		return nil, fmt.Errorf("sample: tokens=%d must be positive, temperature=%g and top_k=%d not negative", o.Tokens, o.Temperature, o.TopK)
	}
	n, start := l.model.Config.SeqLen, l.model.LossStart()
	exec, err := model.NewExec(l.backend.Backend, l.store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		return l.model.Logits(scope, tokens)
	})
	if err != nil {
		return nil, err
	}
	defer exec.Finalize()
	pad := tok.Encode("\n")[0]
	context := tok.Encode(o.Prompt)
	if len(context) == 0 {
		context = []int32{pad}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x73616d706c65))
	var generated []int32
	for range o.Tokens {
		if err := ctx.Err(); err != nil {
			break
		}
		window, at := sampleWindow(context, n, start, pad)
		outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(window, 1, n))
		if err != nil {
			return nil, err
		}
		logits := tensors.MustCopyFlatData[float32](outs[0])
		vocab := len(logits) / (n - start)
		next := pick(logits[(at-start)*vocab:(at-start+1)*vocab], o.Temperature, o.TopK, rng)
		context = append(context, next)
		generated = append(generated, next)
	}
	return &SampleResult{Prompt: o.Prompt, Text: tok.Decode(generated), Tokens: len(generated), Checkpoint: l.Dir}, nil
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
