package data

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rWriter writes R XDR serialisation the way R does, for the parser tests.
type rWriter struct{ bytes.Buffer }

func (w *rWriter) int(v int32) { binary.Write(&w.Buffer, binary.BigEndian, v) }

func (w *rWriter) header(version int32) {
	w.WriteString("X\n")
	w.int(version)
	w.int(0x040201)
	w.int(0x030500)
	if version == 3 {
		w.int(5)
		w.WriteString("UTF-8")
	}
}

func (w *rWriter) charsxp(s string) {
	w.int(rCHARSXP | 1<<15) // UTF-8 flag in the levels bits, as R writes it
	w.int(int32(len(s)))
	w.WriteString(s)
}

func (w *rWriter) strsxp(ss []string, attrs func()) {
	flags := int32(rSTRSXP)
	if attrs != nil {
		flags |= 1 << 9
	}
	w.int(flags)
	w.int(int32(len(ss)))
	for _, s := range ss {
		if s == "\x00NA" {
			w.int(rCHARSXP)
			w.int(-1)
			continue
		}
		w.charsxp(s)
	}
	if attrs != nil {
		attrs()
	}
}

// symbol writes a SYMSXP the first time and a reference to it afterwards, as R does.
func (w *rWriter) symbol(name string, table *[]string) {
	for i, s := range *table {
		if s == name {
			w.int(int32(rREFSXP | (i+1)<<8))
			return
		}
	}
	*table = append(*table, name)
	w.int(rSYMSXP)
	w.charsxp(name)
}

// pairlist writes tagged cons cells terminated by NILVALUE.
func (w *rWriter) pairlist(tags []string, values []func(), table *[]string) {
	for i, t := range tags {
		w.int(rLISTSXP | 1<<10)
		w.symbol(t, table)
		values[i]()
	}
	w.int(rNILVALUE)
}

func TestReadRSerializedStrings(t *testing.T) {
	for _, version := range []int32{2, 3} {
		var w rWriter
		w.header(version)
		var syms []string
		w.strsxp([]string{"It is a truth", "\x00NA", "universally acknowledged"}, func() {
			w.pairlist([]string{"names"}, []func(){func() { w.strsxp([]string{"a", "b", "c"}, nil) }}, &syms)
		})
		v, err := ReadRSerialized(&w.Buffer)
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		want := []string{"It is a truth", "", "universally acknowledged"}
		if strings.Join(v.Strings, "|") != strings.Join(want, "|") {
			t.Errorf("version %d: strings %q, want %q", version, v.Strings, want)
		}
		if strings.Join(v.Names(), ",") != "a,b,c" {
			t.Errorf("version %d: names %q", version, v.Names())
		}
	}
}

func TestReadRSerializedTruncated(t *testing.T) {
	var w rWriter
	w.header(2)
	w.strsxp([]string{"a longer string"}, nil)
	raw := w.Bytes()
	_, err := ReadRSerialized(bytes.NewReader(raw[:len(raw)-4]))
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated stream: err = %v, want a truncation error", err)
	}
	if _, err := ReadRSerialized(strings.NewReader("A\n")); err == nil {
		t.Fatal("ASCII-format stream accepted")
	}
}

func zlibWithLength(t *testing.T, plain []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(plain)))
	zw := zlib.NewWriter(&b)
	zw.Write(plain)
	zw.Close()
	return b.Bytes()
}

// TestReadRLazyLoad writes an .rdx index and .rdb database holding two character vectors.
func TestReadRLazyLoad(t *testing.T) {
	dir := t.TempDir()
	var db bytes.Buffer
	objects := map[string][]string{"emma": {"EMMA", "", "By Jane Austen"}, "persuasion": {"Persuasion"}}
	names := []string{"emma", "persuasion"}
	var positions [][2]int32
	for _, n := range names {
		var w rWriter
		w.header(3)
		w.strsxp(objects[n], nil)
		entry := zlibWithLength(t, w.Bytes())
		positions = append(positions, [2]int32{int32(db.Len()), int32(len(entry))})
		db.Write(entry)
	}
	// index: list(variables = list(emma = c(off, len), ...), compressed = TRUE)
	var w rWriter
	w.header(3)
	var syms []string
	w.int(rVECSXP | 1<<9)
	w.int(2)
	w.int(rVECSXP | 1<<9)
	w.int(int32(len(names)))
	for _, p := range positions {
		w.int(rINTSXP)
		w.int(2)
		w.int(p[0])
		w.int(p[1])
	}
	w.pairlist([]string{"names"}, []func(){func() { w.strsxp(names, nil) }}, &syms)
	w.int(rLGLSXP)
	w.int(1)
	w.int(1)
	w.pairlist([]string{"names"}, []func(){func() { w.strsxp([]string{"variables", "compressed"}, nil) }}, &syms)
	var idx bytes.Buffer
	gz := gzip.NewWriter(&idx)
	gz.Write(w.Bytes())
	gz.Close()
	base := filepath.Join(dir, "Rdata")
	os.WriteFile(base+".rdx", idx.Bytes(), 0o644)
	os.WriteFile(base+".rdb", db.Bytes(), 0o644)

	got, err := ReadRLazyLoad(base)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range objects {
		if strings.Join(got[n].Strings, "|") != strings.Join(want, "|") {
			t.Errorf("%s = %q, want %q", n, got[n].Strings, want)
		}
	}
	// A damaged database entry is reported with the object's name.
	broken := db.Bytes()
	os.WriteFile(base+".rdb", broken[:len(broken)-10], 0o644)
	if _, err := ReadRLazyLoad(base); err == nil || !strings.Contains(err.Error(), "persuasion") {
		t.Errorf("truncated .rdb: err = %v, want one naming the object", err)
	}
}

