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
// RoPE; RoPE in layer 0 only (queries at the latents' positions).
// Cost per head: l·n scores in layer 0, l² (causal half masked) after.
type perceiverOptions struct {
	latentOptions
}

func init() {
	Register(Spec[perceiverOptions]{
		Name: "perceiverar", Order: 6,
		Paper:   "ECP (baseline; arXiv 2202.07765)",
		Summary: "PerceiverAR: latents cross-attend to the history once, then self-attend",
		Options: option.Table[perceiverOptions]{latentsOption(func(o *perceiverOptions) *int { return &o.Latents })},
		Resolve: func(c Config, o *perceiverOptions) { resolveLatents(c, &o.Latents) },
		Validate: func(c Config, o perceiverOptions) error {
			return validateLatents(c, o.Latents)
		},
		Layers: func(c Config, o perceiverOptions) []Layer {
			context := c.SeqLen - o.Latents
			layers := []Layer{{Pattern: Cross{Context: context}, SeqLen: c.SeqLen, RoPE: true, Attention: crossAttention}}
			for len(layers) < c.Layers {
				layers = append(layers, Layer{Pattern: Full{Causal: true}, SeqLen: o.Latents, FirstPosition: context, Attention: latentSelfAttention})
			}
			return layers
		},
		LossFrom: func(c Config, o perceiverOptions) int { return lossOnLatents(c, o.Latents) },
	})
}

// crossAttention is layer 0: queries from the latents only, at their positions.
func crossAttention(b *Block, x *graph.Node) *graph.Node {
	context := b.Layer.Pattern.(Cross).Context
	q, kv := sharedKeyValues(b, graph.SliceAxis(x, 1, graph.AxisRangeToEnd(context)), x, context)
	b.Observe(q, kv, nil)
	return b.Output("output", LatentAttention(q, kv, kv, context, b.AttentionDropout(x.Graph())))
}

// latentSelfAttention is every later layer: the latents attend causally among themselves.
func latentSelfAttention(b *Block, x *graph.Node) *graph.Node {
	q, kv := sharedKeyValues(b, x, x, 0)
	b.Observe(q, kv, nil)
	return b.Output("output", b.Attend(q, kv, kv))
}
