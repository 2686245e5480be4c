package figure

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/janpfeifer/gonb/gonbui/protocol"
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

func TestPlotSVGParsesAndSkipsUnplottablePoints(t *testing.T) {
	p := Plot{
		Title: "loss <&> curve", XLabel: "n", YLabel: "ms", LogX: true, LogY: true,
		Series: []Series{
			{Name: "ecp", X: []float64{1024, 2048, 4096}, Y: []float64{10, 20, 40}},
			{Name: "bad & ugly", X: []float64{0, 1024, 2048}, Y: []float64{1, math.NaN(), 5}, Dashed: true},
		},
	}
	svg := p.SVG()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			for _, a := range se.Attr {
				if a.Name.Local == "points" && strings.Contains(a.Value, "NaN") {
					t.Errorf("NaN in points %q", a.Value)
				}
			}
		}
	}
	// Two series and their two legend lines are drawn 2 wide; the second series keeps one point.
	if n := strings.Count(svg, `stroke-width="2"`); n != 4 {
		t.Errorf("%d lines 2 pixels wide, want 4", n)
	}
	if n := strings.Count(svg, "<circle"); n != 4 {
		t.Errorf("%d measurement dots, want 4", n)
	}
	for _, want := range []string{">1024<", ">4096<", "loss &lt;&amp;&gt; curve", "stroke-dasharray"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestPlotPNGDrawsWhereTheSVGDoes(t *testing.T) {
	p := Plot{Title: "loss", XLabel: "step", YLabel: "loss in nats per token",
		Series: []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}}}}
	b, err := p.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if got := img.Bounds().Size(); got.X != 640*pngScale || got.Y != 360*pngScale {
		t.Fatalf("PNG is %v, want %dx%d", got, 640*pngScale, 360*pngScale)
	}
	rgb := func(x, y float64) [3]uint32 {
		r, g, bl, _ := img.At(int(x*pngScale), int(y*pngScale)).RGBA()
		return [3]uint32{r >> 8, g >> 8, bl >> 8}
	}
	want := [3]uint32{uint32(palette[0].R), uint32(palette[0].G), uint32(palette[0].B)}
	dots := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)"`).FindAllStringSubmatch(p.SVG(), -1)
	if len(dots) != 3 {
		t.Fatalf("%d dots in the SVG, want 3", len(dots))
	}
	for _, d := range dots {
		x, _ := strconv.ParseFloat(d[1], 64)
		y, _ := strconv.ParseFloat(d[2], 64)
		if got := rgb(x, y); got != want {
			t.Errorf("PNG at the SVG's dot (%g, %g) has colour %v, want the series colour %v", x, y, got, want)
		}
	}
	if got := rgb(1, 1); got != [3]uint32{0xff, 0xff, 0xff} {
		t.Errorf("background %v, want white", got)
	}
	// The title and the upright y label leave dark pixels where the SVG puts them.
	dark := func(x0, y0, x1, y1 float64) bool {
		for y := y0; y < y1; y += 0.5 {
			for x := x0; x < x1; x += 0.5 {
				if c := rgb(x, y); c[0] < 0x40 && c[1] < 0x40 && c[2] < 0x40 {
					return true
				}
			}
		}
		return false
	}
	if !dark(marginLeft, 8, marginLeft+30, 22) {
		t.Error("no title text in the PNG")
	}
	if !dark(4, 170, 18, 190) || dark(30, 170, 50, 190) {
		t.Error("the y label is not drawn upright along the left edge")
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
// training runs (~36 ms and ~22 MB per redraw on 2 cores).
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

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0.13: 0.2, 7: 10, 45: 50, 1.0: 1, 0: 1} {
		if got := niceStep(raw); math.Abs(got-want) > 1e-12 {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
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

func TestTicksAreRoundAndHaveNoNegativeZero(t *testing.T) {
	// A range just below zero once gave Ceil(-0.4) = -0 and a "-0" tick.
	a := newAxis([]float64{-0.04, 0.9}, false, 0, 100)
	var labels []string
	for _, v := range a.ticks() {
		labels = append(labels, formatTick(v))
	}
	if got := strings.Join(labels, " "); got != "0 0.5" {
		t.Errorf("ticks %q, want 0 0.5", got)
	}
	for _, v := range newAxis([]float64{-1, 1}, false, 0, 100).ticks() {
		if s := formatTick(v); s == "-0" || strings.Contains(s, "e-") {
			t.Errorf("tick %q on [-1, 1]", s)
		}
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

func TestLongLegendNamesWidenThePlot(t *testing.T) {
	short := Plot{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	if w, h := short.Size(); w != 640 || h != 360 {
		t.Errorf("a short legend gives %dx%d, want 640x360", w, h)
	}
	long := Plot{Series: []Series{{Name: "π, default skips, head phase bound", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	w, _ := long.Size()
	if need := legendLine + textWidth(long.Series[0].Name) + legendGap; float64(w-640+marginRight) < need || w <= 640 {
		t.Errorf("width %d leaves the legend %d pixels, the name needs %.0f", w, w-640+marginRight, need)
	}
	if svg := long.SVG(); !strings.Contains(svg, fmt.Sprintf(`width="%d"`, w)) {
		t.Errorf("the SVG is not the %d pixels Size gives", w)
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
