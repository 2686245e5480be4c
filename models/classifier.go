package models

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
)

// ClassLogits is the sequence-classification head (images as pixel sequences,
// LRA-style tasks): the trunk, mean pooling over the positions it returns,
// then a linear map to classes. tokens [B, n] -> logits [B, classes].
//
// For full, local and pi, set Config.Causal = false to let every position see
// both ways; the other families are causal by construction and pool over what
// they return (PerceiverAR and the intermediate designs: their latents).
func (m *Model) ClassLogits(scope *model.Scope, tokens *graph.Node, classes int) *graph.Node {
	hidden := m.Trunk(scope, tokens)
	pooled := graph.ReduceMean(hidden, 1)
	pooled = norm.LayerNorm(scope.In("pool_norm"), pooled, -1).Done()
	return layers.Dense(scope.In("classes"), pooled, true, classes)
}
