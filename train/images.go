package train

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
)

func init() {
	registerDataset(Dataset{
		Names: data.ImageSetNames, Kind: TaskClassify, BothWays: true,
		Summary: "classification of images read as pixel sequences (sCIFAR-10 and its stand-ins); n comes from the images",
		Reads:   []string{"pool"},
		Build:   buildImages,
		Show:    showImages,
	})
}

// buildImages reads an image set; its images' length sets n.
func buildImages(o Options, cfg models.Config) (task, models.Config, error) {
	t, err := newImageTask(o)
	if err != nil {
		return nil, cfg, err
	}
	if cfg.SeqLen != 0 && cfg.SeqLen != t.length {
		return nil, cfg, fmt.Errorf("option n=%d: data %s has sequences of %d tokens, which sets n (leave n out)", cfg.SeqLen, o.Data, t.length)
	}
	cfg.SeqLen = t.length
	return t, cfg, nil
}

// showImages shows test images and their labels.
func showImages(home, name string, count, pool int) ([]ShownExample, error) {
	set, err := data.LoadImages(home, name)
	if err != nil {
		return nil, err
	}
	if pool > 1 {
		if set, err = set.Pooled(pool); err != nil {
			return nil, err
		}
	}
	var out []ShownExample
	for _, img := range set.Test[:min(count, len(set.Test))] {
		pixels := make([]int32, set.Height*set.Width)
		for i := range pixels {
			pixels[i] = int32(img.Pixels[i*set.Channels]) // the first channel of colour images
		}
		out = append(out, ShownExample{Label: set.ClassNames[img.Label], Pixels: square(pixels, set.Width)})
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

// newImageTask reads an image set as pixel sequences; their length is the model's n.
func newImageTask(o Options) (*classTask, error) {
	set, err := data.LoadImages(o.Home, o.Data)
	if err != nil {
		return nil, err
	}
	if o.Pool > 1 {
		if set, err = set.Pooled(o.Pool); err != nil {
			return nil, err
		}
	}
	splits := map[string][]data.Example{}
	for _, split := range data.SplitNames {
		if splits[split], err = set.Sequences(split, false); err != nil {
			return nil, err
		}
	}
	examples, err := newExampleSet(splits, o, longest(splits))
	return &classTask{exampleSet: examples, classes: set.Classes, voc: 256}, err
}
