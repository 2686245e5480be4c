package xla

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// tinyModel is a two-layer perceptron with fixed initial weights, so that two stores start equal.
func tinyModel(scope *model.Scope, _ any, inputs []*Node) []*Node {
	x := inputs[0]
	dense := func(name string, x *Node, in, out int) *Node {
		w := make([][]float32, in)
		for i := range w {
			w[i] = make([]float32, out)
			for j := range w[i] {
				w[i][j] = float32(math.Sin(float64(3*i+j+1))) / 2
			}
		}
		s := scope.In("%s", name)
		weights := s.VariableWithValue("weights", w).NodeValue(x)
		bias := s.VariableWithValue("bias", make([]float32, out)).NodeValue(x)
		return Add(MatMul(x, weights), ExpandAxes(bias, 0))
	}
	return []*Node{dense("out", Tanh(dense("hidden", x, 3, 4)), 4, 1)}
}

// tinyBatch is 8 examples of 3 features with a nonlinear target.
func tinyBatch() train.Batch {
	x := make([][]float32, 8)
	y := make([][]float32, 8)
	for i := range x {
		x[i] = []float32{float32(i) / 8, float32(i%3) - 1, float32(math.Cos(float64(i)))}
		y[i] = []float32{x[i][0]*x[i][1] + x[i][2]}
	}
	return train.Batch{Inputs: []*tensors.Tensor{tensors.FromValue(x)}, Labels: []*tensors.Tensor{tensors.FromValue(y)}}
}

// trainOnce takes one SGD step and returns the loss and every variable's new value by name.
func trainOnce(t *testing.T, backend compute.Backend, step func(*train.Trainer, train.Batch) ([]*tensors.Tensor, error)) (float32, map[string][]float32) {
	t.Helper()
	store := model.NewStore()
	trainer := train.NewTrainer(backend, store, tinyModel, loss.MeanSquaredError,
		optimizer.StochasticGradientDescent().WithLearningRate(0.5).Done(), nil, nil)
	metrics, err := step(trainer, tinyBatch())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]float32{}
	for v := range store.IterVariables() {
		if !strings.Contains(v.Path(), "hidden") && !strings.Contains(v.Path(), "out") {
			continue // optimizer and RNG state
		}
		value, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		values[v.Path()] = tensors.MustCopyFlatData[float32](value)
	}
	return metrics[0].Value().(float32), values
}

func TestDataParallelStepEqualsSingleDeviceStep(t *testing.T) {
	c := xlaCPU(t)
	if c.Devices < 2 {
		t.Skipf("the XLA CPU plugin exposes %d device; set XLA_FLAGS=--xla_force_host_platform_device_count=2", c.Devices)
	}
	dp, err := NewDataParallel(c.Backend, 2, DataAxis)
	if err != nil {
		t.Fatal(err)
	}

	wantLoss, want := trainOnce(t, c.Backend, (*train.Trainer).TrainStep)
	gotLoss, got := trainOnce(t, c.Backend, dp.TrainStep)

	if math.Abs(float64(gotLoss-wantLoss)) > 1e-5 {
		t.Errorf("loss on 2 devices %g, on 1 device %g", gotLoss, wantLoss)
	}
	if len(want) != 4 {
		t.Fatalf("expected 4 model variables, got %v", want)
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Fatalf("%s: %d values on 2 devices, %d on one", name, len(g), len(w))
		}
		for i := range w {
			if math.Abs(float64(g[i]-w[i])) > 1e-5 {
				t.Errorf("%s[%d] after the step: %g on 2 devices, %g on one", name, i, g[i], w[i])
			}
		}
	}
	// Biases start at zero: a step that moved them shows the comparison above compares something.
	if bias := want["/out/bias"]; len(bias) != 1 || bias[0] == 0 {
		t.Errorf("out/bias after one step = %v, want it moved from 0 (variables: %v)", bias, want)
	}
}

func TestDataParallelRules(t *testing.T) {
	goChoice, err := (&Finder{}).Choose("go")
	if err != nil {
		t.Fatal(err)
	}
	defer goChoice.Backend.Finalize()
	if _, err := NewDataParallel(goChoice.Backend, 1, DataAxis); err == nil || !strings.Contains(err.Error(), "XLA") {
		t.Errorf("Go backend: got %v, want an error saying XLA is needed", err)
	}
	if _, err := NewDataParallel(goChoice.Backend, 2, DataAxis); err == nil || !strings.Contains(err.Error(), "devices=2") {
		t.Errorf("too many devices: got %v", err)
	}
}
