package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// Compressed Double Attention, the second of the ECP paper's intermediate
// designs, as its authors wrote it (CompressedDoubleAttentionTransformer.py):
//
//	layer 0:       Double Attention over all n = C + l positions; inside the
//	               attention, before the output projection, the C context rows
//	               are compressed to c along the token axis by a learned
//	               Linear(C, c) with bias.
//	layers 1..L-1: Double Attention over the c + l compressed positions
//	               (context bidirectional among the c, latents causal).
//
// Layer 0's residual is, in the authors' code, x[:, 0:c+l]: the first c+l
// positions of the input, so the latents' attention output is added to the
// embeddings of other positions. That looks like a slip, but it is what their
// reported numbers were trained with, so it is the default (residual=authors);
// residual=aligned adds the latents' output to their own rows and the c
// compressed rows to the last c context positions.
//
// Shared keys/values normalised per head after RoPE, RoPE in layer 0 only, no
// dropout on the context's weights, loss on the latents.
// Cost per head: l·n + C² scores in layer 0, l·(c+l) + c² after.
type compressedOptions struct {
	contextOptions
	Compress int
	Residual string
}

// The two layer-0 residuals of Compressed Double Attention.
const (
	residualAuthors = "authors"
	residualAligned = "aligned"
)

func init() {
	Register(Spec[compressedOptions]{
		Name: "compressed", Order: 8,
		Paper:    "ECP (intermediate design)",
		Summary:  "Compressed Double Attention: context compressed C -> c inside layer 0",
		Defaults: compressedOptions{Residual: residualAuthors},
		Options: append(contextTable(func(o *compressedOptions) *contextOptions { return &o.contextOptions }),
			option.Int("compress", "compressed context length c (0 = n/4)", func(o *compressedOptions) *int { return &o.Compress }, option.AtLeast(0)),
			option.Choice("residual", "layer 0's residual: the authors' first c+l rows, or each output row's own", []string{residualAuthors, residualAligned},
				func(o *compressedOptions) *string { return &o.Residual })),
		Resolve: func(c Config, o *compressedOptions) {
			resolveLatents(c, &o.Latents)
			if o.Compress == 0 {
				o.Compress = c.SeqLen / 4
			}
		},
		Validate: func(c Config, o compressedOptions) error {
			if err := validateLatents(c, o.Latents); err != nil {
				return err
			}
			if context := c.SeqLen - o.Latents; o.Compress > context {
				return fmt.Errorf("compress c=%d must be at most the context length n-latents=%d", o.Compress, context)
			}
			return nil
		},
		Layers: func(c Config, o compressedOptions) []Layer {
			context := c.SeqLen - o.Latents
			first := Layer{
				Pattern: Split{Context: context, Splits: 1, CausalContext: o.CausalContext, KeepContextWeights: true},
				SeqLen:  c.SeqLen, RoPE: true, Attention: compressingAttention(context, o.Compress),
				ResidualLag: compressedResidualLag(o.Residual, context, o.Compress),
			}
			layers := []Layer{first}
			for len(layers) < c.Layers {
				layers = append(layers, Layer{
					Pattern: Split{Context: o.Compress, Splits: 1, CausalContext: o.CausalContext, KeepContextWeights: true},
					SeqLen:  o.Compress + o.Latents, Attention: splitAttention,
				})
			}
			return layers
		},
		LossFrom: func(c Config, o compressedOptions) int { return lossOnLatents(c, o.Latents) },
	})
}

// compressingAttention is layer 0: Double Attention whose context rows are
// compressed C -> c along the token axis before the output projection.
func compressingAttention(context, compressed int) AttentionFunc {
	return func(b *Block, x *graph.Node) *graph.Node {
		q, kv := sharedKeyValues(b, x, x, 0)
		b.Observe(q, kv, nil)
		merged := b.MergeHeads(b.Attend(q, kv, kv)) // [B, n, d]
		if b.Decoding() {                           // one latent row: nothing to compress
			return b.Model.Linear(b.Scope.In("output"), merged, b.Model.Config.Dim, true)
		}
		history := graph.TransposeAllAxes(graph.SliceAxis(merged, 1, graph.AxisRange(0, context)), 0, 2, 1)
		squeezed := graph.TransposeAllAxes(b.Model.Linear(b.Scope.In("compress"), history, compressed, true), 0, 2, 1) // [B, c, d]
		rows := graph.Concatenate([]*graph.Node{squeezed, graph.SliceAxis(merged, 1, graph.AxisRangeToEnd(context))}, 1)
		return b.Model.Linear(b.Scope.In("output"), rows, b.Model.Config.Dim, true)
	}
}

// compressedResidualLag is layer 0's residual (see the family's doc comment):
// the authors' first c+l rows lie C-c positions before the rows they write.
func compressedResidualLag(kind string, context, compressed int) int {
	if kind == residualAuthors {
		return context - compressed
	}
	return 0
}
