package data

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
)

// document is one unit of a corpus: an article, a source file, a novel, a book of the Bible.
type document struct {
	title string
	text  string
}

// unwrapParagraphs joins the lines of each blank-line-separated paragraph into one line, the way
// WikiText stores its articles (one paragraph per line).
func unwrapParagraphs(text string) string {
	var out []string
	for _, p := range splitParagraphs(text) {
		out = append(out, strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(out, "\n\n")
}

// splitParagraphs returns the non-empty blank-line-separated paragraphs of text.
func splitParagraphs(text string) []string {
	var paras []string
	for _, p := range blankLine.Split(text, -1) {
		if strings.TrimSpace(p) != "" {
			paras = append(paras, strings.Trim(p, "\n"))
		}
	}
	return paras
}

// tidyLines keeps the original line breaks (as PG-19 does) but trims trailing spaces and collapses
// runs of blank lines to one.
func tidyLines(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(splitParagraphs(strings.Join(lines, "\n")), "\n\n")
}

// gutenbergBody cuts the Project Gutenberg header and licence off a book, keeping the text between the
// "*** START OF" and "*** END OF" markers; text without the markers is returned unchanged.
func gutenbergBody(text string) string {
	if i := strings.Index(text, "*** START OF"); i >= 0 {
		if nl := strings.IndexByte(text[i:], '\n'); nl >= 0 {
			text = text[i+nl+1:]
		}
	}
	for _, marker := range []string{"*** END OF", "End of the Project Gutenberg", "End of Project Gutenberg"} {
		if i := strings.Index(text, marker); i >= 0 {
			text = text[:i] // markers only ever follow the book, so the earliest one ends it
		}
	}
	return text
}

var blankLine = regexp.MustCompile(`\n[ \t]*\n`)

var (
	foldocCrossRef = regexp.MustCompile(`\{([^{}]*?)(?:\s*\([^(){}]*\))?\}`)
	foldocCategory = regexp.MustCompile(`^\s*<[^<>]+>\s*`)
	foldocDate     = regexp.MustCompile(`^\(\d{4}-\d{2}-\d{2}\)$`)
	foldocCitation = regexp.MustCompile(`^\[[^\]]*\]\.?$`)
)

// foldocDocuments splits the FOLDOC dictd text into entries (a headword line starting in column 0,
// a body indented below it) and cleans each: cross-references {like this} become plain words, the
// leading <category> tag, the (date) stamp and [source] lines go, paragraphs are unwrapped.
// Entries whose body is only a pointer to another entry are dropped.
func foldocDocuments(dict string) []document {
	var docs []document
	var title string
	var body []string
	flush := func() {
		if title != "" && !strings.HasPrefix(title, "00-database") {
			if text := cleanFoldocBody(body); len(strings.Fields(text)) >= 8 {
				docs = append(docs, document{title: title, text: title + "\n\n" + text})
			}
		}
		title, body = "", nil
	}
	for _, line := range strings.Split(dict, "\n") {
		switch {
		case line == "":
			body = append(body, "")
		case line[0] != ' ' && line[0] != '\t':
			if len(body) > 0 { // a new headword after a body starts a new entry; else it is an alias line
				flush()
			}
			if title == "" { // "%%%" separates a headword from its aliases
				title = strings.TrimSpace(strings.SplitN(line, "%%%", 2)[0])
			}
		default:
			body = append(body, strings.TrimSpace(line))
		}
	}
	flush()
	return docs
}

func cleanFoldocBody(lines []string) string {
	var kept []string
	for _, p := range splitParagraphs(strings.Join(lines, "\n")) {
		p = strings.Join(strings.Fields(p), " ")
		if foldocDate.MatchString(p) || foldocCitation.MatchString(p) {
			continue
		}
		p = foldocCategory.ReplaceAllString(p, "")
		// Nested braces ({foo {bar}}) are rare; two passes flatten them.
		p = foldocCrossRef.ReplaceAllString(p, "$1")
		p = foldocCrossRef.ReplaceAllString(p, "$1")
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

var (
	rstDirective  = regexp.MustCompile(`^\s*\.\.(\s|$)`)
	rstField      = regexp.MustCompile(`^\s*:[A-Za-z][\w -]*:(\s|$)`)
	rstTableLine  = regexp.MustCompile(`^\s*(\+[-=+]+\+|[=\-]{2,}( +[=\-]{2,})+)\s*$`)
	rstRole       = regexp.MustCompile(":[a-z][a-z:]*:`([^`<]*?)(?:\\s*<[^>]*>)?`")
	rstLink       = regexp.MustCompile("`([^`<]*?)\\s*<[^>]*>`_{1,2}")
	rstLiteral    = regexp.MustCompile("``([^`]+)``")
	rstInterp     = regexp.MustCompile("`([^`]+)`_{0,2}")
	rstStrong     = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	rstEmphasis   = regexp.MustCompile(`(^|\W)\*([^*\s][^*]*)\*`)
	rstSubst      = regexp.MustCompile(`\|([\w -]+)\|`)
	rstBullet     = regexp.MustCompile(`^\s*([-*+•]|\d+[.)]|#\.)\s+`)
	rstRefTarget  = regexp.MustCompile(`(\w)_\b`)
	rstFootnoteID = regexp.MustCompile(`\[(#|\d+|\*)\]_`)
)

// rstToText turns a reStructuredText source into prose: section adornments, directives with their
// bodies (code blocks, toctrees, kernel-doc), comments, literal blocks after "::", field lists and
// tables are dropped; inline markup is reduced to its text; paragraphs are unwrapped.
func rstToText(src string) string {
	lines := strings.Split(strings.ReplaceAll(src, "\t", "        "), "\n")
	var out []string
	skipIndent := -1 // inside a block being dropped: lines indented deeper than this are skipped
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " ")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if skipIndent >= 0 {
			if line == "" || indent > skipIndent {
				continue
			}
			skipIndent = -1
			out = append(out, "") // the dropped block separated paragraphs
		}
		switch {
		case line == "":
			out = append(out, "")
			continue
		case rstDirective.MatchString(line):
			skipIndent = indent
			continue
		case isAdornment(line), rstTableLine.MatchString(line), rstField.MatchString(line),
			strings.HasPrefix(strings.TrimSpace(line), "|"):
			continue
		}
		if strings.HasSuffix(line, "::") {
			skipIndent = indent
			line = strings.TrimSuffix(strings.TrimSuffix(line, "::"), " ")
			if line == "" {
				continue
			}
			line += ":"
		}
		out = append(out, rstBullet.ReplaceAllString(line, ""))
	}
	// Inline markup may span lines, so it is reduced after the paragraphs are unwrapped.
	return rstInline(unwrapParagraphs(strings.Join(out, "\n")))
}

// isAdornment reports a section over- or underline: three or more of one punctuation character.
func isAdornment(line string) bool {
	line = strings.TrimSpace(line)
	if len(line) < 3 || !strings.ContainsRune("=-~^\"'*+#.:_`", rune(line[0])) {
		return false
	}
	return strings.Count(line, line[:1]) == len(line)
}

func rstInline(s string) string {
	s = rstRole.ReplaceAllString(s, "$1")
	s = rstLink.ReplaceAllString(s, "$1")
	s = rstLiteral.ReplaceAllString(s, "$1")
	s = rstInterp.ReplaceAllString(s, "$1")
	s = rstStrong.ReplaceAllString(s, "$1")
	s = rstEmphasis.ReplaceAllString(s, "$1$2")
	s = rstSubst.ReplaceAllString(s, "$1")
	s = rstFootnoteID.ReplaceAllString(s, "")
	s = rstRefTarget.ReplaceAllString(s, "$1")
	return strings.ReplaceAll(s, `\ `, "")
}

var (
	osisNote      = regexp.MustCompile(`(?s)<note\b[^>]*>.*?</note>`)
	osisMilestone = regexp.MustCompile(`<div\b[^>]*type="x-milestone"[^>]*>`)
	osisBreak     = regexp.MustCompile(`<(?:div|chapter|title|lg)\b[^>]*>|</(?:title|lg)>`)
	osisLine      = regexp.MustCompile(`(?:<(?:l|lb)\b[^>]*>\s*)+`)
	osisTag       = regexp.MustCompile(`<[^>]*>`)
	spaceRun      = regexp.MustCompile(`[ \t]+`)
	spaceBeforeP  = regexp.MustCompile(` +([,.;:!?’”)])`)
	blankLineRuns = regexp.MustCompile(`\n\s*\n(\s*\n)*`)
)

// stripOSIS reduces OSIS XML to its running text: footnotes are removed, paragraph, chapter, title
// and line-group elements become paragraph breaks, poetry lines become line breaks, every other tag disappears and entities are
// decoded.
func stripOSIS(xml string) string {
	s := osisNote.ReplaceAllString(xml, "")
	s = osisMilestone.ReplaceAllString(s, "") // verse markers, not paragraphs
	s = osisBreak.ReplaceAllString(s, "\n\n")
	s = osisLine.ReplaceAllString(s, "\n")
	s = osisTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = spaceRun.ReplaceAllString(s, " ")
	s = spaceBeforeP.ReplaceAllString(s, "$1")
	var paras []string
	for _, p := range blankLineRuns.Split(s, -1) {
		var lines []string // poetry keeps one line per verse line
		for _, l := range strings.Split(p, "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			paras = append(paras, strings.Join(lines, "\n"))
		}
	}
	return strings.Join(paras, "\n\n")
}

// swordBlocks decompresses a SWORD zText module file pair: idx (*.bzs) holds one little-endian
// (offset, compressed size, uncompressed size) triple of uint32 per block, data (*.bzz) the
// concatenated zlib streams.
func swordBlocks(idx, data []byte) ([]string, error) {
	if len(idx)%12 != 0 {
		return nil, fmt.Errorf("sword block index of %d bytes is not a multiple of 12", len(idx))
	}
	var blocks []string
	for i := 0; i < len(idx); i += 12 {
		off := binary.LittleEndian.Uint32(idx[i:])
		size := binary.LittleEndian.Uint32(idx[i+4:])
		usize := binary.LittleEndian.Uint32(idx[i+8:])
		if uint64(off)+uint64(size) > uint64(len(data)) {
			return nil, fmt.Errorf("sword block %d (offset %d, size %d) runs past the %d-byte data file",
				i/12, off, size, len(data))
		}
		zr, err := zlib.NewReader(bytes.NewReader(data[off : off+size]))
		if err != nil {
			return nil, fmt.Errorf("sword block %d: %w", i/12, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("sword block %d: %w", i/12, err)
		}
		if uint32(len(plain)) != usize {
			return nil, fmt.Errorf("sword block %d: got %d bytes, index says %d", i/12, len(plain), usize)
		}
		blocks = append(blocks, string(plain))
	}
	return blocks, nil
}

var osisBookID = regexp.MustCompile(`<div[^>]*osisID="([^"]+)"[^>]*type="book"`)

// bibleDocuments turns the blocks of a book-blocked OSIS module into one document per book of the
// Bible, named by its OSIS id; blocks without a book (module headers) are skipped.
func bibleDocuments(blocks []string) []document {
	var docs []document
	for _, b := range blocks {
		m := osisBookID.FindStringSubmatch(b)
		if m == nil {
			continue
		}
		if text := stripOSIS(b); text != "" {
			docs = append(docs, document{title: m[1], text: text})
		}
	}
	return docs
}
