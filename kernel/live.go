package kernel

import (
	"fmt"
	"time"

	"github.com/ecpi-dev/ecpi/train"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// Live is a loss plot that redraws in place while train.Run runs: pass its
// Progress method as Run's progress callback. It redraws at most every
// Interval and always at the last step and on evaluations.
type Live struct {
	Title    string
	Interval time.Duration

	plotID     string // the plot's display, redrawn in place
	statusID   string // the status line's, under it
	last       time.Time
	steps      []float64
	losses     []float64
	evalSteps  []float64
	evalLosses []float64
	status     string
}

// NewLive starts a live plot with a unique display id.
func NewLive(title string) *Live {
	id := gonbui.UniqueID()
	return &Live{Title: title, Interval: time.Second, plotID: "ecpi-live-plot-" + id, statusID: "ecpi-live-status-" + id}
}

// Progress records one step and redraws when due.
func (l *Live) Progress(p train.Progress) {
	if p.Compiling {
		show(l.statusID, bundle{protocol.MIMETextPlain: l.Title + ": compiling the training graph…"}, nil)
		return
	}
	l.steps = append(l.steps, float64(p.Step))
	l.losses = append(l.losses, p.Loss)
	l.status = fmt.Sprintf("step %d/%d  loss %.4f  lr %.2e  %.0f tok/s  %s", p.Step, p.Steps, p.Loss, p.LR, p.TokensPerS, p.Elapsed.Round(time.Second))
	if p.Eval != nil {
		l.evalSteps = append(l.evalSteps, float64(p.Step))
		l.evalLosses = append(l.evalLosses, p.Eval.Loss)
		l.status += "  " + p.Eval.Summary()
	}
	if p.Eval != nil || p.Step >= p.Steps || time.Since(l.last) >= l.Interval {
		l.last = time.Now()
		showFigure(l.plotID, l.Plot())
		show(l.statusID, bundle{protocol.MIMETextPlain: l.status}, nil)
	}
}

// Plot is the current loss curve (train loss per step, validation loss at evaluations).
func (l *Live) Plot() Plot {
	return Plot{
		Title: l.Title, XLabel: "step", YLabel: "loss (nats)",
		Series: []Series{
			{Name: "train", X: l.steps, Y: l.losses},
			{Name: "valid", X: l.evalSteps, Y: l.evalLosses},
		},
	}
}

// Status is the line under the plot: the last step, and the last evaluation on evaluation steps.
func (l *Live) Status() string { return l.status }
