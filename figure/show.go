package figure

import (
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// A notebook opened on another machine is untrusted, and its UI then shows
// only some representations of an output: PNG and plain text always, HTML
// sanitised (no SVG, scripts or data: images inside), Markdown and SVG not
// at all in the classic Notebook; `jupyter nbconvert --to html` sanitises SVG
// into an empty box. So a figure is a PNG only (drawn at twice its shown size,
// sharp enough on any screen), and Markdown carries its source as plain text.
type bundle map[protocol.MIMEType]any

// show sends one output; a non-empty id makes it a display that later calls
// with the same id replace. Outside a notebook it does nothing.
//
// It waits until GoNB has taken the output: a cell's program that exits with
// a large PNG still in the pipe to GoNB can lose it, which a notebook test
// caught once (a plot missing from the last line of a cell).
func show(id string, data bundle, metadata map[string]any) {
	if !gonbui.IsNotebook {
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: data, Metadata: metadata, DisplayID: id})
	gonbui.Sync()
}

// ShowPNG displays a PNG image in the cell's output.
func ShowPNG(png []byte) { show("", bundle{protocol.MIMEImagePNG: png}, nil) }

// ShowMarkdown displays Markdown, with a plain-text form for the UIs that do
// not render it (an untrusted classic Notebook).
func ShowMarkdown(md string) { show("", markdown(md), nil) }

// markdown is Markdown and, as plain text, its source without the bold and
// code markers, which would show as stray ** and `.
func markdown(md string) bundle {
	return bundle{protocol.MIMETextMarkdown: md, protocol.MIMETextPlain: strings.NewReplacer("**", "", "`", "").Replace(md)}
}

// ShowPNGCaptioned displays a PNG with a caption (Markdown, with its plain
// text for untrusted notebooks) under it.
func ShowPNGCaptioned(png []byte, caption string) {
	ShowPNG(png)
	if caption != "" {
		ShowMarkdown(caption)
	}
}

// ShowImage displays a picture made elsewhere (the session server): its PNG
// at width x height, its text form, and a caption.
func ShowImage(png []byte, text, caption string, width, height int) {
	data := bundle{protocol.MIMEImagePNG: png}
	if text != "" {
		data[protocol.MIMETextPlain] = text
	}
	var metadata map[string]any
	if width > 0 && height > 0 {
		metadata = map[string]any{string(protocol.MIMEImagePNG): map[string]int{"width": width, "height": height}}
	}
	show("", data, metadata)
	if caption != "" {
		ShowMarkdown(caption)
	}
}

// showFigure displays (or, with an id, redraws) a plot.
func showFigure(id string, p Plot) {
	data, metadata := figure(p)
	show(id, data, metadata)
}

// figure is a plot as PNG shown at its nominal size and a line of text.
func figure(p Plot) (bundle, map[string]any) {
	data := bundle{protocol.MIMETextPlain: p.Text()}
	png, err := p.PNG()
	if err != nil {
		data[protocol.MIMETextPlain] = p.Text() + "\n" + err.Error()
		return data, nil
	}
	w, h := p.Size()
	data[protocol.MIMEImagePNG] = png
	return data, map[string]any{string(protocol.MIMEImagePNG): map[string]int{"width": w, "height": h}}
}
