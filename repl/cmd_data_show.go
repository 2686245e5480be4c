package repl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/nb"
)

// DataExamples is `data show`: a few examples of a dataset, each as text (an
// excerpt, an expression, a caption) and, for images, its pixels.
type DataExamples struct {
	Name     string        `json:"name"`
	Examples []DataExample `json:"examples"`
}

// DataExample is one example: its text and label, and for images the pixels
// row by row (0..255).
type DataExample struct {
	Text   string  `json:"text"`
	Label  string  `json:"label,omitempty"`
	Pixels [][]int `json:"pixels,omitempty"`
}

// Text shows each example; images as characters of four shades.
func (d DataExamples) Text() string {
	var b strings.Builder
	for i, e := range d.Examples {
		fmt.Fprintf(&b, "— %s example %d", d.Name, i+1)
		if e.Label != "" {
			fmt.Fprintf(&b, " (%s)", e.Label)
		}
		b.WriteString("\n")
		for _, row := range e.Pixels {
			for _, v := range row {
				b.WriteString([]string{"  ", "░░", "▒▒", "██"}[min(v*4/256, 3)])
			}
			b.WriteString("\n")
		}
		if e.Text != "" {
			b.WriteString(e.Text + "\n")
		}
	}
	return b.String()
}

// maxShown keeps `data show` to what a screen holds.
const maxShown = 16

// The generated tasks `data show` knows besides corpora and image sets.
const (
	showShapes  = "shapes"
	showListOps = "listops"
	showAssoc   = "assoc"
)

func runDataShow(c *Call) error {
	names := append(append(data.CorpusNames(), data.ImageSetNames...), showShapes, showListOps, showAssoc)
	if len(c.Args) != 1 || !slices.Contains(names, c.Args[0]) {
		return Usagef("data show takes one NAME: %s", strings.Join(names, ", "))
	}
	r := c.Read()
	count, pool := r.Int("count"), r.Int("pool")
	if err := r.Err(); err != nil {
		return err
	}
	if count > maxShown {
		return Usagef("option count=%d must be at most %d", count, maxShown)
	}
	examples, err := dataExamples(c.Args[0], count, pool)
	if err != nil {
		return err
	}
	shown := DataExamples{Name: c.Args[0], Examples: examples}
	if err := showExamples(c, shown); err != nil {
		return err
	}
	return c.Emit(shown)
}

func dataExamples(name string, count, pool int) ([]DataExample, error) {
	switch {
	case name == showShapes:
		pairs, err := data.ShapePairs(count, data.DefaultShapes, 1)
		if err != nil {
			return nil, err
		}
		side := data.DefaultShapes.Side
		var out []DataExample
		for _, p := range pairs {
			image := p.Image
			if pool > 1 {
				if image, err = data.PoolPixels(image, side, pool); err != nil {
					return nil, err
				}
			}
			out = append(out, DataExample{Text: p.Text, Pixels: square(image, side/max(pool, 1))})
		}
		return out, nil
	case name == showListOps:
		examples, err := data.ListOps(count, data.ListOpsOptions{MinLen: 16, MaxLen: 48, MaxDepth: 3, MaxArgs: 4}, 1)
		if err != nil {
			return nil, err
		}
		var out []DataExample
		for _, e := range examples {
			out = append(out, DataExample{Text: data.ListOpsString(e.Tokens), Label: fmt.Sprintf("value %d", e.Label)})
		}
		return out, nil
	case name == showAssoc:
		return assocExamples(count)
	case slices.Contains(data.ImageSetNames, name):
		set, err := data.LoadImages(data.Home(), name)
		if err != nil {
			return nil, err
		}
		if pool > 1 {
			if set, err = set.Pooled(pool); err != nil {
				return nil, err
			}
		}
		var out []DataExample
		for _, img := range set.Test[:min(count, len(set.Test))] {
			pixels := make([]int32, set.Height*set.Width)
			for i := range pixels {
				pixels[i] = int32(img.Pixels[i*set.Channels]) // the first channel of colour images
			}
			out = append(out, DataExample{Label: data.ClassNames[name][img.Label], Pixels: square(pixels, set.Width)})
		}
		return out, nil
	}
	corpus, err := data.LoadCorpus(data.Home(), name)
	if err != nil {
		return nil, err
	}
	const excerpt = 240
	var out []DataExample
	for i := range count {
		start := (i + 1) * len(corpus.Valid) / (count + 1)
		out = append(out, DataExample{Text: strings.ToValidUTF8(corpus.Valid[start:min(start+excerpt, len(corpus.Valid))], "")})
	}
	return out, nil
}

// assocExamples are associative-recall sequences of 8 key-value pairs, as
// `train data=assoc n=18` builds them: the pairs, the query token, a key; the
// answer is its value.
func assocExamples(count int) ([]DataExample, error) {
	o := data.AssocRecallOptions{Pairs: 8, Keys: 8, Values: 16, Distance: 10}
	examples, err := data.AssocRecall(count, o, 1)
	if err != nil {
		return nil, err
	}
	token := func(t int32) string {
		switch {
		case int(t) < o.Keys:
			return fmt.Sprintf("k%d", t)
		case int(t) < o.Keys+o.Values:
			return fmt.Sprintf("v%d", int(t)-o.Keys)
		}
		return "?"
	}
	var out []DataExample
	for _, e := range examples {
		words := make([]string, len(e.Tokens))
		for i, t := range e.Tokens {
			words[i] = token(t)
		}
		out = append(out, DataExample{Text: strings.Join(words, " "), Label: "answer " + token(e.Label)})
	}
	return out, nil
}

// square cuts row-major pixels into rows of side.
func square(pixels []int32, side int) [][]int {
	rows := make([][]int, len(pixels)/side)
	for r := range rows {
		for _, v := range pixels[r*side : (r+1)*side] {
			rows[r] = append(rows[r], int(v))
		}
	}
	return rows
}

// showExamples draws image examples side by side in a notebook, captioned
// with their labels or texts.
func showExamples(c *Call, d DataExamples) error {
	if c.Events == nil || len(d.Examples) == 0 || d.Examples[0].Pixels == nil {
		return nil
	}
	var images [][][]float64
	var captions []string
	for i, e := range d.Examples {
		img := make([][]float64, len(e.Pixels))
		for r, row := range e.Pixels {
			for _, v := range row {
				img[r] = append(img[r], float64(v))
			}
		}
		images = append(images, img)
		captions = append(captions, fmt.Sprintf("%d: %s", i+1, e.Label+e.Text))
	}
	png, err := figure.HeadsPNG(images, 4)
	if err != nil {
		return err
	}
	caption := d.Name + " examples, left to right — " + strings.Join(captions, "; ")
	c.Show(nb.Figure{PNG: png, Caption: caption, Text: caption})
	return nil
}
