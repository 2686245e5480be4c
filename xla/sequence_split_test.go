package xla

import (
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
)

// compiledTemporaryMiB compiles graphFn on the first `devices` devices with
// its one input (shape in) split along axis 1, and returns the temporary
// memory per device that XLA reports for the compiled program.
func compiledTemporaryMiB(t *testing.T, backend compute.Backend, devices int, in shapes.Shape, graphFn func(*Node) *Node) float64 {
	t.Helper()
	exec, err := NewExec(backend, graphFn)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	inputs := []shapes.Shape{in}
	if devices > 1 {
		mesh, err := distributed.NewDeviceMesh([]int{devices}, []string{SequenceAxis})
		if err != nil {
			t.Fatal(err)
		}
		spec, err := distributed.BuildSpec(mesh).R().S(SequenceAxis).Done()
		if err != nil {
			t.Fatal(err)
		}
		assignment := make([]compute.DeviceNum, devices)
		inputs = make([]shapes.Shape, devices) // Compile takes every device's shard
		for i := range devices {
			assignment[i], inputs[i] = compute.DeviceNum(i), spec.ShardShape(in)
		}
		exec = exec.AutoSharding(mesh).WithDeviceAssignment(assignment).WithInputShardingSpecs(spec)
	}
	programs, err := CompiledMemory(func() error {
		_, err := exec.Compile(inputs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return programs[0].Temporary
}

// TestSequenceSplitDividesMemory is the smallest program of what
// `parallel=sequence` needs from GoMLX and XLA: tokens split along the
// sequence, an embedding gather, causal dense attention and its gradient. Its
// per-device temporary memory falls close to 1/N, so the platform can split a
// sequence; where ecpi's training step does not (docs/performance.md), the
// cause is in the shapes of ecpi's own graph.
func TestSequenceSplitDividesMemory(t *testing.T) {
	c := xlaCPU(t)
	if c.Devices < 4 {
		t.Skipf("the XLA CPU plugin exposes %d devices; this needs 4", c.Devices)
	}
	const batch, n, width = 2, 4096, 64
	step := func(tokens *Node) *Node {
		g := tokens.Graph()
		table := IotaFull(g, shapes.Make(dtypes.Float32, 256, width))
		x := Gather(table, InsertAxes(tokens, -1))
		scores := Einsum("bqd,bkd->bqk", x, x)
		causal := GreaterOrEqual(Iota(g, shapes.Make(dtypes.Int32, n, n), 0), Iota(g, shapes.Make(dtypes.Int32, n, n), 1))
		scores = Where(BroadcastToShape(InsertAxes(causal, 0), scores.Shape()), scores, BroadcastToShape(Scalar(g, dtypes.Float32, -1e9), scores.Shape()))
		loss := ReduceAllSum(Square(Einsum("bqk,bkd->bqd", Softmax(scores, -1), x)))
		return ReduceAllSum(Gradient(loss, table)[0])
	}
	in := shapes.Make(dtypes.Int32, batch, n)
	one := compiledTemporaryMiB(t, c.Backend, 1, in, step)
	for _, devices := range []int{2, 4} {
		split := compiledTemporaryMiB(t, c.Backend, devices, in, step)
		t.Logf("temporary memory per device: %.1f MiB on %d devices, %.1f MiB on one", split, devices, one)
		if split > 1.2*one/float64(devices) {
			t.Errorf("%d devices: %.1f MiB per device, want close to %.1f MiB (1/%d of one device's %.1f MiB)", devices, split, one/float64(devices), devices, one)
		}
	}
}
