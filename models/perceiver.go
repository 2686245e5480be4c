package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// The PerceiverAR baseline and the ECP paper's three intermediate designs
// share these pieces: l latent positions at the end of the sequence (the only
// ones that carry the loss), the authors' shared key/value projection with a
// learned LayerNorm over each head after RoPE, and the latents' causal
// attention to every earlier position.

// latentOptions is embedded in the option structs of those families.
type latentOptions struct {
	Latents int // l; 0: n/2
}

func latentsOption[O any](field func(*O) *int) option.Field[O] {
	return option.Int("latents", "latent positions l at the end of the sequence, the ones that carry the loss (0 = n/2)", field, option.AtLeast(0))
}

// resolveLatents: 0 means n/2.
func resolveLatents(c Config, latents *int) {
	if *latents == 0 {
		*latents = c.SeqLen / 2
	}
}

func validateLatents(c Config, latents int) error {
	if latents >= c.SeqLen {
		return fmt.Errorf("latents l=%d must be smaller than sequence length n=%d", latents, c.SeqLen)
	}
	return nil
}

// lossOnLatents: the loss is on the last l positions.
func lossOnLatents(c Config, latents int) int { return c.SeqLen - latents }

// sharedKeyValues are the authors' queries and keys/values: one projection
// serves as keys and values, normalised per head after RoPE.
func sharedKeyValues(b *Block, queryRows, x *graph.Node, queryRow int) (q, kv *graph.Node) {
	q = b.RotateFrom(b.Heads(b.Project("query", queryRows)), queryRow)
	kv = b.NormHeads("key_value_norm", b.Rotate(b.Heads(b.Project("key_value", x))))
	return q, kv
}

// queryKeyValues is sharedKeyValues, or with separateKV one projection for
// keys (normalised per head after RoPE, as the shared one) and one for
// values (neither rotated nor normalised), as kv=separate does for ECP.
func queryKeyValues(b *Block, queryRows, x *graph.Node, queryRow int, separateKV bool) (q, k, v *graph.Node) {
	if !separateKV {
		q, kv := sharedKeyValues(b, queryRows, x, queryRow)
		return q, kv, kv
	}
	q = b.RotateFrom(b.Heads(b.Project("query", queryRows)), queryRow)
	k = b.NormHeads("key_norm", b.Rotate(b.Heads(b.Project("key", x))))
	return q, k, b.Heads(b.Project("value", x))
}

// LatentAttention lets the l latent queries (absolute positions C..C+l-1)
// attend causally to all n keys: latent a sees keys j <= C + a. It is
// PerceiverAR's cross-attention and the latent half of Split, computed in
// tiles (TiledAttention), so no l x n tensor is built.
// q: [B, H, l, d]; k, v: [B, H, n, d]. Cost per head: l·n scores.
func LatentAttention(q, k, v *graph.Node, context int, drop Dropout) *graph.Node {
	return TiledAttention(q, k, v, context, true, drop)
}
