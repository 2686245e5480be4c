package models

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
)

// Resolved fills in the derived options (those left at 0).
func (c Config) Resolved() Config {
	if c.Group == 0 {
		c.Group = c.SeqLen / 4
	}
	if c.SkipPeriod == 0 {
		c.SkipPeriod = 2 * c.Window
	}
	if c.Skips == 0 && c.SkipPeriod > 0 {
		// Enough skips for the last query to reach back to position 0, capped at
		// k so the cost stays O(n·k).
		c.Skips = max(1, min(c.Window, (c.SeqLen-1)/c.SkipPeriod))
	}
	if c.Latents == 0 {
		c.Latents = c.SeqLen / 2
	}
	if c.Compress == 0 {
		c.Compress = c.SeqLen / 4
	}
	return c
}

// Validate checks every rule a config must follow before a graph is built, and
// names the option and the rule when one is broken.
func (c Config) Validate() error {
	if _, ok := FamilyByName(c.Model); !ok {
		return fmt.Errorf("unknown model %q; choose one of %v", c.Model, FamilyNames())
	}
	r := c.Resolved()
	positive := []struct {
		name  string
		value int
	}{{"vocab", r.Vocab}, {"n", r.SeqLen}, {"dim", r.Dim}, {"heads", r.Heads}, {"layers", r.Layers}, {"ff_mult", r.FFMult}}
	for _, p := range positive {
		if p.value < 1 {
			return fmt.Errorf("option %s=%d must be at least 1", p.name, p.value)
		}
	}
	if r.Dim%r.Heads != 0 {
		return fmt.Errorf("model width dim=%d must be divisible by heads=%d", r.Dim, r.Heads)
	}
	if (r.Dim/r.Heads)%2 != 0 {
		return fmt.Errorf("head width dim/heads=%d must be even for rotary position encoding", r.Dim/r.Heads)
	}
	if r.Dropout < 0 || r.Dropout >= 1 {
		return fmt.Errorf("option dropout=%g must be in [0, 1)", r.Dropout)
	}
	switch r.Model {
	case "local":
		return r.validateWindow()
	case "ecp":
		if r.Segment < 1 || r.SeqLen%r.Segment != 0 {
			return fmt.Errorf("segment size %d must divide sequence length %d", r.Segment, r.SeqLen)
		}
	case "s2":
		if r.Group < 2 || r.Group%2 != 0 || r.SeqLen%r.Group != 0 {
			return fmt.Errorf("group size %d must be even and divide sequence length %d", r.Group, r.SeqLen)
		}
	case "pi":
		if err := r.validateWindow(); err != nil {
			return err
		}
		if r.SkipPeriod < 1 {
			return fmt.Errorf("option skip_period=%d must be at least 1", r.SkipPeriod)
		}
		if r.Skips < 1 || r.Skips > r.Window {
			return fmt.Errorf("skips M=%d must be between 1 and the window k=%d (keeps the cost O(n·k))", r.Skips, r.Window)
		}
	case "perceiverar", "double", "compressed", "ssplit":
		return r.validateLatents()
	}
	return nil
}

func (c Config) validateWindow() error {
	if c.Window < 1 || c.Window >= c.SeqLen {
		return fmt.Errorf("window %d must be at least 1 and smaller than sequence length %d", c.Window, c.SeqLen)
	}
	return nil
}

func (c Config) validateLatents() error {
	if c.Latents < 1 || c.Latents >= c.SeqLen {
		return fmt.Errorf("latents %d must be at least 1 and smaller than sequence length %d", c.Latents, c.SeqLen)
	}
	context := c.SeqLen - c.Latents
	switch c.Model {
	case "compressed":
		if c.Compress < 1 || c.Compress > context {
			return fmt.Errorf("compress c=%d must be between 1 and the context length n-latents=%d", c.Compress, context)
		}
	case "ssplit":
		if c.Splits < 1 || context%c.Splits != 0 {
			return fmt.Errorf("splits s=%d must divide the context length n-latents=%d", c.Splits, context)
		}
	}
	return nil
}

// LayerPattern is the attention one layer computes: its pattern and the
// length of the sequence it runs on.
type LayerPattern struct {
	Pattern Pattern
	SeqLen  int
}

// LayerPatterns lists the attention of every layer. Most families use the
// same pattern in every layer; PerceiverAR cross-attends in layer 0 and
// self-attends among latents after, and Compressed Double Attention runs on the
// compressed sequence after layer 0.
func (c Config) LayerPatterns() []LayerPattern {
	r := c.Resolved()
	layers := make([]LayerPattern, r.Layers)
	context := r.SeqLen - r.Latents
	for i := range layers {
		layers[i] = LayerPattern{Pattern: r.pattern(), SeqLen: r.SeqLen}
		switch {
		case r.Model == "perceiverar" && i == 0:
			layers[i].Pattern = Cross{Context: context}
		case r.Model == "perceiverar":
			layers[i] = LayerPattern{Pattern: Full{Causal: true}, SeqLen: r.Latents}
		case r.Model == "compressed" && i > 0:
			layers[i] = LayerPattern{Pattern: Split{Context: r.Compress, Splits: 1, CausalContext: r.CausalContext}, SeqLen: r.Compress + r.Latents}
		}
	}
	return layers
}

// pattern is the family's attention at full sequence length.
func (c Config) pattern() Pattern {
	switch c.Model {
	case "full":
		return Full{Causal: c.Causal}
	case "local":
		return Local{Window: c.Window, Causal: c.Causal}
	case "s2":
		return S2{Group: c.Group, Heads: c.Heads}
	case "ecp":
		return ECP{HalfSegment: c.Segment}
	case "pi":
		return Pi{Window: c.Window, SkipPeriod: c.SkipPeriod, Skips: c.Skips, Heads: c.Heads,
			Causal: c.Causal, HeadPhase: c.HeadPhase, Fusion: c.Fusion}
	case "double", "compressed":
		return Split{Context: c.SeqLen - c.Latents, Splits: 1, CausalContext: c.CausalContext}
	case "ssplit":
		return Split{Context: c.SeqLen - c.Latents, Splits: c.Splits, CausalContext: c.CausalContext}
	case "perceiverar":
		return Cross{Context: c.SeqLen - c.Latents}
	}
	panic(fmt.Sprintf("models: no pattern for model %q", c.Model))
}

// Pattern is the attention of the family's first layer (the one that reads
// the whole sequence).
func (c Config) Pattern() Pattern { return c.Resolved().pattern() }

// Cross is PerceiverAR's layer-0 cross-attention: only the l latents
// (positions C..n-1) are queries, and latent i sees every key j <= i.
//
//	K(i) = { j : j <= i } for i >= C; no queries below C.
//
// Cost per head: l·n scores.
type Cross struct {
	Context int // C
}

func (x Cross) Name() string                  { return "perceiverar" }
func (x Cross) PerHead() bool                 { return false }
func (x Cross) Allows(_, query, key int) bool { return query >= x.Context && key <= query }
func (x Cross) ScoredPairs(n int) int64       { return int64(n-x.Context) * int64(n) }

// Attend takes queries of all n positions and returns the l latent rows.
func (x Cross) Attend(q, k, v *graph.Node) *graph.Node {
	return LatentAttention(graph.SliceAxis(q, 2, graph.AxisRangeToEnd(x.Context)), k, v, x.Context)
}
