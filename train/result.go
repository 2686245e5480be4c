package train

import (
	"fmt"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/gomlx/ml/model"
)

// Progress is reported after every optimizer step (and carries the
// evaluation on evaluation steps).
type Progress struct {
	Step       int           `json:"step"`
	Steps      int           `json:"steps"`
	Loss       float64       `json:"loss"`
	LR         float64       `json:"lr"`
	GradNorm   float64       `json:"grad_norm"`
	TokensPerS float64       `json:"tokens_per_s"`
	Elapsed    time.Duration `json:"elapsed"`
	Eval       *Eval         `json:"eval,omitempty"`
	// Compiling is a report before the first step of a process: its graph is
	// being compiled (seconds on XLA); Loss and the rest are not set.
	Compiling bool `json:"compiling,omitempty"`
}

// Result is the outcome of a training run; its JSON is what `ecpi train --json` prints.
type Result struct {
	Model       string        `json:"model"`
	Data        string        `json:"data"`
	Task        string        `json:"task"`
	Tokenizer   string        `json:"tokenizer,omitempty"`
	Config      models.Config `json:"config"`
	Params      int64         `json:"params"`
	Backend     string        `json:"backend"`
	Devices     int           `json:"devices"`
	Steps       int           `json:"steps"`
	TrainLoss   float64       `json:"train_loss"` // mean of the last 10 steps
	ValidLoss   float64       `json:"valid_loss"`
	ValidPPL    float64       `json:"valid_ppl,omitempty"`
	ValidBPC    float64       `json:"valid_bpc,omitempty"`
	ValidBPB    float64       `json:"valid_bpb,omitempty"` // bits per byte of text, token-level LM
	ValidAcc    *float64      `json:"valid_acc,omitempty"`
	ValidStep   int           `json:"valid_step"` // the step the valid figures were measured at; 0: not evaluated
	TokensPerS  float64       `json:"tokens_per_s"`
	MsPerStep   float64       `json:"ms_per_step"`
	CompileMS   float64       `json:"compile_ms"` // compiling the training graph (the first step's extra time)
	Seconds     float64       `json:"seconds"`
	Checkpoint  string        `json:"checkpoint"`
	Run         string        `json:"run"`
	Interrupted bool          `json:"interrupted,omitempty"`
	// BranchedFrom is the checkpoint a resume continued in a new run folder,
	// since its own run had later checkpoints (kept as they were).
	BranchedFrom string    `json:"branched_from,omitempty"`
	Losses       []float64 `json:"losses"`         // every step's train loss, from step 1
	Eval         *Eval     `json:"eval,omitempty"` // the last evaluation in full (loss by position, recall)
}

// Text is the human summary.
func (r *Result) Text() string {
	var b strings.Builder
	task := r.Task
	if r.Tokenizer != "" {
		task += ", " + r.Tokenizer
	}
	fmt.Fprintf(&b, "%s on %s (%s): %d steps, %d parameters, backend %s", r.Model, r.Data, task, r.Steps, r.Params, r.Backend)
	if r.Devices > 1 {
		fmt.Fprintf(&b, " on %d devices", r.Devices)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "train loss %.4f   %s\n", r.TrainLoss, r.validText())
	speed := "speed not measured (the first step compiles and is not timed)"
	if r.MsPerStep > 0 {
		speed = fmt.Sprintf("%.0f tokens/s, %.0f ms/step", r.TokensPerS, r.MsPerStep)
	}
	fmt.Fprintf(&b, "%s, %.1f s   %s\n", speed, r.Seconds, Sparkline(r.Losses, 40))
	if r.Interrupted {
		b.WriteString("interrupted: ")
	}
	fmt.Fprintf(&b, "checkpoint %s", r.Checkpoint)
	if r.BranchedFrom != "" {
		fmt.Fprintf(&b, "\nresumed from %s in a new run folder: its own run has later checkpoints, kept as they were", r.BranchedFrom)
	}
	return b.String()
}

// validText is what the last evaluation measured, or that there was none.
func (r *Result) validText() string {
	if r.ValidStep == 0 {
		return "no evaluation yet"
	}
	if r.Eval != nil && r.Eval.Recall != nil {
		return "valid " + r.Eval.recallText()
	}
	s := fmt.Sprintf("valid loss %.4f", r.ValidLoss)
	if r.ValidPPL > 0 {
		s += fmt.Sprintf("   valid ppl %.3f", r.ValidPPL)
	}
	if r.ValidBPC > 0 {
		s += fmt.Sprintf("   valid bpc %.4f", r.ValidBPC)
	}
	if r.ValidBPB > 0 {
		s += fmt.Sprintf("   valid bits/byte %.4f", r.ValidBPB)
	}
	if r.ValidAcc != nil {
		s += fmt.Sprintf("   valid acc %.2f%%", 100**r.ValidAcc)
	}
	if r.ValidStep != r.Steps {
		s += fmt.Sprintf("   (evaluated at step %d)", r.ValidStep)
	}
	return s
}

// countParams counts the model's trainable parameters (optimizer state excluded).
func countParams(store *model.Store) int64 {
	var n int64
	for v := range store.IterVariables() {
		if v.Trainable {
			n += int64(v.Shape().Size())
		}
	}
	return n
}
