package figure

import (
	"fmt"
	"html"
	"strings"

	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// Table is a comparison table: the paper's numbers beside ours, a run per row.
// Cells are plain text and escaped on output.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Notes   string // shown under the table: data, model size, steps, machine
}

// AddRow appends a row, formatting each value with %v (floats with 4 significant digits).
func (t *Table) AddRow(values ...any) {
	row := make([]string, len(values))
	for i, v := range values {
		switch x := v.(type) {
		case float64:
			row[i] = fmt.Sprintf("%.4g", x)
		case float32:
			row[i] = fmt.Sprintf("%.4g", x)
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.Rows = append(t.Rows, row)
}

// HTML renders the table.
func (t Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table style="border-collapse:collapse">`)
	if t.Caption != "" {
		fmt.Fprintf(&b, `<caption style="font-weight:bold;text-align:left">%s</caption>`, html.EscapeString(t.Caption))
	}
	cell := func(tag, s string) {
		fmt.Fprintf(&b, `<%s style="border:1px solid #ccc;padding:2px 8px;text-align:left">%s</%s>`, tag, html.EscapeString(s), tag)
	}
	if len(t.Header) > 0 {
		b.WriteString("<thead><tr>")
		for _, h := range t.Header {
			cell("th", h)
		}
		b.WriteString("</tr></thead>")
	}
	b.WriteString("<tbody>")
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for _, v := range row {
			cell("td", v)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	if t.Notes != "" {
		fmt.Fprintf(&b, `<p style="font-size:smaller">%s</p>`, html.EscapeString(t.Notes))
	}
	return b.String()
}

// Markdown renders the table as a GitHub Markdown table (for EXPERIMENTS.md).
func (t Table) Markdown() string {
	var b strings.Builder
	if t.Caption != "" {
		fmt.Fprintf(&b, "**%s**\n\n", t.Caption)
	}
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(&b, " %s |", esc.Replace(c))
		}
		b.WriteString("\n")
	}
	line(t.Header)
	b.WriteString("|" + strings.Repeat("---|", len(t.Header)) + "\n")
	for _, row := range t.Rows {
		line(row)
	}
	if t.Notes != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Notes)
	}
	return b.String()
}

// Show displays the table once: rendered from HTML, and carrying its
// Markdown (the copyable form, and what plain-text readers show).
func (t Table) Show() { show("", t.bundle(), nil) }

func (t Table) bundle() bundle {
	b := markdown(t.Markdown())
	b[protocol.MIMETextHTML] = t.HTML()
	return b
}
