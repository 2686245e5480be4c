package figure

import (
	"cmp"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// A plot is laid out once on a canvas, in pixels of its nominal size, and
// written either as PNG (what notebooks show) or as SVG (for saving a figure
// to a file, sharp at any size).
type canvas interface {
	rect(x, y, w, h float64, fill, stroke color.RGBA) // noColor: no fill or no stroke
	polyline(pts []point, colour color.RGBA, width float64, dashed bool)
	dot(at point, radius float64, colour color.RGBA)
	text(at point, s string, st textStyle)
}

type point struct{ x, y float64 }

type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

type textStyle struct {
	size   float64
	bold   bool
	anchor anchor
	middle bool // at.y is the middle of the text, not its baseline
	up     bool // turned to read upwards (a y-axis label)
}

const fontSize = 12

// dash is the on and off lengths of dashed lines.
var dash = [2]float64{6, 3}

// svgCanvas writes SVG elements.
type svgCanvas struct{ strings.Builder }

func svgColour(c color.RGBA) string {
	if c.A == 0 {
		return "none"
	}
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

func svgDash(dashed bool) string {
	if !dashed {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%g %g"`, dash[0], dash[1])
}

func (s *svgCanvas) rect(x, y, w, h float64, fill, stroke color.RGBA) {
	fmt.Fprintf(s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="%s"/>`, x, y, w, h, svgColour(fill), svgColour(stroke))
}

func (s *svgCanvas) polyline(pts []point, colour color.RGBA, width float64, dashed bool) {
	coords := make([]string, len(pts))
	for i, p := range pts {
		coords[i] = fmt.Sprintf("%.1f,%.1f", p.x, p.y)
	}
	fmt.Fprintf(s, `<polyline fill="none" stroke="%s" stroke-width="%g"%s points="%s"/>`, svgColour(colour), width, svgDash(dashed), strings.Join(coords, " "))
}

func (s *svgCanvas) dot(at point, radius float64, colour color.RGBA) {
	fmt.Fprintf(s, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"/>`, at.x, at.y, radius, svgColour(colour))
}

func (s *svgCanvas) text(at point, text string, st textStyle) {
	attrs := fmt.Sprintf(`x="%.1f" y="%.1f"`, at.x, at.y)
	if st.up {
		attrs = fmt.Sprintf(`transform="translate(%.1f %.1f) rotate(-90)"`, at.x, at.y)
	}
	attrs += [...]string{"", ` text-anchor="middle"`, ` text-anchor="end"`}[st.anchor]
	if st.middle {
		attrs += ` dominant-baseline="middle"`
	}
	if st.size != fontSize {
		attrs += fmt.Sprintf(` font-size="%g"`, st.size)
	}
	if st.bold {
		attrs += ` font-weight="bold"`
	}
	fmt.Fprintf(s, `<text %s>%s</text>`, attrs, html.EscapeString(text))
}

// pngCanvas rasterises with anti-aliasing at scale device pixels per
// nominal pixel, so that the image stays sharp on high-density screens.
type pngCanvas struct {
	img   *image.RGBA
	scale float64
	faces map[textStyle]font.Face
	err   error // the first failure to make a font face
}

func newPNGCanvas(w, h int, scale float64) *pngCanvas {
	return &pngCanvas{
		img:   image.NewRGBA(image.Rect(0, 0, int(float64(w)*scale), int(float64(h)*scale))),
		scale: scale,
		faces: map[textStyle]font.Face{},
	}
}

func (c *pngCanvas) rect(x, y, w, h float64, fill, stroke color.RGBA) {
	if fill.A != 0 {
		c.fill(fill, []point{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}})
	}
	if stroke.A != 0 {
		c.polyline([]point{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}, {x, y}}, stroke, 1, false)
	}
}

// polyline strokes each segment as a quadrilateral and rounds the joins with dots.
func (c *pngCanvas) polyline(pts []point, colour color.RGBA, width float64, dashed bool) {
	var shapes [][]point
	for _, seg := range segments(pts, dashed) {
		shapes = append(shapes, strokeQuad(seg[0], seg[1], width/2))
		shapes = append(shapes, disc(seg[1], width/2))
	}
	c.fill(colour, shapes...)
}

func (c *pngCanvas) dot(at point, radius float64, colour color.RGBA) {
	c.fill(colour, disc(at, radius))
}

// fill paints the union of the polygons (nominal coordinates) in one colour.
// The rasteriser covers only their bounding box: one the size of the image
// for every grid line and dot made a redraw cost ~100 MB.
func (c *pngCanvas) fill(colour color.RGBA, polygons ...[]point) {
	box := image.Rectangle{}
	for _, poly := range polygons {
		for _, p := range poly {
			x, y := p.x*c.scale, p.y*c.scale
			box = box.Union(image.Rect(int(math.Floor(x)), int(math.Floor(y)), int(math.Ceil(x))+1, int(math.Ceil(y))+1))
		}
	}
	box = box.Intersect(c.img.Bounds())
	if box.Empty() {
		return
	}
	r := vector.NewRasterizer(box.Dx(), box.Dy())
	for _, poly := range polygons {
		if len(poly) < 3 {
			continue
		}
		// The rasteriser adds signed areas: give every polygon the same
		// orientation, or overlapping ones would cancel instead of merging.
		if signedArea(poly) < 0 {
			poly = reversed(poly)
		}
		for i, p := range poly {
			x, y := float32(p.x*c.scale-float64(box.Min.X)), float32(p.y*c.scale-float64(box.Min.Y))
			if i == 0 {
				r.MoveTo(x, y)
			} else {
				r.LineTo(x, y)
			}
		}
		r.ClosePath()
	}
	r.Draw(c.img, box, image.NewUniform(colour), image.Point{})
}

func (c *pngCanvas) text(at point, s string, st textStyle) {
	face, err := c.face(st)
	if err != nil {
		c.err = cmp.Or(c.err, err)
		return
	}
	m := face.Metrics()
	width := float64(font.MeasureString(face, s)) / 64
	ascent, descent := float64(m.Ascent)/64, float64(m.Descent)/64
	along := [...]float64{0, -width / 2, -width}[st.anchor] // where the text starts, along its direction
	baseline := 0.0                                         // below at, across the text
	if st.middle {
		baseline = float64(m.CapHeight) / 64 / 2
	}
	// The text is drawn level on its own image, then turned if it reads upwards.
	w, h := int(math.Ceil(width))+1, int(math.Ceil(ascent+descent))+1
	level := image.NewRGBA(image.Rect(0, 0, w, h))
	d := font.Drawer{Dst: level, Src: image.NewUniform(textColor), Face: face, Dot: fixed.P(0, int(math.Round(ascent)))}
	d.DrawString(s)
	x, y := at.x*c.scale, at.y*c.scale
	if !st.up {
		corner := image.Pt(int(math.Round(x+along)), int(math.Round(y+baseline-ascent)))
		draw.Draw(c.img, level.Bounds().Add(corner), level, image.Point{}, draw.Over)
		return
	}
	turned := image.NewRGBA(image.Rect(0, 0, h, w))
	for i := range w {
		for j := range h {
			turned.SetRGBA(j, w-1-i, level.RGBAAt(i, j))
		}
	}
	corner := image.Pt(int(math.Round(x+baseline-ascent)), int(math.Round(y-along))-w+1)
	draw.Draw(c.img, turned.Bounds().Add(corner), turned, image.Point{}, draw.Over)
}

// goFonts are the Go fonts (Latin, Greek, Cyrillic and common symbols such as π, ×, ≤), parsed once.
var goFonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return [2]*opentype.Font{}, err
	}
	bold, err := opentype.Parse(gobold.TTF)
	return [2]*opentype.Font{regular, bold}, err
})

