package figure

import (
	"fmt"
	"image/color"
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

// Minus is s less ref at the x values both have: a difference plot, for
// curves that share most of their shape and would otherwise cover one another.
func (s Series) Minus(ref Series) Series {
	refY := make(map[float64]float64, len(ref.X))
	for i, x := range ref.X {
		refY[x] = ref.Y[i]
	}
	diff := Series{Name: s.Name, Dashed: s.Dashed}
	for i, x := range s.X {
		if y, ok := refY[x]; ok {
			diff.X, diff.Y = append(diff.X, x), append(diff.Y, s.Y[i]-y)
		}
	}
	return diff
}

// Plot is a line plot, drawn offline with the standard library and the Go
// fonts: as PNG, what notebooks show, and as SVG, for saving a figure to a
// file (os.WriteFile("loss.svg", []byte(p.SVG()), 0o644)): no scripts, no CDN.
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool // base-2 axes when the range is under 2^12, else base 10
	Width, Height         int  // pixels; 0 means 640×360
	Series                []Series
}

// palette is matplotlib's "tab10".
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var (
	white     = color.RGBA{0xff, 0xff, 0xff, 0xff}
	frame     = color.RGBA{0x33, 0x33, 0x33, 0xff}
	gridLine  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	textColor = color.RGBA{0, 0, 0, 0xff}
	noColor   = color.RGBA{}
)

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

// Size is the plot's nominal size in pixels: Width×Height (640×360 when
// unset), widened by as much as the longest legend name needs past the
// default right margin, so that no name is cut and the drawing area keeps its
// size.
func (p Plot) Size() (w, h int) {
	w, h = p.Width, p.Height
	if w == 0 || h == 0 {
		w, h = 640, 360
	}
	return w + int(math.Ceil(p.rightMargin())) - marginRight, h
}

// legendLine is the legend's sample line and the gap before a name; legendGap the space after the name.
const legendLine, legendGap = 36, 8

// rightMargin is the width of the legend column: the default, or the longest name's.
func (p Plot) rightMargin() float64 {
	widest := 0.0
	for _, s := range p.Series {
		widest = max(widest, textWidth(s.Name))
	}
	return max(marginRight, legendLine+widest+legendGap)
}

// seriesColours gives each series a colour of the palette in turn, except a
// dashed reference curve whose name extends an earlier solid series' name
// ("ECP" and "ECP bound", "dense" and "dense (paper)"): it takes that
// series' colour, so that a measurement and its reference read as a pair.
func seriesColours(series []Series) []color.RGBA {
	colours := make([]color.RGBA, len(series))
	next := 0
	for i, s := range series {
		owner := -1
		for j, earlier := range series[:i] {
			extends := strings.HasPrefix(s.Name, earlier.Name+" ")
			if s.Dashed && !earlier.Dashed && extends && (owner < 0 || len(earlier.Name) > len(series[owner].Name)) {
				owner = j
			}
		}
		if owner >= 0 {
			colours[i] = colours[owner]
			continue
		}
		colours[i] = palette[next%len(palette)]
		next++
	}
	return colours
}

// SVG renders the plot as a self-contained SVG document.
func (p Plot) SVG() string {
	w, h := p.Size()
	var c svgCanvas
	fmt.Fprintf(&c, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`, w, h, w, h, fontSize)
	p.draw(&c, w, h)
	c.WriteString(`</svg>`)
	return c.String()
}

// pngScale is device pixels per nominal pixel: the PNG is shown at the
// nominal size and stays sharp on high-density screens.
const pngScale = 2

// PNG renders the plot as a PNG image of pngScale times its nominal size.
func (p Plot) PNG() ([]byte, error) {
	w, h := p.Size()
	c := newPNGCanvas(w, h, pngScale)
	p.draw(c, w, h)
	if c.err != nil {
		return nil, fmt.Errorf("plot %q: %w", p.Title, c.err)
	}
	return encode(c.img)
}

// draw lays the plot out. Series with no drawable point still get a legend entry.
func (p Plot) draw(c canvas, w, h int) {
	var xs, ys []float64
	for _, s := range p.Series {
		for i := range min(len(s.X), len(s.Y)) {
			if p.usable(s.X[i], s.Y[i]) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
		}
	}
	right := float64(w) - p.rightMargin()
	x := newAxis(xs, p.LogX, marginLeft, right)
	y := newAxis(ys, p.LogY, float64(h-marginBottom), marginTop)
	c.rect(0, 0, float64(w), float64(h), white, noColor)
	c.text(point{marginLeft, 20}, p.Title, textStyle{size: 14, bold: true})
	p.drawAxes(c, x, y, right, h)
	colours := seriesColours(p.Series)
	for i, s := range p.Series {
		p.drawSeries(c, s, colours[i], x, y)
		legendY := float64(marginTop + 18*i)
		c.polyline([]point{{right + 10, legendY}, {right + 30, legendY}}, colours[i], 2, s.Dashed)
		c.text(point{right + legendLine, legendY}, s.Name, textStyle{size: fontSize, middle: true})
	}
}

func (p Plot) drawAxes(c canvas, x, y axis, right float64, h int) {
	bottom := float64(h - marginBottom)
	for _, t := range x.ticks() {
		px := x.value(t)
		c.polyline([]point{{px, marginTop}, {px, bottom}}, gridLine, 1, false)
		c.text(point{px, bottom + 16}, formatTick(t), textStyle{size: fontSize, anchor: anchorMiddle})
	}
	for _, t := range y.ticks() {
		py := y.value(t)
		c.polyline([]point{{marginLeft, py}, {right, py}}, gridLine, 1, false)
		c.text(point{marginLeft - 6, py}, formatTick(t), textStyle{size: fontSize, anchor: anchorEnd, middle: true})
	}
	c.rect(marginLeft, marginTop, right-marginLeft, bottom-marginTop, noColor, frame)
	c.text(point{(marginLeft + right) / 2, float64(h - 8)}, p.XLabel, textStyle{size: fontSize, anchor: anchorMiddle})
	c.text(point{16, (marginTop + bottom) / 2}, p.YLabel, textStyle{size: fontSize, anchor: anchorMiddle, up: true})
}

func (p Plot) drawSeries(c canvas, s Series, colour color.RGBA, x, y axis) {
	var points []point
	for i := range min(len(s.X), len(s.Y)) {
		if p.usable(s.X[i], s.Y[i]) {
			points = append(points, point{x.value(s.X[i]), y.value(s.Y[i])})
		}
	}
	c.polyline(points, colour, 2, s.Dashed)
	if len(points) <= 24 { // mark the measurements of short series (scaling curves)
		for _, pt := range points {
			c.dot(pt, 3, colour)
		}
	}
}

// Text is the plot in words, for readers that show no image.
func (p Plot) Text() string {
	names := make([]string, len(p.Series))
	for i, s := range p.Series {
		names[i] = s.Name
	}
	return fmt.Sprintf("[plot: %s; x: %s, y: %s; series: %s]", p.Title, p.XLabel, p.YLabel, strings.Join(names, ", "))
}

// Show displays the plot in the notebook.
func (p Plot) Show() { showFigure("", p) }
