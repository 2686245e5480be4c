package train

import (
	"context"
	"fmt"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Decoder generates with a model that decodes incrementally: Prefill runs a
// window once and keeps its keys and values, Next computes one token against
// them. The graphs are compiled once; the caches stay with the backend.
type Decoder struct {
	model         *models.Model
	prefill, step *model.Exec
	caches        []*tensors.Tensor
	window        []int32 // the tokens of the current window, position 0 first
	pad           int32   // fills the window after its tokens
}

// NewDecoder compiles (lazily) the prefill and step graphs of m over store.
func NewDecoder(backend compute.Backend, store *model.Store, m *models.Model) (*Decoder, error) {
	if !m.CanDecode() {
		return nil, fmt.Errorf("model %s does not decode incrementally: it is not causal", m.Config.Model)
	}
	// Decoding keeps its caches in float32: a model trained in bf16 samples
	// from its float32 master weights.
	full := *m
	full.Compute = dtypes.Float32
	m = &full
	d := &Decoder{model: m}
	var err error
	d.prefill, err = model.NewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) []*graph.Node {
		defer models.RaiseAsError()
		logits, caches := m.Prefill(scope, tokens)
		return append([]*graph.Node{logits}, caches...)
	})
	if err != nil {
		return nil, err
	}
	d.step, err = model.NewExec(backend, store, func(scope *model.Scope, inputs []*graph.Node) []*graph.Node {
		defer models.RaiseAsError()
		logits, caches := m.DecodeStep(scope, inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], inputs[5:])
		return append([]*graph.Node{logits}, caches...)
	})
	return d, err
}

// Finalize frees the compiled graphs.
func (d *Decoder) Finalize() {
	d.prefill.Finalize()
	d.step.Finalize()
}

// Prefill starts a window with tokens (at most n) and returns the logits that
// predict the token after them. The PerceiverAR family predicts only its
// latents, so a shorter prompt is padded in front until it reaches the first.
func (d *Decoder) Prefill(tokens []int32, pad int32) ([]float32, error) {
	n, start := d.model.Config.SeqLen, d.model.LossStart()
	if len(tokens) == 0 || len(tokens) > n {
		return nil, fmt.Errorf("prefill needs 1 to n=%d tokens, got %d", n, len(tokens))
	}
	d.pad = pad
	d.window = d.window[:0]
	for range start + 1 - len(tokens) {
		d.window = append(d.window, pad)
	}
	d.window = append(d.window, tokens...)
	outs, err := d.prefill.Exec(tensors.FromFlatDataAndDimensions(d.padded(), 1, n))
	if err != nil {
		return nil, err
	}
	d.caches = outs[1:]
	logits := tensors.MustCopyFlatData[float32](outs[0])
	vocab := len(logits) / (n - start)
	at := len(d.window) - 1 - start
	return logits[at*vocab : (at+1)*vocab], nil
}

// padded is the window's tokens followed by padding up to n.
func (d *Decoder) padded() []int32 {
	window := make([]int32, d.model.Config.SeqLen)
	copy(window, d.window)
	for i := len(d.window); i < len(window); i++ {
		window[i] = d.pad
	}
	return window
}

// Next appends token at the next position of the window and returns the
// logits that predict the token after it. The window must not be full.
func (d *Decoder) Next(token int32) ([]float32, error) {
	position := len(d.window)
	if position >= d.model.Config.SeqLen {
		return nil, fmt.Errorf("the window of n=%d tokens is full; prefill a new one", d.model.Config.SeqLen)
	}
	keys, err := d.model.KeysAt(position)
	if err != nil {
		return nil, err
	}
	d.window = append(d.window, token)
	args := []any{tensors.FromFlatDataAndDimensions(d.padded(), 1, d.model.Config.SeqLen), tensors.FromScalar(int32(position)),
		tensors.FromValue(keys.Positions), tensors.FromValue(keys.Valid), tensors.FromValue(keys.Skip)}
	for _, c := range d.caches {
		args = append(args, c)
	}
	outs, err := d.step.Exec(args...)
	if err != nil {
		d.window = d.window[:position]
		return nil, err
	}
	for _, c := range d.caches {
		c.MustFinalizeAll()
	}
	d.caches = outs[1:]
	return tensors.MustCopyFlatData[float32](outs[0]), nil
}

// Full reports whether the window holds n tokens.
func (d *Decoder) Full() bool { return len(d.window) >= d.model.Config.SeqLen }

// decodeTokens generates count tokens after context: the window is the last
// tokens of the context (at most n/2 after a move, or up to the first latent),
// decoded one by one; a full window moves on and is prefilled again.
func decodeTokens(ctx context.Context, d *Decoder, context []int32, count int, pad int32, choose func([]float32) int32) ([]int32, error) {
	m := d.model
	keep := max(1, m.Config.SeqLen/2, m.LossStart()+1)
	start := max(0, len(context)-m.Config.SeqLen)
	logits, err := d.Prefill(context[start:], pad)
	if err != nil {
		return nil, err
	}
	var generated []int32
	for len(generated) < count && ctx.Err() == nil {
		next := choose(logits)
		generated = append(generated, next)
		context = append(context, next)
		if d.Full() {
			logits, err = d.Prefill(context[len(context)-keep:], pad)
		} else {
			logits, err = d.Next(next)
		}
		if err != nil {
			return nil, err
		}
	}
	return generated, nil
}
