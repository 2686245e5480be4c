package models

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// ClassLogits is the sequence-classification head (images as pixel sequences,
// LRA-style tasks): the trunk, mean pooling over the positions it returns,
// then a linear map to classes. tokens [B, n] -> logits [B, classes].
//
// Bidirectional families attend both ways with Config.Causal = false; the
// others are causal by construction and pool over what they return (the
// PerceiverAR family: its latents).
func (m *Model) ClassLogits(scope *model.Scope, tokens *graph.Node, classes int) *graph.Node {
	hidden := m.Trunk(scope, tokens)
	pooled := LayerNorm(scope.In("pool_norm"), graph.ReduceMean(hidden, 1))
	return toFloat32(Linear(scope.In("classes"), pooled, classes, true)) // the loss in float32
}
