package data

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// SplitNames are the three splits every corpus and image set has, in order.
var SplitNames = []string{"train", "valid", "test"}

// splitRule decides which split each piece of a corpus goes to.
type splitRule int

const (
	// splitByDocument sends each whole document to one split by the FNV-1a hash of its title:
	// hash%20 == 0 valid, == 1 test, otherwise train (90/5/5 in expectation). Used where a corpus
	// has thousands of documents, like WikiText's articles.
	splitByDocument splitRule = iota
	// splitContiguous cuts every document at paragraph boundaries: the first 90% of its bytes train,
	// the next 5% valid, the last 5% test. Used for a handful of long books.
	splitContiguous
)

func (r splitRule) String() string {
	if r == splitByDocument {
		return "by document: FNV-1a(title) % 20 == 0 -> valid, == 1 -> test, else train"
	}
	return "contiguous per document at paragraph boundaries: first 90% of bytes train, next 5% valid, last 5% test"
}

// corpusFormat is bumped whenever cleaning or splitting changes, so Prepare redoes old output.
const corpusFormat = 1

// textSource says where a stand-in corpus comes from and how to turn it into documents.
type textSource struct {
	name      string
	standsFor string
	pkg       string // Debian package; "" for the Go toolchain's own file
	rule      splitRule
	documents func(root string) ([]document, error)
}

var textSources = []textSource{
	{"foldoc", "WikiText-103 (encyclopedic articles)", "dict-foldoc", splitByDocument, foldocSource},
	{"linuxdoc", "WikiText-103 (expository prose)", "linux-doc-6.1", splitByDocument, linuxdocSource},
	{"austen", "PG-19 (six Jane Austen novels)", "r-cran-janeaustenr", splitContiguous, austenSource},
	{"bible", "PG-19 (World English Bible)", "sword-text-web", splitContiguous, bibleSource},
	{"wells-verne", "PG-19 (Wells, Verne and Dickens novels)", "r-cran-tidytext", splitContiguous, tidytextSource},
	{"mobydick", "PG-19 (Moby Dick)", "r-cran-tokenizers", splitContiguous, mobydickSource},
	{"opticks", "PG-19, tiny (Newton's Opticks)", "", splitContiguous, opticksSource},
}

// combinedCorpora are read as the concatenation of their parts (nothing extra is stored).
var combinedCorpora = []struct {
	name, standsFor string
	parts           []string
}{
	{"wiki", "WikiText-103 (foldoc + linuxdoc)", []string{"foldoc", "linuxdoc"}},
	{"books", "PG-19 (austen + bible + wells-verne + mobydick)", []string{"austen", "bible", "wells-verne", "mobydick"}},
}

// CorpusMeta is what meta.json records about a prepared corpus.
type CorpusMeta struct {
	Name      string           `json:"name"`
	StandsFor string           `json:"stands_for"`
	Source    string           `json:"source"`
	Version   string           `json:"version"`
	SplitRule string           `json:"split_rule"`
	Documents int              `json:"documents"`
	Bytes     map[string]int64 `json:"bytes"`
	Format    int              `json:"format"`
}

// CorpusInfo describes a corpus for listings.
type CorpusInfo struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // "text" or "images"
	StandsFor string   `json:"stands_for"`
	Source    string   `json:"source"`
	Parts     []string `json:"parts,omitempty"`
	Classes   int      `json:"classes,omitempty"` // an image set's class count
	Prepared  bool     `json:"prepared"`
	Bytes     int64    `json:"bytes"` // train+valid+test when prepared; with the byte tokenizer also the token count
}

// Corpus is a prepared text corpus: the cleaned text of each split.
type Corpus struct {
	Name               string
	Train, Valid, Test string
	Parts              []CorpusMeta // one per stored corpus (one, or several for wiki/books)
}

// Home returns $ECPI_HOME, or ~/.ecpi when it is unset.
func Home() string {
	if h := os.Getenv("ECPI_HOME"); h != "" {
		return h
	}
	if u, err := os.UserHomeDir(); err == nil {
		return filepath.Join(u, ".ecpi")
	}
	return ".ecpi"
}

// CorpusNames lists every corpus name Prepare and LoadCorpus accept.
func CorpusNames() []string {
	var names []string
	for _, s := range textSources {
		names = append(names, s.name)
	}
	for _, c := range combinedCorpora {
		names = append(names, c.name)
	}
	for _, c := range paperCorpora {
		names = append(names, c.name)
	}
	return names
}

// OfflineDatasetNames lists what `ecpi data prepare all` prepares: every stored corpus and the image
// sets whose record says they need no internet.
func OfflineDatasetNames() []string {
	var names []string
	for _, s := range textSources {
		names = append(names, s.name)
	}
	for _, src := range imageSources {
		if src.Offline {
			names = append(names, src.Name)
		}
	}
	return names
}

