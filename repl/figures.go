package repl

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/train"
)

// The pictures commands show in a notebook session (Call.Show); on a terminal
// their text forms stand for them.

// showPlot sends a plot with its caption.
func showPlot(c *Call, p figure.Plot, caption string) {
	if c.Events == nil {
		return
	}
	png, err := p.PNG()
	if err != nil {
		c.Printf("(plot not drawn: %v)\n", err)
		return
	}
	w, h := p.Size()
	c.Show(nb.Figure{PNG: png, Text: p.Text(), Caption: caption, Width: w, Height: h})
}

// maskFigureN bounds the index-set picture: one cell per (query, key) pair.
const maskFigureN = 128

// showMask draws K(i) of the first positions of one head.
func showMask(c *Call, p models.Pattern, head, n int, config string) {
	if c.Events == nil {
		return
	}
	shown := min(n, maskFigureN)
	skips, hasSkips := p.(models.SkipKeys)
	kinds := make([][]figure.KeyKind, shown)
	for i := range kinds {
		kinds[i] = make([]figure.KeyKind, shown)
		for j := range kinds[i] {
			switch {
			case !p.Allows(head, i, j):
			case hasSkips && skips.IsSkip(head, i, j):
				kinds[i][j] = figure.KeySkip
			default:
				kinds[i][j] = figure.KeyLocal
			}
		}
	}
	cell := max(2, 384/shown)
	png, err := figure.IndexSetPNG(kinds, shown-1, cell)
	if err != nil {
		c.Printf("(picture not drawn: %v)\n", err)
		return
	}
	caption := fmt.Sprintf("K(i) of `%s`, head %d, positions 0..%d: row i is query i, column j key j; blue: keys in K(i), "+
		"red: the last query's, white: not attended", config, head, shown-1)
	if hasSkips {
		caption += "; orange: skip keys"
	}
	c.Show(nb.Figure{PNG: png, Caption: caption, Text: caption})
}

// showAttention draws each layer's attention weights, one heatmap per head.
func showAttention(c *Call, maps []train.AttentionMap) {
	if c.Events == nil {
		return
	}
	for _, m := range maps {
		heads := make([][][]float64, len(m.Weights))
		for h, rows := range m.Weights {
			heads[h] = make([][]float64, len(rows))
			for i, row := range rows {
				heads[h][i] = make([]float64, len(row))
				for j, w := range row {
					heads[h][i][j] = float64(w)
				}
			}
		}
		rows := len(heads[0])
		png, err := figure.HeadsPNG(heads, max(1, 256/max(rows, 1)))
		if err != nil {
			c.Printf("(layer %d not drawn: %v)\n", m.Layer, err)
			continue
		}
		caption := fmt.Sprintf("layer %d (%s): attention weights per head, query rows, key columns; bright: more weight, on the scale of the bar at the right", m.Layer, m.Pattern)
		c.Show(nb.Figure{PNG: png, Caption: caption, Text: caption})
	}
}

// showReceptiveField plots the measured reach per depth beside the bound.
func showReceptiveField(c *Call, r *train.RFResult) {
	measured := figure.Series{Name: "measured"}
	bound := figure.Series{Name: "bound"}
	for _, l := range r.Layers {
		measured.X, measured.Y = append(measured.X, float64(l.Layers)), append(measured.Y, float64(l.Measured))
		if l.Bound >= 0 {
			bound.X, bound.Y = append(bound.X, float64(l.Layers)), append(bound.Y, float64(l.Bound))
		}
	}
	p := figure.Plot{Title: "receptive field of " + r.Model, XLabel: "layers", YLabel: "tokens back", Series: []figure.Series{measured, bound}}
	showPlot(c, p, fmt.Sprintf("farthest input position whose gradient reaches position %d, per depth, beside the pattern's bound", r.Position))
}

// showLosses plots the training loss of runs against the step.
func showLosses(c *Call, title string, results []*train.Result) {
	p := figure.Plot{Title: title, XLabel: "step", YLabel: "train loss (nats)"}
	for _, r := range results {
		s := figure.Series{Name: r.Model}
		for step, loss := range r.Losses {
			s.X, s.Y = append(s.X, float64(step+1)), append(s.Y, loss)
		}
		p.Series = append(p.Series, s)
	}
	showPlot(c, p, "")
}
