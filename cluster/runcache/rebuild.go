package runcache

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ecpi-dev/ecpi/train"
)

// rebuild makes the result of the finished run in dir again, from its last
// checkpoint: its final evaluation measured again (the same split, batches and
// protocol as the run's own), its losses and options from the checkpoint. How
// long it trained is not kept in a checkpoint: the result has no speed and
// Seconds counts the evaluation only.
func rebuild(ctx context.Context, o train.Options, dir string) (*train.Result, error) {
	l, err := train.Open(dir, o.Backend)
	if err != nil {
		return nil, fmt.Errorf("rebuilding the result of %s: %w", dir, err)
	}
	e, err := l.Evaluate(ctx, train.EvalOptions{Split: "valid", Batches: o.EvalBatches, Protocol: o.Protocol})
	if err != nil {
		return nil, fmt.Errorf("rebuilding the result of %s: %w", dir, err)
	}
	backend, err := train.Backend(o.Backend) // the one Open chose, kept per process
	if err != nil {
		return nil, err
	}
	m := l.Manifest
	eval := e.Eval
	eval.Step = m.Step
	r := &train.Result{Model: m.Family, Data: m.Options.Data, Task: m.Task, Config: m.Config, Params: params(m),
		Backend: backend.Name, Devices: o.Devices, Steps: m.Step, Checkpoint: l.Dir, Run: dir, Losses: m.Losses, Eval: &eval,
		ValidLoss: eval.Loss, ValidPPL: eval.PPL, ValidBPC: eval.BPC, ValidBPB: eval.BPB, ValidStep: eval.Step}
	if m.Task != train.TaskLM {
		acc := eval.Acc
		r.ValidAcc = &acc
	}
	if l.Tokenizer() != nil && m.Options.Tokenizer != "" {
		r.Tokenizer = m.Options.Tokenizer
	}
	tail := m.Losses[max(0, len(m.Losses)-10):]
	for _, loss := range tail {
		r.TrainLoss += loss / float64(len(tail))
	}
	return r, publish(filepath.Join(dir, resultFile), r)
}

// params counts a checkpoint's trainable parameters: the optimizer keeps a
// first moment of each trainable variable, of its shape.
func params(m *train.Manifest) int64 {
	var n int64
	for _, v := range m.Variables {
		if !strings.HasSuffix(v.Path, "_1st_moment") {
			continue
		}
		size := int64(1)
		for _, d := range v.Dims {
			size *= int64(d)
		}
		n += size
	}
	return n
}

// publish writes a result into the run cache atomically: whole or not at all.
func publish(path string, r *train.Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
