package figure

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Heatmaps are drawn at one device pixel per nominal pixel: their callers
// show the PNG at its own size, and cell is the pixels an entry takes.

// Colours of an index-set diagram.
var (
	colourBlocked = color.RGBA{0xf2, 0xf2, 0xf2, 0xff} // keys the query may not see
	colourLocal   = color.RGBA{0x1f, 0x77, 0xb4, 0xff} // keys in the local window (or every key of non-π patterns)
	colourSkip    = color.RGBA{0xff, 0x7f, 0x0e, 0xff} // π-skip keys
	colourQuery   = color.RGBA{0xd6, 0x27, 0x28, 0xff} // the highlighted query row
)

// viridisStops are viridis' ends and three stops between: readable in print
// and for colour-blind readers. gonum/plot's moreland interpolates them with
// the luminance rising evenly from the lowest value to the highest.
var viridisStops = []color.Color{
	color.RGBA{0x44, 0x01, 0x54, 0xff}, color.RGBA{0x3b, 0x52, 0x8b, 0xff}, color.RGBA{0x21, 0x91, 0x8c, 0xff},
	color.RGBA{0x5e, 0xc9, 0x62, 0xff}, color.RGBA{0xfd, 0xe7, 0x25, 0xff},
}

// viridisOver is the colour scale from the matrices' least value to their
// greatest, once it has checked them and the cell size.
func viridisOver(matrices [][][]float64, cell int) (palette.ColorMap, error) {
	lo, hi, err := valueRange(matrices, cell)
	if err != nil {
		return nil, err
	}
	scale, err := moreland.NewLuminance(viridisStops)
	if err != nil {
		return nil, fmt.Errorf("viridis colour scale: %w", err)
	}
	scale.SetMin(lo)
	scale.SetMax(hi)
	return scale, nil
}

// matrix is a heatmap's values, row 0 at the top: gonum/plot's grids count
// rows upwards, so grid row r is the matrix's row len(m)-1-r.
type matrix [][]float64

func (m matrix) Dims() (cols, rows int) { return len(m[0]), len(m) }
func (m matrix) Z(col, row int) float64 { return m[len(m)-1-row][col] }
func (m matrix) X(col int) float64      { return float64(col) }
func (m matrix) Y(row int) float64      { return float64(row) }

// positionTicks mark entries by their whole positions: columns from the
// left or, when rows is set, a matrix's rows from the top.
type positionTicks struct{ rows int }

func (t positionTicks) Ticks(lo, hi float64) []plot.Tick {
	position := func(v float64) float64 { return v }
	if t.rows > 0 {
		position = func(v float64) float64 { return float64(t.rows-1) - v }
		lo, hi = position(hi), position(lo)
	}
	first, last := max(math.Ceil(lo), 0), math.Floor(hi) // the positions shown
	var ticks []plot.Tick
	if last-first > 10 {
		for _, tick := range (plot.DefaultTicks{}).Ticks(first, last) {
			if !tick.IsMinor() {
				tick.Label = ""
				if tick.Value == math.Round(tick.Value) {
					tick.Label = strconv.Itoa(int(tick.Value))
				}
			}
			ticks = append(ticks, tick)
		}
	} else { // gonum/plot's ticks would fall between positions: mark each
		for v := first; v <= last; v++ {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
		}
	}
	for i := range ticks {
		ticks[i].Value = position(ticks[i].Value)
	}
	return ticks
}

// HeatmapPNG draws a matrix (rows = queries, columns = keys) with cell×cell
// pixels per entry, on a colour scale from its minimum to its maximum.
func HeatmapPNG(values [][]float64, cell int) ([]byte, error) {
	return HeadsPNG([][][]float64{values}, cell)
}

