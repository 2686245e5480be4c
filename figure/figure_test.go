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
	"gonum.org/v1/plot/vg"
)

// decodePNG decodes what a figure function drew.
func decodePNG(b []byte, err error) (image.Image, error) {
	if err != nil {
		return nil, err
	}
	return png.Decode(bytes.NewReader(b))
}

// near matches the colours within 3 of want in each channel (a colour scale's ends).
func near(want color.Color) func(color.RGBA) bool {
	w := color.RGBAModel.Convert(want).(color.RGBA)
	close := func(a, b uint8) bool { return max(a, b)-min(a, b) <= 3 }
	return func(c color.RGBA) bool { return close(c.R, w.R) && close(c.G, w.G) && close(c.B, w.B) }
}

// centre is the mean position of the pixels in r that match.
func centre(img image.Image, r image.Rectangle, match func(color.RGBA) bool) (x, y float64) {
	n := 0
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			if match(color.RGBAModel.Convert(img.At(px, py)).(color.RGBA)) {
				x, y, n = x+float64(px), y+float64(py), n+1
			}
		}
	}
	return x / float64(n), y / float64(n)
}

// count is the number of device pixels in r that match.
func count(img image.Image, r image.Rectangle, match func(color.RGBA) bool) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if match(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)) {
				n++
			}
		}
	}
	return n
}

func TestHeadsPNGDrawsHeadsOnOneScaleWithItsBar(t *testing.T) {
	const cell = 40
	heads := [][][]float64{{{0, 0}, {1, 1}}, {{0.5, 0.5}, {0.5, 0.5}}}
	img, err := decodePNG(HeadsPNG(heads, cell))
	if err != nil {
		t.Fatal(err)
	}
	size, _ := frame(heatmapPlot(newCells(heads[0], keyColours, 0, 1), "head 0", "key", "query"), vg.Point{X: 2 * cell, Y: 2 * cell})
	stride, h := int(whole(size.X)), img.Bounds().Dy()
	head0, head1, bar := image.Rect(0, 0, stride, h), image.Rect(stride, 0, 2*stride, h), image.Rect(2*stride, 0, img.Bounds().Dx(), h)
	if bar.Dx() < 30 || h < 2*cell {
		t.Fatalf("size %v: no room for two heads of %d pixels and the bar", img.Bounds().Size(), stride)
	}
	lowest, highest := near(viridisStops[0]), near(viridisStops[len(viridisStops)-1])
	// Each entry is cell×cell pixels; row 0 (the lowest values) is drawn at the top.
	if low, high := count(img, head0, lowest), count(img, head0, highest); low != 2*cell*cell || high != 2*cell*cell {
		t.Errorf("head 0 has %d pixels of the scale's start and %d of its end, want %d each (two entries)", low, high, 2*cell*cell)
	}
	_, lowY := centre(img, head0, lowest)
	if _, highY := centre(img, head0, highest); lowY >= highY {
		t.Errorf("row 0 drawn at y %.0f, row 1 at %.0f: row 0 is not on top", lowY, highY)
	}
	// One scale for all heads: head 1's constant 0.5 is the middle of it, not an end.
	if n := count(img, head1, lowest) + count(img, head1, highest); n != 0 {
		t.Errorf("head 1 (all 0.5) has %d pixels of the scale's ends: each head has its own scale", n)
	}
	bright := func(c color.RGBA) bool { return c.R > 0xd0 && c.G > 0xd0 && c.B < 0x60 }
	if count(img, bar, lowest) == 0 || count(img, bar, bright) == 0 || count(img, bar, dark) < 20 {
		t.Error("no colour bar with its ends and numbers right of the heads")
	}
	if count(img, head1, dark) < 100 {
		t.Error("no title, axes or labels around head 1")
	}
}

func TestHeatmapRejectsRaggedMatrices(t *testing.T) {
	if _, err := HeadsPNG([][][]float64{{{1, 2}, {3}}}, 2); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("ragged matrix: err = %v, want one naming row 1", err)
	}
	if _, err := HeatmapPNG(nil, 2); err == nil {
		t.Error("empty matrix accepted")
	}
	if _, err := ImagesPNG([][][]float64{{{1}}, {{1}, {2}}}, 2); err == nil || !strings.Contains(err.Error(), "matrix 1 has 2 rows") {
		t.Errorf("images of two shapes: err = %v", err)
	}
}

func TestImagesPNGDrawsPixelsSideBySide(t *testing.T) {
	const cell = 4
	images := [][][]float64{{{0, 0}, {0, 0}, {0, 1}}, {{1, 1}, {1, 1}, {1, 1}}}
	img, err := decodePNG(ImagesPNG(images, cell))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 2*(2*cell+6)-6 || got.Y != 3*cell {
		t.Fatalf("size %v, want 22x12: 2 pictures of 2x3 values, 4x4 pixels each, 6 apart", got)
	}
	lowest, highest := near(viridisStops[0]), near(viridisStops[len(viridisStops)-1])
	white := is(color.RGBA{0xff, 0xff, 0xff, 0xff})
	for _, c := range []struct {
		x, y  int
		match func(color.RGBA) bool
		what  string
	}{
		{0, 0, lowest, "first picture's top left (0)"},
		{7, 11, highest, "first picture's bottom right (1)"},
		{3, 11, lowest, "first picture's bottom left (0)"},
		{8, 5, white, "gap"},
		{14, 0, highest, "second picture (1)"},
		{21, 11, highest, "second picture's last pixel (1)"},
	} {
		if got := color.RGBAModel.Convert(img.At(c.x, c.y)).(color.RGBA); !c.match(got) {
			t.Errorf("%s at (%d, %d): colour %v", c.what, c.x, c.y, got)
		}
	}
}

