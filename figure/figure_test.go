package figure

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/janpfeifer/gonb/gonbui/protocol"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
)

func TestHeadsPNGDecodesWithOneBlockPerHead(t *testing.T) {
	heads := [][][]float64{{{0, 1}, {0.5, 0.25}}, {{1, 0}, {0, 1}}}
	b, err := HeadsPNG(heads, 3)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if got := img.Bounds().Size(); got.X != 2*(2*3+6)-6 || got.Y != 2*3 {
		t.Errorf("size %v, want 18x6", got)
	}
	// Minimum and maximum map to the two ends of the ramp.
	if r, _, _, _ := img.At(0, 0).RGBA(); r>>8 != 0x44 {
		t.Errorf("value 0 drawn with red %#x, want the ramp's start 0x44", r>>8)
	}
	if r, _, _, _ := img.At(3, 0).RGBA(); r>>8 != 0xfd {
		t.Errorf("value 1 drawn with red %#x, want the ramp's end 0xfd", r>>8)
	}
}

func TestHeatmapRejectsRaggedMatrices(t *testing.T) {
	if _, err := HeadsPNG([][][]float64{{{1, 2}, {3}}}, 2); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("ragged matrix: err = %v, want one naming row 1", err)
	}
	if _, err := HeatmapPNG(nil, 2); err == nil {
		t.Error("empty matrix accepted")
	}
}

func TestIndexSetPNGColoursLocalSkipAndBlockedKeys(t *testing.T) {
	const n, cell = 12, 2
	kinds := make([][]KeyKind, n)
	for i := range kinds {
		kinds[i] = make([]KeyKind, n)
	}
	kinds[11][10], kinds[11][7], kinds[11][3] = KeyLocal, KeySkip, KeySkip
	b, err := IndexSetPNG(kinds, -1, cell)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	at := func(i, j int) [3]uint32 {
		r, g, bl, _ := img.At(j*cell, i*cell).RGBA()
		return [3]uint32{r >> 8, g >> 8, bl >> 8}
	}
	rgb := func(c interface{ RGBA() (r, g, b, a uint32) }) [3]uint32 {
		r, g, bl, _ := c.RGBA()
		return [3]uint32{r >> 8, g >> 8, bl >> 8}
	}
	cases := []struct {
		i, j int
		want [3]uint32
		what string
	}{
		{11, 10, rgb(colourLocal), "local key"},
		{11, 7, rgb(colourSkip), "skip key i-π"},
		{11, 3, rgb(colourSkip), "skip key i-2π"},
		{11, 5, rgb(colourBlocked), "key outside K(i)"},
		{3, 4, rgb(colourBlocked), "future key"},
	}
	for _, c := range cases {
		if got := at(c.i, c.j); got != c.want {
			t.Errorf("%s (%d,%d): colour %v, want %v", c.what, c.i, c.j, got, c.want)
		}
	}
}

func TestFigureCarriesPNGForUntrustedNotebooks(t *testing.T) {
	data, metadata := figure(Plot{Title: "t", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}})
	if _, ok := data[protocol.MIMEImagePNG].([]byte); !ok {
		t.Error("figure has no PNG")
	}
	// nbconvert's HTML export and untrusted notebooks show SVG, and HTML holding it, as an empty box.
	if _, svg := data[protocol.MIMEImageSVG]; svg {
		t.Error("figure has SVG: exported HTML would pick it and show an empty box")
	}
	if _, html := data[protocol.MIMETextHTML]; html {
		t.Error("figure has HTML: untrusted notebooks strip SVG inside it")
	}
	if text, _ := data[protocol.MIMETextPlain].(string); !strings.Contains(text, "plot: t") {
		t.Errorf("figure's text %q", text)
	}
	if size, _ := metadata[string(protocol.MIMEImagePNG)].(map[string]int); size["width"] != 640 {
		t.Errorf("PNG metadata %v: want it shown at the nominal width 640", metadata)
	}
}

