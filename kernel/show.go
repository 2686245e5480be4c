package kernel

import "github.com/janpfeifer/gonb/gonbui"

// ShowHTML displays an HTML fragment in the cell's output.
func ShowHTML(html string) { gonbui.DisplayHTML(html) }

// ShowPNG displays a PNG image in the cell's output.
func ShowPNG(png []byte) { gonbui.DisplayPNG(png) }

// ShowSVG displays an SVG document inline (as HTML, which survives export).
func ShowSVG(svg string) { gonbui.DisplaySVG(svg) }

// ShowMarkdown displays Markdown in the cell's output.
func ShowMarkdown(md string) { gonbui.DisplayMarkdown(md) }

// InNotebook reports whether the program runs inside a GoNB cell.
func InNotebook() bool { return gonbui.IsNotebook }
