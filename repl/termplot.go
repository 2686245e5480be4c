package repl

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Terminal pictures: horizontal bars and aligned tables, drawn with Unicode
// block characters so they work in any terminal and in a pipe. Sparklines are
// train.Sparkline.

// barEighths are the partial blocks that end a bar, 1/8 to 7/8 of a cell.
var barEighths = []rune("▏▎▍▌▋▊▉")

// Bars draws one labelled horizontal bar per value, scaled so the largest
// value fills width cells, with the value printed after the bar.
func Bars(labels []string, values []float64, width int, format func(float64) string) string {
	largest := 0.0
	for _, v := range values {
		largest = max(largest, v)
	}
	labelWidth := 0
	for _, l := range labels {
		labelWidth = max(labelWidth, utf8.RuneCountInString(l))
	}
	var b strings.Builder
	for i, v := range values {
		fmt.Fprintf(&b, "%s  %s %s\n", padRight(labels[i], labelWidth), bar(v, largest, width), format(v))
	}
	return b.String()
}

// bar is a bar of length v/largest·width cells in eighths of a cell.
func bar(v, largest float64, width int) string {
	if largest <= 0 || v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strings.Repeat(" ", width)
	}
	eighths := int(math.Round(v / largest * float64(width*8)))
	s := strings.Repeat("█", eighths/8)
	if rest := eighths % 8; rest > 0 {
		s += string(barEighths[rest-1])
	}
	return padRight(s, width)
}

func padRight(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

// Table aligns columns: text columns to the left, numbers to the right.
func Table(header []string, rows [][]string) string {
	widths := make([]int, len(header))
	numeric := make([]bool, len(header))
	for col, h := range header {
		widths[col] = utf8.RuneCountInString(h)
		numeric[col] = len(rows) > 0
	}
	for _, row := range rows {
		for col, cell := range row {
			widths[col] = max(widths[col], utf8.RuneCountInString(cell))
			if _, err := strconv.ParseFloat(strings.TrimSuffix(cell, "%"), 64); err != nil && cell != "-" {
				numeric[col] = false
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for col, cell := range cells {
			pad := strings.Repeat(" ", widths[col]-utf8.RuneCountInString(cell))
			if col > 0 {
				b.WriteString("  ")
			}
			if numeric[col] {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		b.WriteString("\n")
	}
	line(header)
	rule := make([]string, len(header))
	for col := range header {
		rule[col] = strings.Repeat("─", widths[col])
	}
	line(rule)
	for _, row := range rows {
		line(row)
	}
	return b.String()
}

// terminalWidth is the width of out when it is a terminal, else $COLUMNS,
// else 80: pictures fit the window they are drawn in.
func terminalWidth(out io.Writer) int {
	if f, ok := out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return 80
}
