package repl

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/train"
)

// LossLine draws a training run's progress as one live line: step, loss and
// a sparkline of the loss so far. On a terminal it redraws in place, fitted to
// the terminal's width (a wrapped line cannot be redrawn), with evaluations
// printed above it; in a pipe or log it writes a line per evaluation and one
// at the end, so logs stay readable. Use Update as train.Run's progress
// callback and End after.
type LossLine struct {
	events  func(nb.Event) // a notebook session: progress goes to the cell as events
	out     io.Writer
	label   string
	live    bool
	width   int // columns of the terminal, when live
	losses  []float64
	last    train.Progress
	spinner chan struct{} // closed to stop the "compiling" spinner
}

// NewLossLine draws on the call's output; with --json it draws nothing, so
// stdout carries only the result object.
func NewLossLine(c *Call, label string) *LossLine {
	if c.Events != nil {
		return &LossLine{events: c.Events, label: label}
	}
	out := c.Out
	if c.JSON {
		out = io.Discard
	}
	f, isFile := out.(*os.File)
	live := isFile && term.IsTerminal(int(f.Fd()))
	return &LossLine{out: out, label: label, live: live, width: terminalWidth(out)}
}

// sparkWidth is the sparkline's share of the line.
const sparkWidth = 40

func (l *LossLine) Update(p train.Progress) {
	if l.events != nil {
		l.send(p)
		return
	}
	l.stopSpinner()
	if p.Compiling {
		l.startSpinner()
		return
	}
	l.losses = append(l.losses, p.Loss)
	l.last = p
	switch {
	case l.live && p.Eval != nil:
		fmt.Fprintf(l.out, "\r\x1b[K  step %d: %s\n%s", p.Step, p.Eval.Summary(), l.line())
	case l.live:
		fmt.Fprintf(l.out, "\r\x1b[K%s", l.line())
	case p.Eval != nil:
		fmt.Fprintf(l.out, "%s\n  step %d: %s\n", l.line(), p.Step, p.Eval.Summary())
	}
}

// line is the progress line; on a terminal the sparkline shrinks (and the
// line is cut) to leave the last column free, so the line never wraps.
func (l *LossLine) line() string {
	p := l.last
	head := fmt.Sprintf("%s step %*d/%d  loss %.4f ", l.label, len(strconv.Itoa(p.Steps)), p.Step, p.Steps, p.Loss)
	tail := fmt.Sprintf("  %.0f tok/s", p.TokensPerS)
	spark := sparkWidth
	if l.live {
		spark = min(spark, l.width-1-utf8.RuneCountInString(head+tail))
	}
	line := head + train.Sparkline(l.losses, spark) + tail
	if runes := []rune(line); l.live && len(runes) > l.width-1 {
		line = string(runes[:max(0, l.width-1)])
	}
	return line
}

// startSpinner says the training graph is compiling: a spinner redrawn in
// place on a terminal, one line in a log.
func (l *LossLine) startSpinner() {
	if !l.live {
		fmt.Fprintf(l.out, "%scompiling the training graph...\n", labelPrefix(l.label))
		return
	}
	l.spinner = make(chan struct{})
	go func(stop chan struct{}) {
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		start := time.Now()
		for i := 0; ; i++ {
			fmt.Fprintf(l.out, "\r\x1b[K%s%c compiling the training graph (%.0f s)", labelPrefix(l.label), frames[i%len(frames)], time.Since(start).Seconds())
			select {
			case <-stop:
				fmt.Fprint(l.out, "\r\x1b[K")
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}(l.spinner)
}

func (l *LossLine) stopSpinner() {
	if l.spinner != nil {
		close(l.spinner)
		l.spinner = nil
		time.Sleep(5 * time.Millisecond) // let the spinner clear its line before the next one is drawn
	}
}

func labelPrefix(label string) string {
	if label == "" {
		return ""
	}
	return label + " "
}

// send is Update in a notebook session: one progress event.
func (l *LossLine) send(p train.Progress) {
	event := &nb.Progress{Run: l.label, Step: p.Step, Steps: p.Steps, Loss: p.Loss, Compiling: p.Compiling,
		Status: fmt.Sprintf("step %d/%d  loss %.4f  lr %.2e  %.0f tok/s  %s", p.Step, p.Steps, p.Loss, p.LR, p.TokensPerS, p.Elapsed.Round(time.Second))}
	if p.Eval != nil {
		event.EvalLoss, event.EvalLine = p.Eval.Loss, p.Eval.Summary()
	}
	l.events(nb.Event{Progress: event})
}

// End finishes the line after the run returns (also when it was interrupted).
func (l *LossLine) End() {
	if l.events != nil {
		return
	}
	l.stopSpinner()
	if len(l.losses) == 0 {
		return
	}
	if l.live {
		fmt.Fprintf(l.out, "\r\x1b[K%s\n", l.line())
	} else if l.last.Eval == nil {
		fmt.Fprintln(l.out, l.line())
	}
}