func TestIndexSetPNGColoursLocalSkipAndBlockedKeys(t *testing.T) {
	const n, cell = 12, 10
	kinds := make([][]KeyKind, n)
	for i := range kinds {
		kinds[i] = make([]KeyKind, n)
	}
	kinds[11][10], kinds[11][7], kinds[11][3] = KeyLocal, KeySkip, KeySkip
	kinds[5][5] = KeyLocal
	img, err := decodePNG(IndexSetPNG(kinds, 5, cell))
	if err != nil {
		t.Fatal(err)
	}
	all := img.Bounds()
	local, skip, query := count(img, all, is(colourLocal)), count(img, all, is(colourSkip)), count(img, all, is(colourQuery))
	blocked := count(img, all, is(colourBlocked))
	// Blocked keys are a light grey that a few of the labels' anti-aliased edge pixels share.
	if local != cell*cell || skip != 2*cell*cell || query != cell*cell || blocked < (n*n-4)*cell*cell || blocked > (n*n-4)*cell*cell+20 {
		t.Errorf("pixels: %d local, %d skip, %d of the query's, %d blocked; want %d×(1, 2, 1, %d)", local, skip, query, blocked, cell*cell, n*n-4)
	}
	// Query 11's keys lie on its row at the bottom, the local key right of the skips; query 5's row is above it.
	localX, localY := centre(img, all, is(colourLocal))
	skipX, skipY := centre(img, all, is(colourSkip))
	_, queryY := centre(img, all, is(colourQuery))
	if math.Abs(localY-skipY) > 1 || localX <= skipX || queryY >= localY {
		t.Errorf("local key at (%.0f, %.0f), skip keys around (%.0f, %.0f), query 5's key at y %.0f", localX, localY, skipX, skipY, queryY)
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
	want := []color.RGBA{tab10[0], tab10[1], tab10[1], tab10[2], tab10[2], tab10[3], tab10[4]}
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
	img, err := decodePNG(p.PNG())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// nominal is the device pixels of a plot's nominal rectangle.
func nominal(r image.Rectangle) image.Rectangle {
	return image.Rect(r.Min.X*pngScale, r.Min.Y*pngScale, r.Max.X*pngScale, r.Max.Y*pngScale)
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
	if n := count(img, nominal(image.Rect(0, 0, 4, 4)), is(white)); n != 4*4*pngScale*pngScale {
		t.Errorf("%d white pixels in the top left corner, want all (a white background)", n)
	}
	drawing := image.Rect(0, 20, 640-legendColumn, 360)
	legend := image.Rect(640-legendColumn, 0, 640, 100)
	if n := count(img, nominal(drawing), is(tab10[0])); n < 500 {
		t.Errorf("%d pixels of the first series' colour in the drawing area, want its lines", n)
	}
	// The dashed bound extends "ECP", so it takes ECP's colour: no second colour anywhere.
	if n := count(img, img.Bounds(), is(tab10[1])); n != 0 {
		t.Errorf("%d pixels of the second palette colour: the bound did not take its series' colour", n)
	}
	if count(img, nominal(legend), is(tab10[0])) < 50 || count(img, nominal(legend), dark) < 50 {
		t.Error("no legend (sample lines and names) right of the drawing area")
	}
	if count(img, nominal(image.Rect(0, 0, 640-legendColumn, 18)), dark) < 20 {
		t.Error("no title above the drawing area")
	}
	if count(img, nominal(image.Rect(0, 100, 18, 300)), dark) < 20 {
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
	if count(img, nominal(image.Rect(620, 0, w-legendGap/2, 60)), dark) < 20 {
		t.Error("no legend text past the default width")
	}
	if n := count(img, nominal(image.Rect(w-legendGap/2, 0, w, h)), dark); n != 0 {
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

func TestHeatmapAxesMarkWholePositionsRowsFromTheTop(t *testing.T) {
	// A 3×3 matrix spans -0.5 to 2.5 on gonum/plot's grid, whose row 0 is the bottom one.
	columns := tickLabelsAt(positionTicks{}.Ticks(-0.5, 2.5))
	rows := tickLabelsAt(positionTicks{rows: 3}.Ticks(-0.5, 2.5))
	if columns != "0@0 1@1 2@2" || rows != "0@2 1@1 2@0" {
		t.Errorf("column ticks %q, row ticks %q; want whole positions only, rows counted from the top", columns, rows)
	}
	// 16 rows: gonum/plot's ticks (which on the grid's range labelled 2.5, 7.5, ...), whole ones only.
	if rows := tickLabelsAt(positionTicks{rows: 16}.Ticks(-0.5, 15.5)); rows != "0@15 5@10 10@5 15@0" {
		t.Errorf("row ticks of 16 rows %q", rows)
	}
}

// tickLabelsAt lists the labelled ticks as label@value.
func tickLabelsAt(ticks []plot.Tick) string {
	var labels []string
	for _, t := range ticks {
		if t.Label != "" {
			labels = append(labels, fmt.Sprintf("%s@%g", t.Label, t.Value))
		}
	}
	return strings.Join(labels, " ")
}