// HeadsPNG draws one heatmap per head side by side (attention weights of one
// layer: heads × queries × keys) with cell×cell pixels per entry, each with
// its query and key positions on axes, all on one colour scale, which a bar
// at the right shows.
func HeadsPNG(heads [][][]float64, cell int) ([]byte, error) {
	scale, err := viridisOver(heads, cell)
	if err != nil {
		return nil, err
	}
	plots := make([]*plot.Plot, len(heads))
	for h, m := range heads {
		plots[h] = heatmapPlot(newCells(m, scale.Palette(256), scale.Min(), scale.Max()), "head "+strconv.Itoa(h), "key", "query")
	}
	bar := plot.New()
	bar.Add(&plotter.ColorBar{ColorMap: scale, Vertical: true})
	bar.HideX()
	bar.X.Padding = 0
	bar.Y.Tick.Label.Font = sans(fontSize-1, false)

	cols, rows := matrix(heads[0]).Dims()
	area := vg.Point{X: vg.Length(cols * cell), Y: vg.Length(rows * cell)}
	size, at := frame(plots[0], area)
	barSize, barAt := frame(bar, vg.Point{X: 16, Y: area.Y})
	stride := whole(size.X) + 2*margin
	first := vg.Point{X: whole(at.X), Y: whole(at.Y)} // head 0's entries
	width := stride*vg.Length(len(heads)) + whole(barSize.X) + margin
	c := newPNGCanvas(width, first.Y+whole(size.Y-at.Y)+margin, 1)
	for h, p := range plots {
		p.Draw(placed(c, first.Add(vg.Point{X: stride * vg.Length(h)}), size, at))
	}
	bar.Draw(placed(c, vg.Point{X: stride*vg.Length(len(heads)) + whole(barAt.X), Y: first.Y}, barSize, barAt))
	return encodePNG(c)
}

// ImagesPNG draws pictures (rows of values) side by side with cell×cell
// pixels per value, all on one colour scale, without axes: data examples.
func ImagesPNG(images [][][]float64, cell int) ([]byte, error) {
	scale, err := viridisOver(images, cell)
	if err != nil {
		return nil, err
	}
	const gap = 6
	cols, rows := matrix(images[0]).Dims()
	size := vg.Point{X: vg.Length(cols * cell), Y: vg.Length(rows * cell)}
	c := newPNGCanvas((size.X+gap)*vg.Length(len(images))-gap, size.Y, 1)
	for i, m := range images {
		p := plot.New()
		p.HideAxes()
		p.X.Padding, p.Y.Padding = 0, 0
		p.Add(newCells(m, scale.Palette(256), scale.Min(), scale.Max()))
		p.Draw(placed(c, vg.Point{X: (size.X + gap) * vg.Length(i)}, size, vg.Point{}))
	}
	return encodePNG(c)
}

// cells is a heatmap drawn cell by cell as an image, without the glyph boxes
// gonum/plot's HeatMap reports (±5 points around each cell's centre), which
// would shrink the drawing area of cells smaller than 10 pixels.
type cells struct{ heatmap *plotter.HeatMap }

func newCells(m matrix, colours palette.Palette, lo, hi float64) cells {
	heatmap := plotter.NewHeatMap(m, colours)
	heatmap.Min, heatmap.Max, heatmap.Rasterized = lo, hi, true
	return cells{heatmap}
}

func (c cells) Plot(canvas draw.Canvas, p *plot.Plot)       { c.heatmap.Plot(canvas, p) }
func (c cells) DataRange() (xmin, xmax, ymin, ymax float64) { return c.heatmap.DataRange() }

