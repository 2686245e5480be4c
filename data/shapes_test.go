package data

import (
	"fmt"
	"strings"
	"testing"
)

// TestShapePairs: pairs are distinct, captions name every shape, images
// differ where their captions do, and a seed gives the same set.
func TestShapePairs(t *testing.T) {
	pairs, err := ShapePairs(600, DefaultShapes, 1)
	if err != nil {
		t.Fatal(err)
	}
	seenText, seenImage := map[string]bool{}, map[string]bool{}
	for _, p := range pairs {
		if seenText[p.Text] {
			t.Fatalf("caption %q twice", p.Text)
		}
		seenText[p.Text] = true
		image := string(rune(len(p.Image))) + fmtInts(p.Image)
		if seenImage[image] {
			t.Fatalf("two captions share an image: %q", p.Text)
		}
		seenImage[image] = true
		if len(p.Image) != DefaultShapes.Side*DefaultShapes.Side || len(p.Caption) != DefaultShapes.CaptionLen {
			t.Fatalf("pair of %d pixels and %d caption bytes", len(p.Image), len(p.Caption))
		}
		if shapes := strings.Count(p.Text, " at the "); shapes < 1 || shapes > DefaultShapes.MaxShapes {
			t.Fatalf("caption %q names %d shapes", p.Text, shapes)
		}
	}
	again, _ := ShapePairs(600, DefaultShapes, 1)
	if again[599].Text != pairs[599].Text {
		t.Error("the same seed gave another set")
	}
}

func fmtInts(xs []int32) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteByte(byte(x))
	}
	return b.String()
}

func TestPoolPixelsAverages(t *testing.T) {
	got, err := PoolPixels([]int32{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150}, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{25, 45, 105, 125}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PoolPixels = %v, want %v", got, want)
	}
	if _, err := PoolPixels(make([]int32, 16), 4, 3); err == nil {
		t.Error("pool=3 of a 4×4 image was accepted")
	}
}