// DatasetNames lists everything Prepare accepts: the corpora, then the image sets.
func DatasetNames() []string { return append(CorpusNames(), ImageSetNames()...) }

func corpusDir(home, name string) string { return filepath.Join(home, "data", name) }

func findSource(name string) (textSource, error) {
	for _, s := range textSources {
		if s.name == name {
			return s, nil
		}
	}
	return textSource{}, fmt.Errorf("unknown dataset %q (valid: %s)", name, strings.Join(DatasetNames(), ", "))
}

func corpusParts(name string) ([]string, error) {
	for _, c := range combinedCorpora {
		if c.name == name {
			return c.parts, nil
		}
	}
	if _, ok := paperCorpusNamed(name); ok {
		return []string{name}, nil
	}
	if _, err := findSource(name); err != nil {
		return nil, err
	}
	return []string{name}, nil
}

// Corpora lists every corpus with what it stands in for and whether it is prepared under home.
func Corpora(home string) []CorpusInfo {
	var infos []CorpusInfo
	for _, s := range textSources {
		info := CorpusInfo{Name: s.name, Kind: "text", StandsFor: s.standsFor, Source: sourceName(s)}
		if m, err := readMeta(home, s.name); err == nil {
			info.Prepared = true
			info.Bytes = m.Bytes["train"] + m.Bytes["valid"] + m.Bytes["test"]
		}
		infos = append(infos, info)
	}
	for _, c := range combinedCorpora {
		info := CorpusInfo{Name: c.name, Kind: "text", StandsFor: c.standsFor, Source: "combined", Parts: c.parts, Prepared: true}
		for _, p := range c.parts {
			m, err := readMeta(home, p)
			info.Prepared = info.Prepared && err == nil
			if err == nil {
				info.Bytes += m.Bytes["train"] + m.Bytes["valid"] + m.Bytes["test"]
			}
		}
		if !info.Prepared {
			info.Bytes = 0
		}
		infos = append(infos, info)
	}
	for _, c := range paperCorpora {
		info := CorpusInfo{Name: c.name, Kind: "text", StandsFor: c.standsFor, Source: c.source}
		if m, err := readMeta(home, c.name); err == nil {
			info.Prepared = true
			info.Bytes = m.Bytes["train"] + m.Bytes["valid"] + m.Bytes["test"]
		}
		infos = append(infos, info)
	}
	return infos
}

func sourceName(s textSource) string {
	if s.pkg == "" {
		return "Go toolchain: src/testdata/Isaac.Newton-Opticks.txt"
	}
	return "Debian package " + s.pkg
}

func readMeta(home, name string) (CorpusMeta, error) {
	var m CorpusMeta
	b, err := os.ReadFile(filepath.Join(corpusDir(home, name), "meta.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s/meta.json: %w", name, err)
	}
	if m.Format != corpusFormat {
		return m, fmt.Errorf("%s was prepared by an older ecpi (format %d, want %d)", name, m.Format, corpusFormat)
	}
	return m, nil
}

// Prepare makes the corpus or image set name ready under home. For a corpus it fetches the source (a Debian package, extracted without installing it, or
// a file of the Go toolchain), cleans it, splits it and writes $home/data/<name>/{train,valid,test}.txt
// and meta.json. A corpus already prepared in the current format is left alone. For "wiki" and
// "books" it prepares each part.
func Prepare(ctx context.Context, home, name string, progress io.Writer) error {
	err := prepare(ctx, home, name, progress)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("data prepare %s interrupted: what was done so far is kept, what was half done is not; run it again to finish", name)
	}
	return err
}

func prepare(ctx context.Context, home, name string, progress io.Writer) error {
	if slices.Contains(ImageSetNames(), name) {
		return prepareImages(ctx, home, name, progress)
	}
	parts, err := corpusParts(name)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := prepareOne(ctx, home, p, progress); err != nil {
			return err
		}
	}
	return nil
}

