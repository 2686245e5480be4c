//go:build linux && cgo

package xla

import (
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// A graph whose 64 MB product XLA must hold in a buffer: once warm, executions take their large
// blocks from the idle ones instead of mapping new memory.
func TestLargeBuffersAreReusedBetweenExecutions(t *testing.T) {
	c := xlaCPU(t)
	exec := graph.MustNewExec(c.Backend, func(a, b *graph.Node) []*graph.Node {
		product := graph.Einsum("ik,jk->ij", a, b) // 4096 x 4096 floats: 64 MB
		return []*graph.Node{graph.ReduceAllSum(product), graph.ReduceAllMax(product)}
	})
	a := tensors.FromShape(shapes.Make(dtypes.Float32, 4096, 64))
	b := tensors.FromShape(shapes.Make(dtypes.Float32, 4096, 64))
	run := func() {
		for _, out := range exec.MustCall(a, b) {
			out.MustFinalizeAll()
		}
		// XLA frees an execution's buffers on its own threads, just after the results arrive;
		// the pause lets that happen, so that each execution could reuse the one before's block.
		time.Sleep(200 * time.Millisecond)
	}
	run()
	mappedBefore, reusedBefore := BufferCounts()
	if mappedBefore == 0 {
		t.Fatalf("no large block mapped: XLA's allocations did not reach buffers.c")
	}
	for range 5 {
		run()
	}
	mapped, reused := BufferCounts()
	if mapped != mappedBefore || reused < reusedBefore+5 {
		t.Errorf("5 more executions mapped %d new blocks and reused %d; want 0 new and at least 5 reused",
			mapped-mappedBefore, reused-reusedBefore)
	}
}
