package figure

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Colours of an index-set diagram.
var (
	colourLocal   = color.RGBA{0x1f, 0x77, 0xb4, 0xff} // keys in the local window (or every key of non-π patterns)
	colourSkip    = color.RGBA{0xff, 0x7f, 0x0e, 0xff} // π-skip keys
	colourQuery   = color.RGBA{0xd6, 0x27, 0x28, 0xff} // the highlighted query row
	colourBlocked = color.RGBA{0xf2, 0xf2, 0xf2, 0xff} // keys the query may not see
	colourGap     = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

// viridisStops is a coarse viridis ramp: readable in print and for colour-blind readers.
var viridisStops = []color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x3b, 0x52, 0x8b, 0xff}, {0x21, 0x91, 0x8c, 0xff},
	{0x5e, 0xc9, 0x62, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// ramp maps t in [0,1] onto the viridis ramp.
func ramp(t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	pos := t * float64(len(viridisStops)-1)
	i := min(int(pos), len(viridisStops)-2)
	f := pos - float64(i)
	a, b := viridisStops[i], viridisStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-f) + float64(y)*f)) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// HeatmapPNG draws a matrix (rows = queries, columns = keys) with cell×cell
// pixels per entry, scaled from its minimum to its maximum.
func HeatmapPNG(values [][]float64, cell int) ([]byte, error) {
	return HeadsPNG([][][]float64{values}, cell)
}

// HeadsPNG draws one heatmap per head side by side (attention weights of one
// layer: heads × queries × keys), all on the same colour scale.
func HeadsPNG(heads [][][]float64, cell int) ([]byte, error) {
	rows, cols, err := matrixShape(heads)
	if err != nil {
		return nil, err
	}
	if cell < 1 {
		return nil, fmt.Errorf("cell size %d must be at least 1 pixel", cell)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range heads {
		for _, row := range m {
			for _, v := range row {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	scale := func(v float64) float64 {
		if hi == lo {
			return 0
		}
		return (v - lo) / (hi - lo)
	}
	const gap = 6
	img := image.NewRGBA(image.Rect(0, 0, len(heads)*(cols*cell+gap)-gap, rows*cell))
	fill(img, img.Bounds(), colourGap)
	for h, m := range heads {
		x0 := h * (cols*cell + gap)
		for i, row := range m {
			for j, v := range row {
				fill(img, image.Rect(x0+j*cell, i*cell, x0+(j+1)*cell, (i+1)*cell), ramp(scale(v)))
			}
		}
	}
	return encode(img)
}

// matrixShape checks that every head holds a rectangular matrix of one shape.
func matrixShape(heads [][][]float64) (rows, cols int, err error) {
	if len(heads) == 0 || len(heads[0]) == 0 || len(heads[0][0]) == 0 {
		return 0, 0, fmt.Errorf("heatmap needs at least one non-empty matrix")
	}
	rows, cols = len(heads[0]), len(heads[0][0])
	for h, m := range heads {
		if len(m) != rows {
			return 0, 0, fmt.Errorf("head %d has %d rows, head 0 has %d", h, len(m), rows)
		}
		for i, row := range m {
			if len(row) != cols {
				return 0, 0, fmt.Errorf("head %d row %d has %d columns, expected %d", h, i, len(row), cols)
			}
		}
	}
	return rows, cols, nil
}

// KeyKind is what a (query, key) cell of an index-set diagram shows.
type KeyKind uint8

// The kinds of keys an index-set diagram tells apart.
const (
	KeyBlocked KeyKind = iota // not in K(i)
	KeyLocal                  // in K(i) (the local window, for patterns with skips)
	KeySkip                   // a skip key (π-Attention's second kind of key)
)

// IndexSetPNG draws K(i) for the first n queries of one head: kinds[i][j] is
// key j's kind for query i. Local keys (every key of patterns without skips)
// are blue, skip keys orange; query, when in range, is a red row so that one
// K(i) stands out.
func IndexSetPNG(kinds [][]KeyKind, query, cell int) ([]byte, error) {
	n := len(kinds)
	if n < 1 || cell < 1 {
		return nil, fmt.Errorf("index-set diagram needs n >= 1 and cell >= 1, got n=%d cell=%d", n, cell)
	}
	img := image.NewRGBA(image.Rect(0, 0, n*cell, n*cell))
	for i, row := range kinds {
		for j, kind := range row {
			c := colourBlocked
			switch {
			case kind == KeyBlocked:
			case kind == KeySkip:
				c = colourSkip
			case i == query:
				c = colourQuery
			default:
				c = colourLocal
			}
			fill(img, image.Rect(j*cell, i*cell, (j+1)*cell, (i+1)*cell), c)
		}
	}
	return encode(img)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

func encode(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}
