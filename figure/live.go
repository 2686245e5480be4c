package figure

import (
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// Live is a loss plot that redraws in place while a run trains: Step after
// every optimizer step, Eval after an evaluation. It redraws at most every
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
	id := gonbui.UniqueId()
	return &Live{Title: title, Interval: time.Second, plotID: "ecpi-live-plot-" + id, statusID: "ecpi-live-status-" + id}
}

// Compiling says the run's graph is compiling (seconds on XLA, before the first step).
func (l *Live) Compiling() {
	show(l.statusID, bundle{protocol.MIMETextPlain: l.Title + ": compiling the training graph…"}, nil)
}

// Step records one optimizer step; status is the line shown under the plot.
func (l *Live) Step(step, steps int, loss float64, status string) {
	l.steps = append(l.steps, float64(step))
	l.losses = append(l.losses, loss)
	l.status = status
	l.redraw(step >= steps)
}

// Eval records an evaluation at a step; summary is added to the status line.
func (l *Live) Eval(step int, loss float64, summary string) {
	l.evalSteps = append(l.evalSteps, float64(step))
	l.evalLosses = append(l.evalLosses, loss)
	l.status += "  " + summary
	l.redraw(true)
}

func (l *Live) redraw(now bool) {
	if now || time.Since(l.last) >= l.Interval {
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
