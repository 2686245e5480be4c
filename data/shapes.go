package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Shapes is a small vision-language retrieval task, a proxy for MSCOCO and
// Flickr30K image-text retrieval: grayscale images of one to three shapes on
// a canvas, each described by a caption that names every shape's size,
// brightness, kind and place ("a large bright circle at the top left and a
// small dim cross in the center"). Captions are compositional and every pair
// in a set is unique, so retrieving the right caption for an image (and the
// right image for a caption) needs the whole picture, not one of its parts.

// Pair is one image and its caption, as tokens: the image's pixels row by
// row (0..255) and the caption's bytes padded with zeros.
type Pair struct {
	Image   []int32
	Caption []int32
	Text    string
}

// ShapesOptions sets the canvas and the captions.
type ShapesOptions struct {
	Side       int // pixels per side; the image has Side² tokens
	CaptionLen int // bytes per caption, padded
	MaxShapes  int // 1..MaxShapes shapes per image
}

// DefaultShapes is a 24 x 24 canvas (576 pixel tokens), captions of up to 144
// bytes and up to 3 shapes.
var DefaultShapes = ShapesOptions{Side: 24, CaptionLen: 144, MaxShapes: 3}

var (
	shapeKinds  = []string{"square", "circle", "triangle", "cross", "ring"}
	shapeSizes  = []string{"small", "large"}
	shapeShades = []string{"dim", "bright"}
	// The canvas is a 2 x 2 grid of places.
	placeNames = []string{"top left", "top right", "bottom left", "bottom right"}
)

type shape struct{ kind, size, shade, place int }

// ShapePairs generates count distinct pairs (no caption twice) from seed.
func ShapePairs(count int, o ShapesOptions, seed uint64) ([]Pair, error) {
	if o.Side < 8 || o.MaxShapes < 1 || o.MaxShapes > len(placeNames) {
		return nil, fmt.Errorf("shapes options %+v: need a side of at least 8 pixels and 1..%d shapes", o, len(placeNames))
	}
	rng := rand.New(rand.NewPCG(seed, 0x7368617065))
	seen := map[string]bool{}
	var out []Pair
	for tries := 0; len(out) < count; tries++ {
		if tries > 100*count {
			return nil, fmt.Errorf("shapes: only %d distinct pairs found for %d requested", len(out), count)
		}
		shapes := randomShapes(rng, 1+rng.IntN(o.MaxShapes))
		text := caption(shapes)
		if seen[text] {
			continue
		}
		if len(text) > o.CaptionLen {
			return nil, fmt.Errorf("shapes: caption of %d bytes is longer than caption_len=%d", len(text), o.CaptionLen)
		}
		seen[text] = true
		tokens := make([]int32, o.CaptionLen)
		for i := range len(text) {
			tokens[i] = int32(text[i])
		}
		out = append(out, Pair{Image: draw(shapes, o.Side), Caption: tokens, Text: text})
	}
	return out, nil
}

// PoolPixels averages a side×side image (row-major pixel tokens) over
// factor×factor squares: an image of side/factor, anti-aliased.
func PoolPixels(pixels []int32, side, factor int) ([]int32, error) {
	if factor < 1 || side%factor != 0 || len(pixels) != side*side {
		return nil, fmt.Errorf("pool=%d must divide the image side %d", factor, side)
	}
	return poolSquares(pixels, side, side, factor), nil
}

// randomShapes picks shapes in distinct places, listed in reading order.
func randomShapes(rng *rand.Rand, count int) []shape {
	places := rng.Perm(len(placeNames))[:count]
	shapes := make([]shape, count)
	for i, place := range places {
		shapes[i] = shape{rng.IntN(len(shapeKinds)), rng.IntN(len(shapeSizes)), rng.IntN(len(shapeShades)), place}
	}
	for i := range shapes { // reading order: the caption does not depend on the draw order
		for j := i + 1; j < len(shapes); j++ {
			if shapes[j].place < shapes[i].place {
				shapes[i], shapes[j] = shapes[j], shapes[i]
			}
		}
	}
	return shapes
}

func caption(shapes []shape) string {
	parts := make([]string, len(shapes))
	for i, s := range shapes {
		parts[i] = fmt.Sprintf("a %s %s %s at the %s", shapeSizes[s.size], shapeShades[s.shade], shapeKinds[s.kind], placeNames[s.place])
	}
	return strings.Join(parts, " and ")
}

// draw renders the shapes on a black canvas: pixel tokens 0..255, row by row.
func draw(shapes []shape, side int) []int32 {
	pixels := make([]int32, side*side)
	cell := float64(side) / 2
	for _, s := range shapes {
		cx := (float64(s.place%2) + 0.5) * cell
		cy := (float64(s.place/2) + 0.5) * cell
		radius := cell * 0.25
		if s.size == 1 {
			radius = cell * 0.45
		}
		value := int32(110)
		if s.shade == 1 {
			value = 250
		}
		for y := range side {
			for x := range side {
				if inside(s.kind, float64(x)+0.5-cx, float64(y)+0.5-cy, radius) {
					pixels[y*side+x] = value
				}
			}
		}
	}
	return pixels
}

// inside reports whether a point (relative to the shape's center) is in it.
func inside(kind int, dx, dy, r float64) bool {
	switch shapeKinds[kind] {
	case "square":
		return math.Abs(dx) <= r && math.Abs(dy) <= r
	case "circle":
		return dx*dx+dy*dy <= r*r
	case "triangle": // pointing up
		return dy <= r && dy >= -r && math.Abs(dx) <= (dy+r)/2
	case "cross":
		return (math.Abs(dx) <= r/3 && math.Abs(dy) <= r) || (math.Abs(dy) <= r/3 && math.Abs(dx) <= r)
	case "ring":
		d := math.Sqrt(dx*dx + dy*dy)
		return d <= r && d >= r*0.55
	}
	return false
}
