package xla

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
	"github.com/gomlx/gomlx/ml/train"
)

// DataAxis names the mesh axis that batches are split along.
const DataAxis = "data"

// DataParallel spreads every batch over several devices of one backend: the first axis of each
// input and label is split across the devices, variables stay replicated, and XLA's AutoSharding
// (Shardy) partitions the step and inserts the all-reduce of the gradients. The result equals one
// step on the whole batch on one device.
type DataParallel struct {
	Mesh    *distributed.DeviceMesh
	Devices []compute.DeviceNum
}

// NewDataParallel uses the first n devices of the backend (all of them when n <= 0). It needs
// an XLA backend: GoMLX implements AutoSharding only there.
func NewDataParallel(backend compute.Backend, n int) (*DataParallel, error) {
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
	mesh, err := distributed.NewDeviceMesh([]int{n}, []string{DataAxis})
	if err != nil {
		return nil, err
	}
	devices := make([]compute.DeviceNum, n)
	for i := range devices {
		devices[i] = compute.DeviceNum(i)
	}
	return &DataParallel{Mesh: mesh, Devices: devices}, nil
}

// Shard splits t along its first axis, one slice per device; that axis must divide evenly.
func (dp *DataParallel) Shard(t *tensors.Tensor) (*dtensor.Tensor, error) {
	shape := t.Shape()
	if shape.Rank() == 0 {
		return nil, fmt.Errorf("cannot split a scalar across %d devices", len(dp.Devices))
	}
	if batch := shape.Dimensions[0]; batch%len(dp.Devices) != 0 {
		return nil, fmt.Errorf("batch size %d must be a multiple of the %d devices it is split across", batch, len(dp.Devices))
	}
	spec, err := distributed.BuildSpec(dp.Mesh).S(DataAxis).Done()
	if err != nil {
		return nil, err
	}
	return dtensor.ShardTensor(spec, t)
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
