package models

import (
	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// PerceiverAR (arXiv 2202.07765), the ECP paper's baseline, as the ECP
// authors wrote it (PerceiverAR_baseline.py): the input is a history of
// C = n - l tokens followed by l latents.
//
//	layer 0:      latent i (position C + a) cross-attends to every j <= i (Cross)
//	layers 1..L-1: causal self-attention among the l latents only
//
// The residual of layer 0 is the latent slice; the loss is on the latents.
// The history is read once, in layer 0, and never refined: the weakness ECP
// addresses. Keys and values share one projection, normalised per head after
// RoPE (kv=separate: one projection each, as for ECP); RoPE in layer 0 only
// (queries at the latents' positions).
// Cost per head: l·n scores in layer 0, l² (causal half masked) after.
type perceiverOptions struct {
	latentOptions
	KV string // kvShared (the authors') or kvSeparate
}

func init() {
	Register(Spec[perceiverOptions]{
		Name: "perceiverar", Order: 6,
		Paper:    "ECP (baseline; arXiv 2202.07765)",
		Summary:  "PerceiverAR: latents cross-attend to the history once, then self-attend",
		Defaults: perceiverOptions{KV: kvShared},
		Options: option.Table[perceiverOptions]{
			latentsOption(func(o *perceiverOptions) *int { return &o.Latents }),
			kvOption(func(o *perceiverOptions) *string { return &o.KV }),
		},
		Resolve: func(c Config, o *perceiverOptions) { resolveLatents(c, &o.Latents) },
		Validate: func(c Config, o perceiverOptions) error {
			return validateLatents(c, o.Latents)
		},
		Layers: func(c Config, o perceiverOptions) []Layer {
			context, separateKV := c.SeqLen-o.Latents, o.KV == kvSeparate
			layers := []Layer{{Pattern: Cross{Context: context}, SeqLen: c.SeqLen, RoPE: true, Attention: crossAttention(separateKV)}}
			for len(layers) < c.Layers {
				layers = append(layers, Layer{Pattern: Full{Causal: true}, SeqLen: o.Latents, FirstPosition: context, Attention: latentSelfAttention(separateKV)})
			}
			return layers
		},
		LossFrom: func(c Config, o perceiverOptions) int { return lossOnLatents(c, o.Latents) },
	})
}

// crossAttention is layer 0: queries from the latents only, at their positions
// (while decoding, x is the one latent being decoded).
func crossAttention(separateKV bool) func(b *Block, x *graph.Node) *graph.Node {
	return func(b *Block, x *graph.Node) *graph.Node {
		latents, firstLatent := x, 0
		if !b.Decoding() {
			firstLatent = b.Layer.Pattern.(Cross).Context
			latents = graph.SliceAxis(x, 1, graph.AxisRangeToEnd(firstLatent))
		}
		q, k, v := queryKeyValues(b, latents, x, firstLatent, separateKV)
		b.Observe(q, k, nil)
		return b.Output("output", b.Attend(q, k, v))
	}
}

// latentSelfAttention is every later layer: the latents attend causally among themselves.
func latentSelfAttention(separateKV bool) func(b *Block, x *graph.Node) *graph.Node {
	return func(b *Block, x *graph.Node) *graph.Node {
		q, k, v := queryKeyValues(b, x, x, 0, separateKV)
		b.Observe(q, k, nil)
		return b.Output("output", b.Attend(q, k, v))
	}
}
