package data

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FetchWikiText103 downloads (or finds in the cache) the WikiText-103 zip r and returns its
// wiki.{train,valid,test}.tokens as a corpus, unchanged (the benchmark's own tokenisation, with
// " @-@ " and <unk> as published).
func FetchWikiText103(ctx context.Context, home string, r Remote, progress io.Writer) (*Corpus, error) {
	path, err := Fetch(ctx, home, r, progress)
	if err != nil {
		return nil, err
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to download again)", path, err)
	}
	defer zr.Close()
	texts := map[string]string{}
	for _, f := range zr.File {
		split, ok := strings.CutPrefix(filepath.Base(f.Name), "wiki.")
		if !ok || !strings.HasSuffix(split, ".tokens") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		texts[strings.TrimSuffix(split, ".tokens")] = string(b)
	}
	for _, s := range SplitNames {
		if _, ok := texts[s]; !ok {
			return nil, fmt.Errorf("%s: no wiki.%s.tokens inside", path, s)
		}
	}
	return &Corpus{Name: "wikitext-103", Train: texts["train"], Valid: texts["valid"], Test: texts["test"],
		Parts: []CorpusMeta{{Name: "wikitext-103", StandsFor: "WikiText-103", Source: r.URL}}}, nil
}

// pg19Splits maps our split names to PG-19's folder names.
var pg19Splits = map[string]string{"train": "train", "valid": "validation", "test": "test"}

// FetchPG19Books downloads the named books (Gutenberg ids) of one split from PG-19's public bucket
// (baseURL, normally PG19BaseURL) into $home/cache/pg19/<folder>/<id>.txt and returns the root
// folder for LoadPG19. PG-19 publishes no checksums, so the files are not verified. The full train
// split is 28,602 books (11 GB); pass the ids you want.
func FetchPG19Books(ctx context.Context, home, baseURL, split string, ids []string, progress io.Writer) (string, error) {
	folder, ok := pg19Splits[split]
	if !ok {
		return "", fmt.Errorf("split %q unknown (valid: train, valid, test)", split)
	}
	for _, id := range ids {
		r := Remote{Name: filepath.Join("pg19", folder, id+".txt"), URL: strings.TrimSuffix(baseURL, "/") + "/" + folder + "/" + id + ".txt"}
		if _, err := Fetch(ctx, home, r, progress); err != nil {
			return "", err
		}
	}
	return filepath.Join(home, "cache", "pg19"), nil
}

// LoadPG19 reads a PG-19 tree (root/{train,validation,test}/<id>.txt, as published) into a corpus,
// books in id order separated by blank lines; maxBooks > 0 keeps the first maxBooks of each split.
func LoadPG19(root string, maxBooks int) (*Corpus, error) {
	c := &Corpus{Name: "pg19", Parts: []CorpusMeta{{Name: "pg19", StandsFor: "PG-19", Source: root}}}
	for _, split := range SplitNames {
		paths, err := filepath.Glob(filepath.Join(root, pg19Splits[split], "*.txt"))
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("PG-19: no books in %s", filepath.Join(root, pg19Splits[split]))
		}
		sort.Strings(paths)
		if maxBooks > 0 && len(paths) > maxBooks {
			paths = paths[:maxBooks]
		}
		var books []string
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			books = append(books, string(b))
		}
		text := strings.Join(books, "\n\n")
		switch split {
		case "train":
			c.Train = text
		case "valid":
			c.Valid = text
		default:
			c.Test = text
		}
	}
	return c, nil
}
