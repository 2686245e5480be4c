package models

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// Local is sliding-window attention, which the π-Attention paper calls
// "RingAttention" (ring-local windows).
//
//	causal:        K(i) = { j : i-k <= j <= i }
//	bidirectional: K(i) = { j : |i-j| <= k }
//
// Block form (windowSpec): blocks of s <= k positions (s = 64 for k = 256);
// each block scores itself and the ceil(k/s) blocks before it (and as many
// after it when bidirectional), masked to the exact window.
// Cost: about (k+s)·n scores per head causal, (2k+s)·n bidirectional: linear in n.
type Local struct {
	Window int // k
	Causal bool
}

func (l Local) Name() string  { return "local" }
func (l Local) PerHead() bool { return false }

func (l Local) Allows(_, query, key int) bool {
	if l.Causal {
		return key <= query && query-key <= l.Window
	}
	return abs(query-key) <= l.Window
}

func (l Local) spec() blockSpec { return windowSpec(l.Window, l.Causal) }

func (l Local) ScoredPairs(n int) int64 { return l.spec().scoredPairs(n) }

// AllowedPairs: query i sees min(i, k) keys behind it, itself, and (both ways)
// min(n-1-i, k) ahead.
func (l Local) AllowedPairs(_, n int) int64 {
	behind := windowSum(n, l.Window)
	if l.Causal {
		return behind + int64(n)
	}
	return 2*behind + int64(n)
}

// windowSum is Σ_{i<n} min(i, k).
func windowSum(n, k int) int64 {
	if n <= k {
		return causalPairs(n - 1)
	}
	return causalPairs(k) + int64(n-k-1)*int64(k)
}

func (l Local) mask(query, key *graph.Node) *graph.Node {
	distance := graph.Sub(query, key)
	inWindow := graph.LessOrEqual(graph.Abs(distance), int32Scalar(query.Graph(), l.Window))
	if l.Causal {
		return graph.LogicalAnd(inWindow, graph.GreaterOrEqual(distance, int32Scalar(query.Graph(), 0)))
	}
	return inWindow
}

func (l Local) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	return blockForm(q, k, v, l.spec(), l.mask).attend(drop)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// windowOptions are the options of families with a local window.
type windowOptions struct {
	Window int
}

// windowOption is the window k of every family with a local window.
func windowOption[O any](field func(*O) *int) option.Field[O] {
	return option.Int("window", "local window k: i-k <= j <= i", field, option.AtLeast(1))
}

// validateWindow: 1 <= k < n.
func validateWindow(window, n int) error {
	if window >= n {
		return fmt.Errorf("window k=%d must be smaller than sequence length n=%d", window, n)
	}
	return nil
}

func init() {
	Register(Spec[windowOptions]{
		Name: "local", Order: 2, Benchmark: true, Headline: true, Bidirectional: true,
		Paper:    "π-Attention (its \"RingAttention\" baseline)",
		Summary:  "sliding-window attention over the k previous positions (both ways with causal=false)",
		Defaults: windowOptions{Window: 64},
		Options:  option.Table[windowOptions]{windowOption(func(o *windowOptions) *int { return &o.Window })},
		Validate: func(c Config, o windowOptions) error { return validateWindow(o.Window, c.SeqLen) },
		Layers: func(c Config, o windowOptions) []Layer {
			layers := make([]Layer, c.Layers)
			for i := range layers {
				layers[i] = Layer{Pattern: Local{Window: o.Window, Causal: c.Causal}, SeqLen: c.SeqLen, RoPE: true}
			}
			return layers
		},
		BenchWindow: func(o *windowOptions, w int) { o.Window = w },
		ReceptiveField: func(_ Config, o windowOptions, i, layers int) int {
			return min(i, o.Window*layers)
		},
	})
}
