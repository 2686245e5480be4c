package repl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/option"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/train"
)

// DataExamples is `data show`: a few examples of a dataset, each as text (an
// excerpt, an expression, a caption) and, for images, its pixels.
type DataExamples struct {
	Name     string               `json:"name"`
	Examples []train.ShownExample `json:"examples"`
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

// dataShowArgs are the options of `data show`.
type dataShowArgs struct{ Count, Pool int }

var dataShowOptions = Options[dataShowArgs]{
	Table: option.Table[dataShowArgs]{
		// At most 16: what a screen holds.
		option.Int("count", "examples shown (at most 16)", func(a *dataShowArgs) *int { return &a.Count }, option.AtLeast(1), option.AtMost(16)),
		option.Int("pool", "image sets: average over pool×pool squares first, as train's pool= (0: none)", func(a *dataShowArgs) *int { return &a.Pool }, option.AtLeast(0)),
	},
	Defaults: dataShowArgs{Count: 4},
}

func runDataShow(c *Call) error {
	var names []string
	for _, d := range train.DataInfos() {
		names = append(names, d.Name)
	}
	if len(c.Args) != 1 || !slices.Contains(names, c.Args[0]) {
		return Usagef("data show takes one NAME: %s", strings.Join(names, ", "))
	}
	args, err := dataShowOptions.Read(c)
	if err != nil {
		return err
	}
	examples, err := train.ShowData(data.Home(), c.Args[0], args.Count, args.Pool)
	if err != nil {
		return err
	}
	shown := DataExamples{Name: c.Args[0], Examples: examples}
	if err := showExamples(c, shown); err != nil {
		return err
	}
	return c.Emit(shown)
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
	png, err := figure.ImagesPNG(images, 4)
	if err != nil {
		return err
	}
	caption := d.Name + " examples, left to right — " + strings.Join(captions, "; ")
	c.Show(nb.Figure{PNG: png, Caption: caption, Text: caption})
	return nil
}
