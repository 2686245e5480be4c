package kernel

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Series is one line of a plot. Points with a NaN or infinite Y (or a
// non-positive value on a log axis) are left out.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool // reference curves: the papers' numbers, bounds such as k·L
}

// Plot is a line plot rendered as a self-contained SVG (no scripts, no CDN).
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool // base-2 axes when the range is under 2^12, else base 10
	Width, Height         int  // pixels; 0 means 640×360
	Series                []Series
}

// palette is matplotlib's "tab10".
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// Layout of the drawing area inside the SVG.
const (
	marginLeft, marginRight, marginTop, marginBottom = 64, 150, 32, 48
)

// axis maps data values onto pixels, linearly or logarithmically.
type axis struct {
	lo, hi   float64 // data range (log-transformed when log)
	from, to float64 // pixel range
	log      bool
	base     float64
}

func (a axis) value(v float64) float64 {
	if a.log {
		v = math.Log(v) / math.Log(a.base)
	}
	if a.hi == a.lo {
		return (a.from + a.to) / 2
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// ticks picks round tick values inside the range.
func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for e := math.Ceil(a.lo - 1e-9); e <= a.hi+1e-9; e++ {
			out = append(out, math.Pow(a.base, e))
		}
		return out
	}
	// Whole multiples of the step: adding the step up would carry rounding
	// errors, and the multiple 0 is +0 (Ceil of a small negative is -0, drawn "-0").
	step := niceStep((a.hi - a.lo) / 5)
	for k := int(math.Ceil(a.lo/step - 1e-9)); float64(k)*step <= a.hi+step*1e-9; k++ {
		out = append(out, float64(k)*step)
	}
	return out
}

// niceStep rounds a raw tick spacing to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func formatTick(v float64) string {
	switch av := math.Abs(v); {
	case av >= 1e6 || (av > 0 && av < 1e-3):
		return strconv.FormatFloat(v, 'g', 3, 64)
	case av >= 1000 && math.Mod(av, 1024) == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'g', 6, 64)
	}
}

// usable reports whether a point can be drawn on the plot's axes.
func (p Plot) usable(x, y float64) bool {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	return finite(x) && finite(y) && (!p.LogX || x > 0) && (!p.LogY || y > 0)
}

// newAxis spans the values (with a 5 % margin on linear axes).
func newAxis(values []float64, log bool, from, to float64) axis {
	a := axis{lo: math.Inf(1), hi: math.Inf(-1), from: from, to: to, log: log, base: 10}
	if log {
		if len(values) > 0 && slicesMax(values)/slicesMin(values) < 4096 {
			a.base = 2
		}
		for i, v := range values {
			values[i] = math.Log(v) / math.Log(a.base)
		}
	}
	for _, v := range values {
		a.lo, a.hi = math.Min(a.lo, v), math.Max(a.hi, v)
	}
	if len(values) == 0 {
		a.lo, a.hi = 0, 1
	}
	if log {
		a.lo, a.hi = math.Floor(a.lo), math.Ceil(a.hi)
		if a.lo == a.hi {
			a.hi++
		}
	} else {
		pad := 0.05 * (a.hi - a.lo)
		if pad == 0 {
			pad = math.Max(0.5, math.Abs(a.lo)*0.05)
		}
		a.lo, a.hi = a.lo-pad, a.hi+pad
	}
	return a
}

func slicesMin(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// SVG renders the plot. Series with no drawable point still get a legend entry.
func (p Plot) SVG() string {
	w, h := p.Width, p.Height
	if w == 0 || h == 0 {
		w, h = 640, 360
	}
	var xs, ys []float64
	for _, s := range p.Series {
		for i := range min(len(s.X), len(s.Y)) {
			if p.usable(s.X[i], s.Y[i]) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
		}
	}
	x := newAxis(xs, p.LogX, marginLeft, float64(w-marginRight))
	y := newAxis(ys, p.LogY, float64(h-marginBottom), marginTop)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`, marginLeft, html.EscapeString(p.Title))
	p.drawAxes(&b, x, y, w, h)
	for i, s := range p.Series {
		p.drawSeries(&b, s, palette[i%len(palette)], x, y)
		ly := marginTop + 18*i
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 3"`
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`, w-marginRight+10, ly, w-marginRight+30, ly, palette[i%len(palette)], dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`, w-marginRight+36, ly, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func (p Plot) drawAxes(b *strings.Builder, x, y axis, w, h int) {
	bottom, right := float64(h-marginBottom), float64(w-marginRight)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`, marginLeft, marginTop, right-marginLeft, bottom-marginTop)
	for _, t := range x.ticks() {
		px := x.value(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, px, marginTop, px, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px, bottom+16, formatTick(t))
	}
	for _, t := range y.ticks() {
		py := y.value(t)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, marginLeft, py, right, py)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, marginLeft-6, py, formatTick(t))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, (marginLeft+right)/2, h-8, html.EscapeString(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (marginTop+bottom)/2, html.EscapeString(p.YLabel))
}

func (p Plot) drawSeries(b *strings.Builder, s Series, colour string, x, y axis) {
	var points []string
	for i := range min(len(s.X), len(s.Y)) {
		if p.usable(s.X[i], s.Y[i]) {
			points = append(points, fmt.Sprintf("%.1f,%.1f", x.value(s.X[i]), y.value(s.Y[i])))
		}
	}
	if len(points) == 0 {
		return
	}
	dash := ""
	if s.Dashed {
		dash = ` stroke-dasharray="6 3"`
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, colour, dash, strings.Join(points, " "))
	if len(points) <= 24 { // mark the measurements of short series (scaling curves)
		for _, pt := range points {
			xy := strings.SplitN(pt, ",", 2)
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, xy[0], xy[1], colour)
		}
	}
}

// Show displays the plot in the notebook.
func (p Plot) Show() { ShowSVG(p.SVG()) }
