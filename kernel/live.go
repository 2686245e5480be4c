package kernel

import (
	"fmt"
	"html"
	"time"

	"github.com/ecpi-dev/ecpi/train"
	"github.com/janpfeifer/gonb/gonbui"
)

// Live is a loss plot that redraws in place while train.Run runs: pass its
// Progress method as Run's progress callback. It redraws at most every
// Interval and always at the last step and on evaluations.
type Live struct {
	Title    string
	Interval time.Duration

	id         string
	last       time.Time
	steps      []float64
	losses     []float64
	evalSteps  []float64
	evalLosses []float64
	status     string
}

// NewLive starts a live plot with a unique display id.
func NewLive(title string) *Live {
	return &Live{Title: title, Interval: time.Second, id: "ecpi-live-" + gonbui.UniqueID()}
}

// Progress records one step and redraws when due.
func (l *Live) Progress(p train.Progress) {
	if p.Compiling {
		gonbui.UpdateHTML(l.id, fmt.Sprintf("<pre>%s: compiling the training graph…</pre>", html.EscapeString(l.Title)))
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
		gonbui.UpdateHTML(l.id, l.HTML())
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

// HTML is the plot with a status line under it.
func (l *Live) HTML() string {
	return fmt.Sprintf(`<div>%s<pre>%s</pre></div>`, l.Plot().SVG(), html.EscapeString(l.status))
}
