package models

// Double Attention PerceiverAR, the first of the ECP paper's intermediate
// designs (DoubleAttentionTransformer.py): all n tokens are kept in every
// layer; the l latents attend causally to every earlier position and the C
// context positions attend to the whole context (bidirectionally, as the
// authors' code does; causal_context=true makes it causal):
//
//	latent  i >= C: K(i) = { j : j <= i }
//	context i <  C: K(i) = { j : j < C }
//
// Shared keys/values normalised per head after RoPE, RoPE in every layer,
// loss on the latents. Cost per head and layer: l·n + C² scores.
type doubleOptions struct {
	contextOptions
}

func init() {
	Register(Spec[doubleOptions]{
		Name: "double", Order: 7,
		Paper:   "ECP (intermediate design)",
		Summary: "Double Attention PerceiverAR: all tokens every layer, context bidirectional",
		Options: contextTable(func(o *doubleOptions) *contextOptions { return &o.contextOptions }),
		Resolve: func(c Config, o *doubleOptions) { resolveLatents(c, &o.Latents) },
		Validate: func(c Config, o doubleOptions) error {
			return validateLatents(c, o.Latents)
		},
		Layers: func(c Config, o doubleOptions) []Layer {
			pattern := Split{Context: c.SeqLen - o.Latents, Splits: 1, CausalContext: o.CausalContext}
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: pattern, SeqLen: c.SeqLen, RoPE: true, Attention: splitAttention}
			}
			return layers
		},
		LossFrom: func(c Config, o doubleOptions) int { return lossOnLatents(c, o.Latents) },
	})
}