// face is the font face of a style's size and weight, in device pixels.
func (c *pngCanvas) face(st textStyle) (font.Face, error) {
	key := textStyle{size: st.size, bold: st.bold}
	if f, ok := c.faces[key]; ok {
		return f, nil
	}
	fonts, err := goFonts()
	if err != nil {
		return nil, fmt.Errorf("parsing the embedded Go fonts: %w", err)
	}
	f := fonts[0]
	if st.bold {
		f = fonts[1]
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: st.size * c.scale, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("font face of %g pixels: %w", st.size*c.scale, err)
	}
	c.faces[key] = face
	return face, nil
}

// segments splits a polyline into the segments to stroke: all of them, or
// the "on" parts of the dash pattern along its length.
func segments(pts []point, dashed bool) [][2]point {
	var out [][2]point
	on, left := true, dash[0] // dash state carried across vertices
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if !dashed {
			out = append(out, [2]point{a, b})
			continue
		}
		length := math.Hypot(b.x-a.x, b.y-a.y)
		for done := 0.0; done < length; {
			step := math.Min(left, length-done)
			if on {
				out = append(out, [2]point{lerp(a, b, done/length), lerp(a, b, (done+step)/length)})
			}
			done += step
			if left -= step; left <= 0 {
				on = !on
				left = dash[0]
				if !on {
					left = dash[1]
				}
			}
		}
	}
	return out
}

func lerp(a, b point, t float64) point { return point{a.x + t*(b.x-a.x), a.y + t*(b.y-a.y)} }

// strokeQuad is the band of half-width hw around segment ab.
func strokeQuad(a, b point, hw float64) []point {
	length := math.Hypot(b.x-a.x, b.y-a.y)
	if length == 0 {
		return nil
	}
	nx, ny := -(b.y-a.y)/length*hw, (b.x-a.x)/length*hw
	return []point{{a.x + nx, a.y + ny}, {b.x + nx, b.y + ny}, {b.x - nx, b.y - ny}, {a.x - nx, a.y - ny}}
}

// disc approximates a circle by a 16-gon.
func disc(c point, r float64) []point {
	pts := make([]point, 16)
	for i := range pts {
		a := 2 * math.Pi * float64(i) / float64(len(pts))
		pts[i] = point{c.x + r*math.Cos(a), c.y + r*math.Sin(a)}
	}
	return pts
}

func signedArea(poly []point) float64 {
	var a float64
	for i, p := range poly {
		q := poly[(i+1)%len(poly)]
		a += p.x*q.y - q.x*p.y
	}
	return a / 2
}

func reversed(poly []point) []point {
	out := make([]point, len(poly))
	for i, p := range poly {
		out[len(poly)-1-i] = p
	}
	return out
}

// legendFace is the regular Go font at fontSize nominal pixels, made once: the
// layout measures every legend name with it, for Size and again for drawing.
// A face is not safe for concurrent use (live plots draw beside others), hence
// measuring under measuring.
var measuring sync.Mutex
var legendFace = sync.OnceValues(func() (font.Face, error) {
	fonts, err := goFonts()
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(fonts[0], &opentype.FaceOptions{Size: fontSize, DPI: 72, Hinting: font.HintingNone})
})

// textWidth is the nominal width of s at fontSize, what the layout reserves for
// it (an SVG viewer's sans-serif runs close to it).
func textWidth(s string) float64 {
	face, err := legendFace()
	if err != nil { // the fonts are embedded, so this is not expected: estimate instead
		return 0.6 * fontSize * float64(utf8.RuneCountInString(s))
	}
	measuring.Lock()
	defer measuring.Unlock()
	return float64(font.MeasureString(face, s)) / 64
}