func prepareOne(ctx context.Context, home, name string, progress io.Writer) error {
	if _, err := readMeta(home, name); err == nil {
		fmt.Fprintf(progress, "%s: already prepared in %s\n", name, corpusDir(home, name))
		return nil
	}
	if p, ok := paperCorpusNamed(name); ok {
		return preparePaperCorpus(ctx, home, p, progress)
	}
	src, err := findSource(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "%s: preparing from %s\n", name, sourceName(src))
	root, version, err := sourceRoot(ctx, home, src, progress)
	if err != nil {
		return fmt.Errorf("corpus %s: %w", name, err)
	}
	docs, err := src.documents(root)
	if err != nil {
		return fmt.Errorf("corpus %s: reading %s: %w", name, root, err)
	}
	if len(docs) == 0 {
		return fmt.Errorf("corpus %s: no documents found under %s", name, root)
	}
	meta := CorpusMeta{Name: name, StandsFor: src.standsFor, Source: sourceName(src), Version: version,
		SplitRule: src.rule.String(), Documents: len(docs)}
	meta, err = writePrepared(home, meta, splitDocuments(docs, src.rule))
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "%s: %d documents, train %d / valid %d / test %d bytes\n",
		name, len(docs), meta.Bytes["train"], meta.Bytes["valid"], meta.Bytes["test"])
	return nil
}

// writePrepared writes a prepared corpus, its train, valid and test text and
// meta, and returns meta with the sizes and format it wrote.
func writePrepared(home string, meta CorpusMeta, splits [3]string) (CorpusMeta, error) {
	meta.Bytes, meta.Format = map[string]int64{}, corpusFormat
	dir := corpusDir(home, meta.Name)
	for i, split := range SplitNames {
		if err := writeFileAtomic(filepath.Join(dir, split+".txt"), []byte(splits[i])); err != nil {
			return meta, err
		}
		meta.Bytes[split] = int64(len(splits[i]))
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	return meta, writeFileAtomic(filepath.Join(dir, "meta.json"), append(b, '\n'))
}

func sourceRoot(ctx context.Context, home string, src textSource, progress io.Writer) (root, version string, err error) {
	if src.pkg != "" {
		return debPackage(ctx, home, src.pkg, progress)
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", "", fmt.Errorf("corpus %s comes with the Go toolchain, and `go env GOROOT` failed: %w", src.name, err)
	}
	goroot := strings.TrimSpace(string(out))
	v, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", "", fmt.Errorf("no Go toolchain found (GOROOT %q): %w", goroot, err)
	}
	return goroot, strings.SplitN(string(v), "\n", 2)[0], nil
}

// splitDocuments applies rule and returns the train, valid and test text.
func splitDocuments(docs []document, rule splitRule) [3]string {
	var parts [3][]string
	for _, d := range docs {
		if rule == splitByDocument {
			h := fnv.New32a()
			h.Write([]byte(d.title))
			i := 0
			switch h.Sum32() % 20 {
			case 0:
				i = 1
			case 1:
				i = 2
			}
			parts[i] = append(parts[i], d.text)
			continue
		}
		paras := splitParagraphs(d.text)
		total, done := 0, 0
		for _, p := range paras {
			total += len(p)
		}
		var pieces [3][]string
		for _, p := range paras {
			frac, i := float64(done)/float64(total), 0
			if frac >= 0.95 {
				i = 2
			} else if frac >= 0.90 {
				i = 1
			}
			pieces[i] = append(pieces[i], p)
			done += len(p)
		}
		for i := range pieces {
			if len(pieces[i]) > 0 {
				parts[i] = append(parts[i], strings.Join(pieces[i], "\n\n"))
			}
		}
	}
	var out [3]string
	for i := range parts {
		if len(parts[i]) > 0 {
			out[i] = strings.Join(parts[i], "\n\n") + "\n"
		}
	}
	return out
}

// LoadCorpus reads a prepared corpus. "wiki" and "books" are the concatenation of their parts.
func LoadCorpus(home, name string) (*Corpus, error) {
	parts, err := corpusParts(name)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Name: name}
	var texts [3][]string
	for _, p := range parts {
		meta, err := readMeta(home, p)
		if paper, ok := paperCorpusNamed(p); ok && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("corpus %s is not prepared in %s: run `ecpi data prepare %s` (from %s)", p, corpusDir(home, p), name, paper.source)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("corpus %s is not prepared in %s: run `ecpi data prepare %s` (or `make data`)",
				p, corpusDir(home, p), name)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: run `ecpi data prepare %s` again", err, name)
		}
		for i, split := range SplitNames {
			b, err := os.ReadFile(filepath.Join(corpusDir(home, p), split+".txt"))
			if err != nil {
				return nil, fmt.Errorf("corpus %s: %w (run `ecpi data prepare %s` again)", p, err, name)
			}
			texts[i] = append(texts[i], string(b))
		}
		c.Parts = append(c.Parts, meta)
	}
	c.Train, c.Valid, c.Test = strings.Join(texts[0], "\n"), strings.Join(texts[1], "\n"), strings.Join(texts[2], "\n")
	return c, nil
}

