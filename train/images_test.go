package train

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

// stripes is a generated image set of three classes (horizontal, vertical and
// diagonal stripes on 4×4 images, with noise): a set whose class count is not
// the 10 of the built-in ones.
func stripes() data.ImageSource {
	return data.ImageSource{Name: "stripes-test", StandsFor: "a three-class test set", Source: "generated in the test",
		Classes: []string{"horizontal", "vertical", "diagonal"}, Offline: true,
		Prepare: func(context.Context, string, io.Writer) error { return nil },
		Files:   func(string) []string { return nil },
		Load: func(_ string, classes []string) (*data.ImageSet, error) {
			random := rand.New(rand.NewPCG(1, 2))
			images := make([]data.Image, data.ValidSize+64)
			for i := range images {
				label := i % len(classes)
				pixels := make([]byte, 16)
				for p := range pixels {
					row, col := p/4, p%4
					on := []bool{row%2 == 0, col%2 == 0, (row+col)%2 == 0}[label]
					pixels[p] = byte(random.IntN(40))
					if on {
						pixels[p] += 200
					}
				}
				images[i] = data.Image{Pixels: pixels, Label: label}
			}
			return data.NewImageSet("stripes-test", 4, 4, 1, classes, images[:data.ValidSize+48], images[data.ValidSize+48:])
		}}
}

// TestImageSetOfAnyClassCount: an image set's class count comes from its
// record, so a set of three classes trains a classifier of three outputs.
func TestImageSetOfAnyClassCount(t *testing.T) {
	if err := data.RegisterImageSet(stripes()); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), tinyTask(t, map[string]string{"model": "full", "causal": "false", "data": "stripes-test", "examples": "0"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	three, err := CountParams(r.Config, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Task != TaskClassify || r.ValidAcc == nil || r.Params != three {
		t.Errorf("task %s, valid acc %v, %d parameters; want a classifier of 3 classes (%d parameters)", r.Task, r.ValidAcc, r.Params, three)
	}
	shown, err := showImages("", "stripes-test", 2, 1)
	if err != nil || len(shown) != 2 || shown[0].Label != "diagonal" {
		t.Errorf("shown test images %+v (%v); want the first labelled by its class name, diagonal", shown, err)
	}
	if err := data.RegisterImageSet(stripes()); err == nil {
		t.Error("the same name registered twice")
	}
}