// BenchmarkLossPlotPNG: Live redraws its plot as PNG up to once a second while
// training runs (~27 ms and ~11 MB per redraw on 2 cores).
func BenchmarkLossPlotPNG(b *testing.B) {
	var xs, ys []float64
	for i := range 1000 {
		xs, ys = append(xs, float64(i+1)), append(ys, 5/(1+float64(i)/50))
	}
	p := Plot{Title: "loss", XLabel: "step", YLabel: "nats", Series: []Series{{Name: "train", X: xs, Y: ys}, {Name: "valid", X: []float64{100, 500, 1000}, Y: []float64{3, 2, 1}}}}
	for b.Loop() {
		if _, err := p.PNG(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTableEscapesHTMLAndMarkdown(t *testing.T) {
	tab := Table{Caption: "a<b", Header: []string{"model", "ppl|paper"}, Notes: "x & y"}
	tab.AddRow("<script>", 17.8234567)
	h := tab.HTML()
	if strings.Contains(h, "<script>") || !strings.Contains(h, "&lt;script&gt;") {
		t.Errorf("cell not escaped: %s", h)
	}
	if !strings.Contains(h, "17.82") || !strings.Contains(h, "x &amp; y") || !strings.Contains(h, "a&lt;b") {
		t.Errorf("table HTML lacks the value, notes or caption: %s", h)
	}
	if err := xml.Unmarshal([]byte("<div>"+h+"</div>"), new(any)); err != nil {
		t.Errorf("table HTML is not well-formed: %v", err)
	}
	if md := tab.Markdown(); !strings.Contains(md, `ppl\|paper`) || !strings.Contains(md, "|---|---|") {
		t.Errorf("markdown table:\n%s", md)
	}
}

func TestTableShowsOnceWithHTMLAndMarkdown(t *testing.T) {
	tab := Table{Caption: "c", Header: []string{"a"}, Rows: [][]string{{"1"}}}
	b := tab.bundle()
	html, _ := b[protocol.MIMETextHTML].(string)
	md, _ := b[protocol.MIMETextMarkdown].(string)
	if !strings.Contains(html, "<table") || md != tab.Markdown() || b[protocol.MIMETextPlain] != "c\n\n| a |\n|---|\n| 1 |\n" {
		t.Errorf("table output %v: want its HTML, its Markdown and the Markdown as plain text in one output", b)
	}
}

func TestLiveRecordsStepsAndEvaluations(t *testing.T) {
	l := NewLive("run")
	for step := 1; step <= 3; step++ {
		l.Step(step, 3, 5-float64(step), fmt.Sprintf("step %d/3", step))
	}
	l.Eval(3, 2.5, "valid loss 2.5000")
	pl := l.Plot()
	if len(pl.Series[0].X) != 3 || len(pl.Series[1].Y) != 1 || pl.Series[1].Y[0] != 2.5 {
		t.Errorf("live plot series %+v", pl.Series)
	}
	if s := l.Status(); !strings.Contains(s, "step 3/3") || !strings.Contains(s, "valid loss 2.5000") {
		t.Errorf("status line %q", s)
	}
}

// Outside a notebook (tests, the REPL's process) the Show functions must stay
// silent: their output is for GoNB only, never a stray line on stdout.
func TestShowOutsideANotebookWritesNothing(t *testing.T) {
	read, write, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = write
	p := Plot{Title: "t", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	png, _ := p.PNG()
	p.Show()
	ShowPNG(png)
	ShowPNGCaptioned(png, "caption")
	(&Table{Caption: "t", Header: []string{"a"}, Rows: [][]string{{"1"}}}).Show()
	os.Stdout = stdout
	write.Close()
	if out, _ := io.ReadAll(read); len(out) != 0 {
		t.Errorf("Show wrote %q outside a notebook", out)
	}
}

func TestBoundsTakeTheirSeriesColour(t *testing.T) {
	got := seriesColours([]Series{{Name: "local"}, {Name: "local (k = 16)"}, {Name: "local (k = 16) bound", Dashed: true},
		{Name: "ECP"}, {Name: "ECP bound", Dashed: true}, {Name: "paper", Dashed: true}, {Name: "ECP later"}})
	want := []color.RGBA{palette[0], palette[1], palette[1], palette[2], palette[2], palette[3], palette[4]}
	if !slices.Equal(got, want) {
		t.Errorf("colours %v, want %v (a dashed series takes the colour of the longest solid name it extends; others the next colour)", got, want)
	}
}

// TestSeriesMinusKeepsSharedXOnly: the difference is taken where both series
// have a point; the name and style are the minuend's.
func TestSeriesMinusKeepsSharedXOnly(t *testing.T) {
	s := Series{Name: "π", X: []float64{0, 32, 64}, Y: []float64{3, 2.5, 2}, Dashed: true}
	ref := Series{Name: "dense", X: []float64{32, 64, 96}, Y: []float64{2, 2.25, 1}}
	d := s.Minus(ref)
	if d.Name != "π" || !d.Dashed || fmt.Sprint(d.X) != "[32 64]" || fmt.Sprint(d.Y) != "[0.5 -0.25]" {
		t.Errorf("difference %+v, want π (dashed) at [32 64] = [0.5 -0.25]", d)
	}
}

// drawn is the plot's PNG, decoded.
func drawn(t *testing.T, p Plot) image.Image {
	t.Helper()
	b, err := p.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	return img
}

// pixels counts the pixels in r (nominal coordinates) for which match holds.
func pixels(img image.Image, r image.Rectangle, match func(c color.RGBA) bool) int {
	n := 0
	for y := r.Min.Y * pngScale; y < r.Max.Y*pngScale; y++ {
		for x := r.Min.X * pngScale; x < r.Max.X*pngScale; x++ {
			if match(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)) {
				n++
			}
		}
	}
	return n
}

func is(want color.RGBA) func(color.RGBA) bool {
	return func(c color.RGBA) bool { return c == want }
}

func dark(c color.RGBA) bool { return c.R < 0x50 && c.G < 0x50 && c.B < 0x50 }

func TestPlotPNGShowsTitleSeriesAndLegend(t *testing.T) {
	p := Plot{Title: "loss", XLabel: "step", YLabel: "loss in nats per token", Series: []Series{
		{Name: "ECP", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}},
		{Name: "ECP bound", X: []float64{1, 2, 3}, Y: []float64{3.5, 2.5, 2.5}, Dashed: true},
	}}
	img := drawn(t, p)
	if got := img.Bounds().Size(); got.X != 640*pngScale || got.Y != 360*pngScale {
		t.Fatalf("PNG is %v, want %dx%d", got, 640*pngScale, 360*pngScale)
	}
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	if n := pixels(img, image.Rect(0, 0, 4, 4), is(white)); n != 4*4*pngScale*pngScale {
		t.Errorf("%d white pixels in the top left corner, want all (a white background)", n)
	}
	drawing := image.Rect(0, 20, 640-legendColumn, 360)
	legend := image.Rect(640-legendColumn, 0, 640, 100)
	if n := pixels(img, drawing, is(palette[0])); n < 500 {
		t.Errorf("%d pixels of the first series' colour in the drawing area, want its lines", n)
	}
	// The dashed bound extends "ECP", so it takes ECP's colour: no second colour anywhere.
	if n := pixels(img, img.Bounds(), is(palette[1])); n != 0 {
		t.Errorf("%d pixels of the second palette colour: the bound did not take its series' colour", n)
	}
	if pixels(img, legend, is(palette[0])) < 50 || pixels(img, legend, dark) < 50 {
		t.Error("no legend (sample lines and names) right of the drawing area")
	}
	if pixels(img, image.Rect(0, 0, 640-legendColumn, 18), dark) < 20 {
		t.Error("no title above the drawing area")
	}
	if pixels(img, image.Rect(0, 100, 18, 300), dark) < 20 {
		t.Error("no y label along the left edge")
	}
}

func TestLongLegendNamesWidenThePlot(t *testing.T) {
	short := Plot{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	if w, h := short.Size(); w != 640 || h != 360 {
		t.Errorf("a short legend gives %dx%d, want 640x360", w, h)
	}
	long := Plot{Series: []Series{{Name: "π, default skips, head phase bound", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	w, h := long.Size()
	if w <= 640 {
		t.Fatalf("width %d: the long name did not widen the plot", w)
	}
	img := drawn(t, long)
	if got := img.Bounds().Size(); got.X != w*pngScale || got.Y != h*pngScale {
		t.Errorf("PNG is %v, Size says %dx%d nominal", got, w, h)
	}
	// The name runs past the default width and ends before the image does.
	if pixels(img, image.Rect(620, 0, w-legendGap/2, 60), dark) < 20 {
		t.Error("no legend text past the default width")
	}
	if n := pixels(img, image.Rect(w-legendGap/2, 0, w, h), dark); n != 0 {
		t.Errorf("%d dark pixels at the right edge: the legend name is cut", n)
	}
	if svg, err := long.SVG(); err != nil || !strings.Contains(svg, fmt.Sprintf(`width="%dpt"`, w)) {
		t.Errorf("the SVG is not the %d points Size gives (err %v)", w, err)
	}
}

func TestPlotLeavesOutUnplottablePoints(t *testing.T) {
	p := Plot{
		Title: "loss <&> curve", XLabel: "n", YLabel: "ms", LogX: true, LogY: true,
		Series: []Series{
			{Name: "ecp", X: []float64{1024, 2048, 4096}, Y: []float64{10, 20, 40}},
			{Name: "bad & ugly", X: []float64{0, 1024, 2048}, Y: []float64{1, math.NaN(), 5}, Dashed: true},
			{Name: "nothing drawable", X: []float64{-1}, Y: []float64{math.Inf(1)}},
		},
	}
	drawn(t, p)
	svg, err := p.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal([]byte(svg), new(any)); err != nil {
		t.Errorf("SVG is not XML: %v", err)
	}
	for _, want := range []string{"loss &lt;&amp;&gt; curve", "nothing drawable", "stroke-dasharray"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("SVG holds a NaN or infinite coordinate")
	}
}

// tickLabels are the labels of the major ticks.
func tickLabels(ticks []plot.Tick) string {
	var labels []string
	for _, t := range ticks {
		if !t.IsMinor() {
			labels = append(labels, t.Label)
		}
	}
	return strings.Join(labels, " ")
}

func TestLogAxesTickWholePowers(t *testing.T) {
	p := Plot{LogX: true, LogY: true, Series: []Series{{X: []float64{300, 1024, 3000}, Y: []float64{2, 2e4, 2e5}}}}
	drawing, _, err := p.build()
	if err != nil {
		t.Fatal(err)
	}
	if got := tickLabels(drawing.X.Tick.Marker.Ticks(drawing.X.Min, drawing.X.Max)); got != "256 512 1024 2048 4096" {
		t.Errorf("x ticks %q: a range under 2^12 is marked at the powers of two around it", got)
	}
	if got := tickLabels(drawing.Y.Tick.Marker.Ticks(drawing.Y.Min, drawing.Y.Max)); got != "1 10 100 1000 10000 100000 1e+06" {
		t.Errorf("y ticks %q: a wide range is marked at the powers of ten around it", got)
	}
}

func TestTickLabelsAreDistinct(t *testing.T) {
	// gonum/plot's defaults labelled all four ticks of this range 2.6.
	if got := tickLabels(distinctTicks{}.Ticks(2.6, 2.631)); got != "2.60 2.61 2.62 2.63" {
		t.Errorf("tick labels %q, want 2.60 2.61 2.62 2.63", got)
	}
}

// The fonts come with the program (gonum/plot embeds Liberation): nothing is
// looked up on the machine or fetched, and they hold the symbols our labels use.
func TestPlotFontsAreEmbeddedAndHoldOurSymbols(t *testing.T) {
	for _, bold := range []bool{false, true} {
		if !font.DefaultCache.Has(sans(fontSize, bold)) {
			t.Fatalf("Liberation Sans (bold %v) is not among gonum/plot's fonts", bold)
		}
	}
	face := font.DefaultCache.Lookup(sans(fontSize, false), fontSize)
	var buf sfnt.Buffer
	for _, r := range "π×≤±·–→₂" {
		if i, err := face.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
			t.Errorf("%s has no glyph for %q", face.Name(), r)
		}
	}
}
