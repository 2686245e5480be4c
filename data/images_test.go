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