// Split returns the text of split "train", "valid" or "test".
func (c *Corpus) Split(split string) (string, error) {
	switch split {
	case "train":
		return c.Train, nil
	case "valid":
		return c.Valid, nil
	case "test":
		return c.Test, nil
	}
	return "", fmt.Errorf("split %q unknown (valid: %s)", split, strings.Join(SplitNames, ", "))
}

// Tokens encodes one split with tok.
func (c *Corpus) Tokens(tok Tokenizer, split string) ([]int32, error) {
	text, err := c.Split(split)
	if err != nil {
		return nil, err
	}
	return tok.Encode(text), nil
}

// writeFileAtomic writes data to a temporary file beside path and renames it into place, so a reader
// never sees half a file and an interrupted run leaves no corrupt output.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// The document readers of each source.

func foldocSource(root string) ([]document, error) {
	text, err := readGzip(filepath.Join(root, "usr/share/dictd/foldoc.dict.dz"))
	if err != nil {
		return nil, err
	}
	return foldocDocuments(string(text)), nil
}

func linuxdocSource(root string) ([]document, error) {
	base := filepath.Join(root, "usr/share/doc/linux-doc-6.1/html/_sources")
	var docs []document
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		if d.IsDir() && rel == "translations" { // Chinese, Japanese, Korean, Italian, Spanish copies
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".rst.txt") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if text := rstToText(string(src)); len(strings.Fields(text)) >= 50 {
			docs = append(docs, document{title: rel, text: text})
		}
		return nil
	})
	return docs, err
}

func austenSource(root string) ([]document, error) {
	objs, err := ReadRLazyLoad(filepath.Join(root, "usr/lib/R/site-library/janeaustenr/data/Rdata"))
	if err != nil {
		return nil, err
	}
	// Publication order, so the corpus reads in a fixed, meaningful order.
	var docs []document
	for _, name := range []string{"sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey", "persuasion"} {
		v := objs[name]
		if v == nil || v.Type != rSTRSXP {
			return nil, fmt.Errorf("janeaustenr has no character vector %q", name)
		}
		docs = append(docs, document{title: name, text: tidyLines(strings.Join(v.Strings, "\n"))})
	}
	return docs, nil
}

func bibleSource(root string) ([]document, error) {
	dir := filepath.Join(root, "usr/share/sword/modules/texts/ztext/engWEB2015eb")
	var docs []document
	for _, testament := range []string{"ot", "nt"} {
		idx, err := os.ReadFile(filepath.Join(dir, testament+".bzs"))
		if err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(filepath.Join(dir, testament+".bzz"))
		if err != nil {
			return nil, err
		}
		blocks, err := swordBlocks(idx, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", testament, err)
		}
		docs = append(docs, bibleDocuments(blocks)...)
	}
	return docs, nil
}

// tidytextSource takes the novels of tidytext's books data frame other than Pride and Prejudice,
// which the austen corpus already has.
func tidytextSource(root string) ([]document, error) {
	objs, err := ReadRData(filepath.Join(root, "usr/lib/R/site-library/tidytext/extdata/books.rda"))
	if err != nil {
		return nil, err
	}
	books := objs["books"]
	if books == nil {
		return nil, errors.New("books.rda has no object \"books\"")
	}
	text, title := books.Field("text"), books.Field("title")
	if text == nil || title == nil || len(text.Strings) != len(title.Strings) {
		return nil, errors.New("books.rda: want character columns text and title of equal length")
	}
	lines := map[string][]string{}
	for i, t := range title.Strings {
		lines[t] = append(lines[t], text.Strings[i])
	}
	var titles []string
	for t := range lines {
		if t != "Pride and Prejudice" {
			titles = append(titles, t)
		}
	}
	sort.Strings(titles)
	var docs []document
	for _, t := range titles {
		docs = append(docs, document{title: t, text: tidyLines(gutenbergBody(strings.Join(lines[t], "\n")))})
	}
	return docs, nil
}

func mobydickSource(root string) ([]document, error) {
	objs, err := ReadRLazyLoad(filepath.Join(root, "usr/lib/R/site-library/tokenizers/data/Rdata"))
	if err != nil {
		return nil, err
	}
	v := objs["mobydick"]
	if v == nil || v.Type != rSTRSXP {
		return nil, errors.New("tokenizers has no character vector \"mobydick\"")
	}
	return []document{{title: "mobydick", text: tidyLines(gutenbergBody(strings.Join(v.Strings, "\n")))}}, nil
}

func opticksSource(goroot string) ([]document, error) {
	b, err := os.ReadFile(filepath.Join(goroot, "src/testdata/Isaac.Newton-Opticks.txt"))
	if err != nil {
		return nil, err
	}
	return []document{{title: "opticks", text: tidyLines(gutenbergBody(string(b)))}}, nil
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
