package data

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
)

// paperCorpus is one of the papers' own text benchmarks. ecpi's stand-ins
// ship in Debian packages; these need a network (and room: WikiText-103 is
// 0.5 GB of text, PG-19 11 GB), so `ecpi data prepare all` leaves them out.
// Prepared, they are corpora like the others: data=<name> trains on them.
type paperCorpus struct {
	name, standsFor, source string
	fetch                   func(ctx context.Context, home string, progress io.Writer) (*Corpus, error)
}

var paperCorpora = []paperCorpus{
	{name: "wikitext103", standsFor: "WikiText-103 itself, as published (the papers' benchmark)", source: WikiText103URL,
		fetch: func(ctx context.Context, home string, progress io.Writer) (*Corpus, error) {
			return FetchWikiText103(ctx, home, WikiText103Remote, progress)
		}},
	{name: "pg19", standsFor: "PG-19 itself (the ECP paper's long books)", source: "a copy of " + PG19BaseURL + " in $ECPI_HOME/cache/pg19", fetch: loadPG19Copy},
}

// pg19Root is where PG-19's books go: FetchPG19Books's cache, or a copy of the bucket.
func pg19Root(home string) string { return filepath.Join(home, "cache", "pg19") }

// loadPG19Copy reads PG-19 from pg19Root. Its bucket publishes no index to
// fetch 28,752 books by, so the books are copied in first.
func loadPG19Copy(_ context.Context, home string, _ io.Writer) (*Corpus, error) {
	root := pg19Root(home)
	c, err := LoadPG19(root, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: PG-19 (11 GB) has no index to download it by from here; copy it into %s first "+
			"(gsutil -m cp -r 'gs://deepmind-gutenberg/*' %s, or FetchPG19Books for chosen ids), then prepare pg19 again", err, root, root)
	}
	return c, nil
}

func paperCorpusNamed(name string) (paperCorpus, bool) {
	for _, c := range paperCorpora {
		if c.name == name {
			return c, true
		}
	}
	return paperCorpus{}, false
}

// preparePaperCorpus fetches a paper's corpus and writes it as a prepared
// corpus, its splits as published.
func preparePaperCorpus(ctx context.Context, home string, p paperCorpus, progress io.Writer) error {
	fmt.Fprintf(progress, "%s: from %s\n", p.name, p.source)
	c, err := p.fetch(ctx, home, progress)
	if err != nil {
		return fmt.Errorf("corpus %s: %w", p.name, err)
	}
	meta, err := writePrepared(home, CorpusMeta{Name: p.name, StandsFor: p.standsFor, Source: p.source, SplitRule: "as published"},
		[3]string{c.Train, c.Valid, c.Test})
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "%s: train %d / valid %d / test %d bytes\n", p.name, meta.Bytes["train"], meta.Bytes["valid"], meta.Bytes["test"])
	return nil
}