// TestReadRData writes a gzip-compressed RDX2 file holding a data frame, like tidytext's books.rda.
func TestReadRData(t *testing.T) {
	var w rWriter
	w.WriteString("RDX2\n")
	w.header(2)
	var syms []string
	w.pairlist([]string{"books"}, []func(){func() {
		w.int(rVECSXP | 1<<9 | 1<<8)
		w.int(2)
		w.strsxp([]string{"Call me Ishmael.", "Some years ago"}, nil)
		w.strsxp([]string{"Moby Dick", "Moby Dick"}, nil)
		w.pairlist([]string{"names", "class"}, []func(){
			func() { w.strsxp([]string{"text", "title"}, nil) },
			func() { w.strsxp([]string{"data.frame"}, nil) },
		}, &syms)
	}}, &syms)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(w.Bytes())
	zw.Close()
	path := filepath.Join(t.TempDir(), "books.rda")
	os.WriteFile(path, gz.Bytes(), 0o644)
	objs, err := ReadRData(path)
	if err != nil {
		t.Fatal(err)
	}
	books := objs["books"]
	if books == nil || books.Field("text") == nil || books.Field("text").Strings[1] != "Some years ago" {
		t.Fatalf("books data frame not read back: %+v", books)
	}
	if books.Attr["class"].Strings[0] != "data.frame" {
		t.Errorf("class attribute = %q", books.Attr["class"].Strings)
	}
}

