package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
)

// s-Split Double Attention, the third of the ECP paper's intermediate designs
// (sSplitAttentionTransformer.py): as Double Attention, but the context is cut
// into s blocks of C/s that do not see each other:
//
//	latent  i >= C: K(i) = { j : j <= i }
//	context i <  C: K(i) = { j : floor(j/b) = floor(i/b) }, b = C/s
//
// Shared keys/values normalised per head after RoPE, RoPE in layer 0 only,
// loss on the latents. Cost per head and layer: l·n + C²/s scores.
type ssplitOptions struct {
	contextOptions
	Splits int
}

func init() {
	Register(Spec[ssplitOptions]{
		Name: "ssplit", Order: 9,
		Paper:    "ECP (intermediate design)",
		Summary:  "s-Split Double Attention: context cut into s blocks that do not see each other",
		Defaults: ssplitOptions{Splits: 4},
		Options: append(contextTable(func(o *ssplitOptions) *contextOptions { return &o.contextOptions }),
			option.Int("splits", "context blocks s (must divide the context length n-l)", func(o *ssplitOptions) *int { return &o.Splits }, option.AtLeast(1))),
		Resolve: func(c Config, o *ssplitOptions) { resolveLatents(c, &o.Latents) },
		Validate: func(c Config, o ssplitOptions) error {
			if err := validateLatents(c, o.Latents); err != nil {
				return err
			}
			if context := c.SeqLen - o.Latents; context%o.Splits != 0 {
				return fmt.Errorf("splits s=%d must divide the context length n-latents=%d", o.Splits, context)
			}
			return nil
		},
		Layers: func(c Config, o ssplitOptions) []Layer {
			pattern := Split{Context: c.SeqLen - o.Latents, Splits: o.Splits, CausalContext: o.CausalContext}
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: pattern, SeqLen: c.SeqLen, RoPE: i == 0, Attention: splitAttention}
			}
			return layers
		},
		LossFrom: func(c Config, o ssplitOptions) int { return lossOnLatents(c, o.Latents) },
	})
}