// valueRange checks that the matrices are rectangular and of one shape
// and cell a positive size, and gives the values' range (widened by one when
// all are equal, so that the colour scale has a length).
func valueRange(matrices [][][]float64, cell int) (lo, hi float64, err error) {
	if len(matrices) == 0 || len(matrices[0]) == 0 || len(matrices[0][0]) == 0 {
		return 0, 0, fmt.Errorf("heatmap needs at least one non-empty matrix")
	}
	if cell < 1 {
		return 0, 0, fmt.Errorf("cell size %d must be at least 1 pixel", cell)
	}
	rows, cols := len(matrices[0]), len(matrices[0][0])
	lo, hi = math.Inf(1), math.Inf(-1)
	for h, m := range matrices {
		if len(m) != rows {
			return 0, 0, fmt.Errorf("matrix %d has %d rows, matrix 0 has %d", h, len(m), rows)
		}
		for i, row := range m {
			if len(row) != cols {
				return 0, 0, fmt.Errorf("matrix %d row %d has %d columns, expected %d", h, i, len(row), cols)
			}
			for _, v := range row {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo == hi {
		hi = lo + 1
	}
	return lo, hi, nil
}

// KeyKind is what a (query, key) cell of an index-set diagram shows.
type KeyKind uint8

// The kinds of keys an index-set diagram tells apart.
const (
	KeyBlocked KeyKind = iota // not in K(i)
	KeyLocal                  // in K(i) (the local window, for patterns with skips)
	KeySkip                   // a skip key (π-Attention's second kind of key)
)

// keyColours are the colours of the kinds, then of query's local keys.
var keyColours = keyPalette{colourBlocked, colourLocal, colourSkip, colourQuery}

type keyPalette []color.Color

func (p keyPalette) Colors() []color.Color { return p }

// IndexSetPNG draws K(i) for the first n queries of one head: kinds[i][j] is
// key j's kind for query i. Local keys (every key of patterns without skips)
// are blue, skip keys orange; query, when in range, is a red row so that one
// K(i) stands out.
func IndexSetPNG(kinds [][]KeyKind, query, cell int) ([]byte, error) {
	n := len(kinds)
	if n < 1 || cell < 1 {
		return nil, fmt.Errorf("index-set diagram needs n >= 1 and cell >= 1, got n=%d cell=%d", n, cell)
	}
	shades := make(matrix, n)
	for i, row := range kinds {
		if len(row) != n {
			return nil, fmt.Errorf("index-set diagram: query %d has %d keys, want %d", i, len(row), n)
		}
		shades[i] = make([]float64, n)
		for j, kind := range row {
			shades[i][j] = float64(kind)
			if i == query && kind == KeyLocal {
				shades[i][j] = float64(len(keyColours) - 1)
			}
		}
	}
	p := heatmapPlot(newCells(shades, keyColours, 0, float64(len(keyColours)-1)), "", "key j", "query i")
	size, at := frame(p, vg.Point{X: vg.Length(n * cell), Y: vg.Length(n * cell)})
	origin := vg.Point{X: whole(at.X), Y: whole(at.Y)}
	c := newPNGCanvas(origin.X+whole(size.X-at.X)+margin, origin.Y+whole(size.Y-at.Y)+margin, 1)
	p.Draw(placed(c, origin, size, at))
	return encodePNG(c)
}

// heatmapPlot is a heatmap with row 0 at the top, the axes labelled.
func heatmapPlot(heatmap cells, title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.Title.TextStyle.Font = title, sans(fontSize, true)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(fontSize, false)
		a.Tick.Label.Font = sans(fontSize-1, false)
		a.Padding = 2 // keeps the axis line off the first row and column
	}
	_, rows := heatmap.heatmap.GridXYZ.Dims()
	p.X.Tick.Marker, p.Y.Tick.Marker = positionTicks{}, positionTicks{rows}
	p.Add(heatmap)
	return p
}

// margin is the white space right of and above the heatmaps.
const margin = 8

// frame is the room p's axes and title take around its drawing area when
// that is exactly area: the canvas' size and where the area starts on it.
// gonum/plot's layout is piecewise affine in the canvas' size, with slopes
// near 1 (tick labels near an end are kept inside by shrinking the area), so
// adding what the area lacks converges in a few steps.
func frame(p *plot.Plot, area vg.Point) (size, at vg.Point) {
	areaOn := func(size vg.Point) vg.Rectangle {
		return p.DataCanvas(draw.Canvas{Rectangle: vg.Rectangle{Max: size}}).Rectangle
	}
	size = area.Add(vg.Point{X: 100, Y: 100})
	for range 20 {
		lack := area.Sub(areaOn(size).Size())
		if math.Abs(float64(lack.X)) < 1e-3 && math.Abs(float64(lack.Y)) < 1e-3 {
			break
		}
		size = size.Add(lack)
	}
	return size, areaOn(size).Min
}

// placed is the part of c of the given size on which a plot framed so
// (frame's at) draws its area from origin on.
func placed(c draw.Canvas, origin, size, at vg.Point) draw.Canvas {
	corner := origin.Sub(at)
	return draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: corner, Max: corner.Add(size)}}
}

// whole rounds a length up to whole pixels, so that entries start on a pixel's edge.
func whole(l vg.Length) vg.Length { return vg.Length(math.Ceil(float64(l))) }