func TestSwordBlocksAndOSIS(t *testing.T) {
	books := []string{
		`<milestone type="x-importer"/>`,
		`<div osisID="Gen" sID="g1" type="book"/><title type="main">Genesis</title><chapter osisID="Gen.1" sID="Gen.1"/>` +
			`<div sID="p1" type="x-p"/><w lemma="strong:H7225">In the beginning</w>, God created<note placement="foot">Or, a footnote</note> the heavens &amp; the earth.` +
			`<div type="x-milestone" subType="x-preverse" sID="pv1"/><div type="x-milestone" subType="x-preverse" eID="pv1"/>` +
			` The earth was formless .<lg sID="lg1"/><l sID="l1"/>First line,<l eID="l1"/> <l sID="l2"/>second line.<l eID="l2"/><lg eID="lg1"/>`,
	}
	var idx, data bytes.Buffer
	for _, b := range books {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		io.WriteString(zw, b)
		zw.Close()
		binary.Write(&idx, binary.LittleEndian, [3]uint32{uint32(data.Len()), uint32(z.Len()), uint32(len(b))})
		data.Write(z.Bytes())
	}
	blocks, err := swordBlocks(idx.Bytes(), data.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	docs := bibleDocuments(blocks)
	if len(docs) != 1 || docs[0].title != "Gen" {
		t.Fatalf("documents = %+v, want one titled Gen", docs)
	}
	want := "Genesis\n\nIn the beginning, God created the heavens & the earth. The earth was formless.\n\nFirst line,\nsecond line."
	if docs[0].text != want {
		t.Errorf("OSIS text =\n%q\nwant\n%q", docs[0].text, want)
	}
	if _, err := swordBlocks(idx.Bytes(), data.Bytes()[:data.Len()-3]); err == nil {
		t.Error("truncated .bzz accepted")
	}
}

func TestFoldocDocuments(t *testing.T) {
	dict := "00-database-short\n     The Free On-line Dictionary\n\n" +
		"Brooks's Law\n\n   <programming> \"Adding manpower to a late {software project}\n   makes it later\" - see {The Mythical Man-Month\n   (http://example.org/)}.\n\n   [{Jargon File}]\n\n   (1995-02-07)\n\n" +
		"broker\n\n   {object request broker}\n\n"
	docs := foldocDocuments(dict)
	if len(docs) != 1 {
		t.Fatalf("got %d documents (%+v), want 1: the header and the pointer-only entry are dropped", len(docs), docs)
	}
	want := "Brooks's Law\n\n\"Adding manpower to a late software project makes it later\" - see The Mythical Man-Month."
	if docs[0].text != want {
		t.Errorf("entry =\n%q\nwant\n%q", docs[0].text, want)
	}
}

func TestRSTToText(t *testing.T) {
	src := ".. SPDX-License-Identifier: GPL-2.0\n\n=====\nTitle\n=====\n\n:Author: Someone\n\n" +
		"The ``struct page`` is described in :ref:`the mm docs <mm>` and\n`the site <http://x.org>`_, **really**.\n\n" +
		"Example::\n\n    int x = 1;\n    return x;\n\n.. code-block:: c\n\n   foo();\n\n- a bullet item\n"
	got := rstToText(src)
	want := "Title\n\nThe struct page is described in the mm docs and the site, really.\n\nExample:\n\na bullet item"
	if got != want {
		t.Errorf("rstToText =\n%q\nwant\n%q", got, want)
	}
}

func TestGutenbergBody(t *testing.T) {
	text := "Header\n*** START OF THIS PROJECT GUTENBERG EBOOK X ***\nBody text.\nEnd of Project Gutenberg's X\n*** END OF THIS ***\nLicence"
	if got := gutenbergBody(text); got != "Body text.\n" {
		t.Errorf("gutenbergBody = %q", got)
	}
}

func TestSplitDocuments(t *testing.T) {
	var paras []string
	for i := range 100 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26)), 10))
	}
	s := splitDocuments([]document{{title: "book", text: strings.Join(paras, "\n\n")}}, splitContiguous)
	if n := len(splitParagraphs(s[0])); n != 90 {
		t.Errorf("contiguous: %d train paragraphs, want 90", n)
	}
	if n := len(splitParagraphs(s[2])); n != 5 {
		t.Errorf("contiguous: %d test paragraphs, want 5", n)
	}
	var docs []document
	for i := range 2000 {
		docs = append(docs, document{title: "entry" + string(rune('A'+i%26)) + strings.Repeat("x", i/26), text: "t"})
	}
	s = splitDocuments(docs, splitByDocument)
	counts := [3]int{}
	for i := range s {
		counts[i] = strings.Count(s[i], "t")
	}
	if counts[0]+counts[1]+counts[2] != 2000 || counts[1] < 50 || counts[1] > 150 || counts[2] < 50 || counts[2] > 150 {
		t.Errorf("by-document split counts %v, want about 1800/100/100", counts)
	}
	again := splitDocuments(docs, splitByDocument)
	if again != s {
		t.Error("by-document split is not deterministic")
	}
}

func TestLoadCorpusMissingNamesCommand(t *testing.T) {
	_, err := LoadCorpus(t.TempDir(), "books")
	if err == nil || !strings.Contains(err.Error(), "ecpi data prepare books") {
		t.Fatalf("err = %v, want one naming `ecpi data prepare books`", err)
	}
	if _, err := LoadCorpus(t.TempDir(), "nope"); err == nil || !strings.Contains(err.Error(), "austen") {
		t.Fatalf("unknown corpus: err = %v, want the list of valid names", err)
	}
}

// TestPreparedCorpora checks corpora prepared on this machine (by `make data`) look like clean English.
func TestPreparedCorpora(t *testing.T) {
	for _, info := range Corpora(Home()) {
		if !info.Prepared {
			t.Logf("corpus %s not prepared under %s; run `ecpi data prepare %s` to check it", info.Name, Home(), info.Name)
			continue
		}
		c, err := LoadCorpus(Home(), info.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range SplitNames {
			text, _ := c.Split(split)
			if len(text) < 10000 {
				t.Errorf("%s/%s has only %d bytes", info.Name, split, len(text))
			}
			for _, junk := range []string{"<w lemma", "</note>", "``", ":ref:`", "*** START OF"} {
				if n := strings.Count(text, junk); n > len(text)/200000+2 {
					t.Errorf("%s/%s contains %q %d times", info.Name, split, junk, n)
				}
			}
			if n := strings.Count(text, " the "); n < len(text)/2000 {
				t.Errorf("%s/%s: %q only %d times in %d bytes; not English prose?", info.Name, split, " the ", n, len(text))
			}
		}
	}
}
