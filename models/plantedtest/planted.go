// Package plantedtest registers a model family whose graphs fail to build on
// demand. Tests use it to check that such a failure comes back as an error
// that names it, and never hangs, on every path that builds a graph: training
// sessions, evaluators, decoders, the notebook session server.
package plantedtest

import (
	"sync"
	"sync/atomic"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/gomlx/core/graph"
)

// Family is the name the planted family registers under.
const Family = "planted-failure"

// Message is what a failing graph panics with.
const Message = "planted failure while building the graph"

var (
	failing  atomic.Bool
	register sync.Once
)

// Register adds the family, once per process. It is dense attention until
// Fail(true).
func Register() {
	register.Do(func() {
		models.Register(models.Spec[struct{}]{
			Name: Family, Order: 999, Bidirectional: true,
			Paper:   "none (tests)",
			Summary: "dense attention whose graphs fail to build while plantedtest.Fail(true)",
			Layers: func(c models.Config, _ struct{}) []models.Layer {
				layers := make([]models.Layer, c.Layers)
				for i := range layers {
					layers[i] = models.Layer{Pattern: models.Full{Causal: c.Causal}, SeqLen: c.SeqLen, RoPE: true, Attention: attention}
				}
				return layers
			},
		})
	})
}

// Fail makes every graph of the family built from now on fail, or not.
func Fail(on bool) { failing.Store(on) }

// attention panics with a string, not an error: the value GoMLX's Exec does
// not catch by itself (see models.RaiseAsError).
func attention(b *models.Block, x *graph.Node) *graph.Node {
	if failing.Load() {
		panic(Message)
	}
	return models.StandardAttention(b, x)
}
