package figure

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"

	"git.sr.ht/~sbinet/gg"
	xdraw "golang.org/x/image/draw"
	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
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

// Plot is a line plot, drawn offline by gonum/plot with its embedded
// Liberation fonts: as PNG, what notebooks show, and as SVG, for saving a
// figure to a file (os.WriteFile("loss.svg", []byte(p.SVG()), 0o644)).
// Its legend stands to the right of the drawing area.
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool // base-2 axes when the range is under 2^12, else base 10
	Width, Height         int  // pixels; 0 means 640×360
	Series                []Series
}

// tab10 is matplotlib's "tab10".
var tab10 = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// A nominal pixel is a point (1/72 inch), gonum/plot's unit: the PNG is drawn
// at pngScale times that and shown at the nominal size, sharp on high-density screens.
const pngScale = 2

// newPNGCanvas is a white canvas of w×h nominal pixels, scale device pixels
// to each. It scales images by the nearest pixel, so that a heatmap's cells
// keep sharp edges (gonum/plot's own canvas blurs them, bilinearly): its
// drawing context is set up as vgimg.NewWith sets up its own.
func newPNGCanvas(w, h vg.Length, scale int) draw.Canvas {
	img := image.NewRGBA(image.Rect(0, 0, int(math.Ceil(float64(w)))*scale, int(math.Ceil(float64(h)))*scale))
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt()
	ctx.InvertY()
	ctx.SetInterpolator(xdraw.NearestNeighbor)
	return draw.New(vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(72*scale)))
}

// encodePNG is the canvas as PNG.
func encodePNG(c draw.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c.Canvas.(*vgimg.Canvas)}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}

const (
	fontSize     = 12
	legendColumn = 150 // the legend's share of the default width; a longer name widens the plot
	legendGap    = 10  // between the drawing area and the legend, and after the longest name
)

// sans is Liberation Sans of a size (gonum/plot's default is the serif).
func sans(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// Size is the plot's nominal size in pixels: Width×Height (640×360 when
// unset), widened by as much as the longest legend name needs past the
// default legend column, so that no name is cut and the drawing area keeps its size.
func (p Plot) Size() (w, h int) {
	w, h = p.Width, p.Height
	if w == 0 || h == 0 {
		w, h = 640, 360
	}
	return w + int(math.Ceil(float64(p.legendColumn()))) - legendColumn, h
}

// legendColumn is the width right of the drawing area: the default, or the
// legend's with a gap either side.
func (p Plot) legendColumn() vg.Length {
	legend := newLegend()
	for _, s := range p.Series {
		legend.Add(s.Name)
	}
	r := legend.Rectangle(draw.Canvas{})
	return max(legendColumn, r.Max.X-r.Min.X+2*legendGap)
}

// newLegend is an empty legend in the plot's style, names after their lines.
func newLegend() plot.Legend {
	legend := plot.NewLegend()
	legend.TextStyle.Font = sans(fontSize, false)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = 24
	legend.Padding = 4
	return legend
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
		colours[i] = tab10[next%len(tab10)]
		next++
	}
	return colours
}

// PNG renders the plot as a PNG image of pngScale times its nominal size.
func (p Plot) PNG() ([]byte, error) {
	w, h := p.Size()
	c := newPNGCanvas(vg.Length(w), vg.Length(h), pngScale)
	if err := p.draw(c); err != nil {
		return nil, err
	}
	return encodePNG(c)
}

// SVG renders the plot as an SVG document. Its text names the Liberation
// fonts, which a viewer without them replaces with a like sans-serif.
func (p Plot) SVG() (string, error) {
	w, h := p.Size()
	c := vgsvg.New(vg.Length(w), vg.Length(h))
	if err := p.draw(draw.New(c)); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("plot %q: writing SVG: %w", p.Title, err)
	}
	return buf.String(), nil
}

// draw lays the plot out on c: gonum/plot's plot left of a legend column.
// Series with no drawable point still get a legend entry.
func (p Plot) draw(c draw.Canvas) error {
	drawing, legend, err := p.build()
	if err != nil {
		return fmt.Errorf("plot %q: %w", p.Title, err)
	}
	column := p.legendColumn()
	area := draw.Crop(c, 0, -column, 0, 0)
	drawing.Draw(area)
	legendArea := draw.Crop(c, c.Max.X-c.Min.X-column+legendGap, 0, 0, 0)
	legendArea.Max.Y = drawing.DataCanvas(area).Max.Y
	legend.Draw(legendArea)
	return nil
}

