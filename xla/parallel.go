package xla

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
	"github.com/gomlx/gomlx/ml/train"
)

// The mesh axes a batch is split along: DataAxis splits the batch (each device
// a share of the sequences), SequenceAxis each sequence (each device a share of
// every sequence's positions).
const (
	DataAxis     = "data"
	SequenceAxis = "sequence"
)

// DataParallel spreads every batch over several devices of one backend: one axis of each input
// and label is split across the devices, variables stay replicated, and XLA's AutoSharding
// (Shardy) partitions the step and inserts the exchanges it needs: the all-reduce of the
// gradients; for a split sequence, whatever each attention's keys need from the other devices.
// The result equals one step on the whole batch on one device.
type DataParallel struct {
	Mesh    *distributed.DeviceMesh
	Devices []compute.DeviceNum
	// Split is the tensor axis split across the devices: 0 (DataAxis, the
	// batch) or 1 (SequenceAxis, the positions).
	Split int
}

// NewDataParallel uses the first n devices of the backend (all of them when n <= 0) to split
// each batch along meshAxis (DataAxis or SequenceAxis). It needs an XLA backend: GoMLX
// implements AutoSharding only there.
func NewDataParallel(backend compute.Backend, n int, meshAxis string) (*DataParallel, error) {
	available := backend.NumDevices()
	if n <= 0 {
		n = available
	}
	if n > available {
		return nil, fmt.Errorf("devices=%d but backend %s has %d", n, backend.Name(), available)
	}
	if backend.Name() != "xla" {
		return nil, fmt.Errorf("data parallelism needs an XLA backend (GoMLX's AutoSharding runs on XLA only), got %q", backend.Name())
	}
	split := map[string]int{DataAxis: 0, SequenceAxis: 1}
	if _, ok := split[meshAxis]; !ok {
		return nil, fmt.Errorf("a batch splits along %q or %q, not %q", DataAxis, SequenceAxis, meshAxis)
	}
	mesh, err := distributed.NewDeviceMesh([]int{n}, []string{meshAxis})
	if err != nil {
		return nil, err
	}
	devices := make([]compute.DeviceNum, n)
	for i := range devices {
		devices[i] = compute.DeviceNum(i)
	}
	return &DataParallel{Mesh: mesh, Devices: devices, Split: split[meshAxis]}, nil
}

// Shard splits t along the Split axis, one slice per device; that axis must divide evenly. A
// tensor without that axis (a classifier's labels when sequences are split) is replicated.
func (dp *DataParallel) Shard(t *tensors.Tensor) (*dtensor.Tensor, error) {
	shape := t.Shape()
	if shape.Rank() == 0 {
		return nil, fmt.Errorf("cannot split a scalar across %d devices", len(dp.Devices))
	}
	spec := distributed.BuildSpec(dp.Mesh)
	if shape.Rank() <= dp.Split {
		for range shape.Rank() {
			spec.R()
		}
	} else {
		what := []string{"batch size", "sequence length"}[dp.Split]
		if size := shape.Dimensions[dp.Split]; size%len(dp.Devices) != 0 {
			return nil, fmt.Errorf("%s %d must be a multiple of the %d devices it is split across", what, size, len(dp.Devices))
		}
		for range dp.Split {
			spec.R()
		}
		spec.S(dp.Mesh.AxesNames()[0])
	}
	done, err := spec.Done()
	if err != nil {
		return nil, err
	}
	return dtensor.ShardTensor(done, t)
}

// Batch shards the inputs and labels of a batch; the batch's tensors are finalized.
func (dp *DataParallel) Batch(b train.Batch) (train.DistributedBatch, error) {
	defer func() { _ = b.Finalize() }()
	out := train.DistributedBatch{Spec: b.Spec}
	for _, t := range b.Inputs {
		d, err := dp.Shard(t)
		if err != nil {
			return out, fmt.Errorf("input: %w", err)
		}
		out.Inputs = append(out.Inputs, d)
	}
	for _, t := range b.Labels {
		d, err := dp.Shard(t)
		if err != nil {
			return out, fmt.Errorf("label: %w", err)
		}
		out.Labels = append(out.Labels, d)
	}
	return out, nil
}

// TrainStep runs one data-parallel training step of the trainer on the batch.
func (dp *DataParallel) TrainStep(trainer *train.Trainer, b train.Batch) ([]*tensors.Tensor, error) {
	db, err := dp.Batch(b)
	if err != nil {
		return nil, err
	}
	return trainer.DistributedTrainStep(distributed.AutoSharding, dp.Devices, db)
}