// build makes gonum/plot's plot of the series and their legend.
func (p Plot) build() (*plot.Plot, plot.Legend, error) {
	drawing := plot.New()
	drawing.Title.Text = p.Title
	drawing.Title.TextStyle.Font = sans(14, true)
	drawing.Title.Padding = 8
	drawing.X.Label.Text, drawing.Y.Label.Text = p.XLabel, p.YLabel
	for _, a := range []*plot.Axis{&drawing.X, &drawing.Y} {
		a.Tick.Marker = distinctTicks{}
		a.Label.TextStyle.Font = sans(fontSize, false)
		a.Tick.Label.Font = sans(fontSize-1, false)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xdd}
	grid.Horizontal.Color = color.Gray{0xdd}
	drawing.Add(grid)

	legend := newLegend()
	colours := seriesColours(p.Series)
	for i, s := range p.Series {
		line, dots, err := p.series(s, colours[i])
		if err != nil {
			return nil, legend, fmt.Errorf("series %q: %w", s.Name, err)
		}
		if len(line.XYs) > 0 {
			drawing.Add(line)
		}
		if dots != nil {
			drawing.Add(dots)
		}
		legend.Add(s.Name, line)
	}
	logAxis(&drawing.X, p.LogX)
	logAxis(&drawing.Y, p.LogY)
	return drawing, legend, nil
}

// series is a series' line of its drawable points and, for short series
// (scaling curves), a dot at each measurement.
func (p Plot) series(s Series, colour color.RGBA) (*plotter.Line, *plotter.Scatter, error) {
	var points plotter.XYs
	for i := range min(len(s.X), len(s.Y)) {
		if p.usable(s.X[i], s.Y[i]) {
			points = append(points, plotter.XY{X: s.X[i], Y: s.Y[i]})
		}
	}
	line, err := plotter.NewLine(points)
	if err != nil {
		return nil, nil, err
	}
	line.Color, line.Width = colour, 2
	if s.Dashed {
		line.Dashes = []vg.Length{6, 3}
	}
	if len(points) == 0 || len(points) > 24 {
		return line, nil, nil
	}
	dots, err := plotter.NewScatter(points)
	if err != nil {
		return nil, nil, err
	}
	dots.Shape, dots.Color, dots.Radius = draw.CircleGlyph{}, colour, 3
	return line, dots, nil
}

// usable reports whether a point can be drawn on the plot's axes.
func (p Plot) usable(x, y float64) bool {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	return finite(x) && finite(y) && (!p.LogX || x > 0) && (!p.LogY || y > 0)
}

// logAxis makes an axis logarithmic, spanning whole powers of its base: 2
// (the sequence lengths and periods plotted) when the data span less than
// 2^12, else 10, with gonum/plot's ticks.
func logAxis(a *plot.Axis, log bool) {
	if !log || a.Min > a.Max { // linear, or no data
		return
	}
	a.Scale = plot.LogScale{}
	if a.Max/a.Min >= 4096 {
		a.Min, a.Max = math.Pow(10, math.Floor(math.Log10(a.Min))), math.Pow(10, math.Ceil(math.Log10(a.Max)))
		a.Tick.Marker = plot.LogTicks{Prec: -1}
		return
	}
	lo, hi := math.Floor(math.Log2(a.Min)), math.Ceil(math.Log2(a.Max))
	hi = max(hi, lo+1)
	a.Min, a.Max = math.Exp2(lo), math.Exp2(hi)
	a.Tick.Marker = powersOfTwo(lo, hi)
}

// powersOfTwo labels every power of two from 2^lo to 2^hi.
func powersOfTwo(lo, hi float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for e := lo; e <= hi; e++ {
		v := math.Exp2(e)
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return ticks
}

// distinctTicks are gonum/plot's default ticks, labelled again with as many
// decimals as tell them apart where its labels repeat: a loss that moved by
// a few hundredths (a live plot's first steps) had four ticks labelled 2.6.
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for decimals := 0; repeated(ticks) && decimals <= 9; decimals++ {
		for i, t := range ticks {
			if !t.IsMinor() {
				ticks[i].Label = strconv.FormatFloat(t.Value, 'f', decimals, 64)
			}
		}
	}
	return ticks
}

// repeated reports whether two major ticks have the same label.
func repeated(ticks []plot.Tick) bool {
	seen := map[string]bool{}
	for _, t := range ticks {
		if !t.IsMinor() {
			if seen[t.Label] {
				return true
			}
			seen[t.Label] = true
		}
	}
	return false
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
