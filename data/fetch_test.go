package data

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// fileServer serves files from memory and counts requests.
func fileServer(t *testing.T, files map[string][]byte) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func sha(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func idx(dims []int, body []byte) []byte {
	out := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		out = binary.BigEndian.AppendUint32(out, uint32(d))
	}
	return append(out, body...)
}

func TestFetchCacheAndChecksum(t *testing.T) {
	payload := []byte("wiki text")
	srv, hits := fileServer(t, map[string][]byte{"/f.txt": payload})
	home := t.TempDir()
	r := Remote{Name: "f.txt", URL: srv.URL + "/f.txt", Digest: sha(payload)}
	p, err := Fetch(context.Background(), home, r, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, payload) {
		t.Fatalf("cached %q", b)
	}
	if _, err := Fetch(context.Background(), home, r, io.Discard); err != nil || hits.Load() != 1 {
		t.Fatalf("second fetch: err %v, %d requests, want a cache hit with 1 request", err, hits.Load())
	}
	bad := Remote{Name: "g.txt", URL: srv.URL + "/f.txt", Digest: sha([]byte("other"))}
	if _, err := Fetch(context.Background(), home, bad, io.Discard); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("wrong digest: err = %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(home, "cache", "g.txt*")); len(left) != 0 {
		t.Fatalf("a failed download left %v in the cache", left)
	}
	if _, err := Fetch(context.Background(), home, Remote{Name: "h", URL: srv.URL + "/missing"}, io.Discard); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestFetchIDXSet(t *testing.T) {
	const n, h, w = ValidSize + 3, 2, 2
	pixels := make([]byte, n*h*w)
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 10)
		pixels[i*h*w] = byte(i)
	}
	files := map[string][]byte{
		"/" + idxFiles[0]: gz(idx([]int{n, h, w}, pixels)), "/" + idxFiles[1]: gz(idx([]int{n}, labels)),
		"/" + idxFiles[2]: gz(idx([]int{2, h, w}, pixels[:8])), "/" + idxFiles[3]: gz(idx([]int{2}, labels[:2])),
	}
	srv, _ := fileServer(t, files)
	var remotes []Remote
	for _, f := range idxFiles {
		remotes = append(remotes, Remote{Name: "x-" + f, URL: srv.URL + "/" + f, Digest: sha(files["/"+f])})
	}
	set, err := FetchIDXSet(context.Background(), t.TempDir(), "tiny", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, remotes, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Train) != 3 || len(set.Valid) != ValidSize || len(set.Test) != 2 || set.Height != h {
		t.Fatalf("split sizes %d/%d/%d", len(set.Train), len(set.Valid), len(set.Test))
	}
	seqs, _ := set.Sequences("train", false)
	if len(seqs[2].Tokens) != h*w || seqs[2].Tokens[0] != 2 || seqs[2].Label != 2 {
		t.Errorf("sequence %v label %d", seqs[2].Tokens, seqs[2].Label)
	}
	// Truncated data is an error naming the mismatch.
	if _, _, err := ParseIDX(idx([]int{n, h, w}, pixels[:10])); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated IDX: err = %v", err)
	}
}

func TestFetchCIFAR10(t *testing.T) {
	record := func(label byte, r, g, b byte) []byte {
		rec := []byte{label}
		for _, v := range []byte{r, g, b} {
			rec = append(rec, bytes.Repeat([]byte{v}, 1024)...)
		}
		return rec
	}
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	add := func(name string, b []byte) {
		tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/" + name, Mode: 0o644, Size: int64(len(b))})
		tw.Write(b)
	}
	for i := 1; i <= 5; i++ {
		var batch []byte
		for j := 0; j < ValidSize/5+1; j++ {
			batch = append(batch, record(byte(j%10), 255, 0, 0)...)
		}
		add("data_batch_"+string(rune('0'+i))+".bin", batch)
	}
	add("test_batch.bin", record(7, 10, 20, 30))
	tw.Close()
	zw.Close()
	srv, _ := fileServer(t, map[string][]byte{"/c.tgz": tgz.Bytes()})
	set, err := FetchCIFAR10(context.Background(), t.TempDir(), Remote{Name: "c.tgz", URL: srv.URL + "/c.tgz", Digest: sha(tgz.Bytes())}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Train)+len(set.Valid) != 5*(ValidSize/5+1) || len(set.Test) != 1 || set.Test[0].Label != 7 {
		t.Fatalf("sizes %d+%d/%d", len(set.Train), len(set.Valid), len(set.Test))
	}
	gray, _ := set.Sequences("test", false)
	rgb, _ := set.Sequences("test", true)
	if len(gray[0].Tokens) != 1024 || gray[0].Tokens[0] != 18 { // 0.2989·10 + 0.587·20 + 0.114·30 = 18.2
		t.Errorf("grayscale: %d steps, first %d", len(gray[0].Tokens), gray[0].Tokens[0])
	}
	if len(rgb[0].Tokens) != 3072 || rgb[0].Tokens[0] != 10 || rgb[0].Tokens[1] != 20 || rgb[0].Tokens[2] != 30 {
		t.Errorf("rgb: %d steps, first %v", len(rgb[0].Tokens), rgb[0].Tokens[:3])
	}
	if _, err := ParseCIFARBatch(record(3, 0, 0, 0)[:3000]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated batch: err = %v", err)
	}
}

func TestFetchWikiText103(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, s := range SplitNames {
		f, _ := zw.Create("wikitext-103/wiki." + s + ".tokens")
		io.WriteString(f, " = Valkyria Chronicles III = \n\n "+s+" text @-@ here <unk> \n")
	}
	zw.Close()
	srv, _ := fileServer(t, map[string][]byte{"/w.zip": zbuf.Bytes()})
	home := t.TempDir()
	c, err := FetchWikiText103(context.Background(), home, Remote{Name: "w.zip", URL: srv.URL + "/w.zip", Digest: sha(zbuf.Bytes())}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Valid, "valid text @-@ here <unk>") {
		t.Errorf("valid split %q", c.Valid)
	}
	// A corrupt cached archive gives an error that says how to recover.
	os.WriteFile(filepath.Join(home, "cache", "w.zip"), []byte("PK junk"), 0o644)
	if _, err := FetchWikiText103(context.Background(), home, Remote{Name: "w.zip", URL: srv.URL + "/w.zip"}, io.Discard); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("corrupt zip: err = %v", err)
	}
}

func TestPG19(t *testing.T) {
	files := map[string][]byte{}
	for folder, ids := range map[string][]string{"train": {"10", "11"}, "validation": {"20"}, "test": {"30"}} {
		for _, id := range ids {
			files["/"+folder+"/"+id+".txt"] = []byte("Book " + id + " of " + folder)
		}
	}
	srv, _ := fileServer(t, files)
	home := t.TempDir()
	var root string
	for split, ids := range map[string][]string{"train": {"10", "11"}, "valid": {"20"}, "test": {"30"}} {
		var err error
		if root, err = FetchPG19Books(context.Background(), home, srv.URL, split, ids, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadPG19(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Train != "Book 10 of train\n\nBook 11 of train" || c.Valid != "Book 20 of validation" {
		t.Errorf("train %q valid %q", c.Train, c.Valid)
	}
}

// TestPaperCorporaPrepareAsCorpora: PG-19 copied into its cache folder is
// prepared like any corpus (listed as prepared, loaded with its splits as
// published); before the copy, and for WikiText-103 before a download,
// preparing and loading say what to do.
func TestPaperCorporaPrepareAsCorpora(t *testing.T) {
	home := t.TempDir()
	if err := Prepare(context.Background(), home, "pg19", io.Discard); err == nil || !strings.Contains(err.Error(), "gsutil") {
		t.Errorf("pg19 without a copy: %v, want how to copy it", err)
	}
	if _, err := LoadCorpus(home, "wikitext103"); err == nil || !strings.Contains(err.Error(), "ecpi data prepare wikitext103") {
		t.Errorf("wikitext103 unprepared: %v, want the command that prepares it", err)
	}
	for folder, ids := range map[string][]string{"train": {"10", "11"}, "validation": {"20"}, "test": {"30"}} {
		for _, id := range ids {
			path := filepath.Join(pg19Root(home), folder, id+".txt")
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte("Book "+id+" of "+folder), 0o644)
		}
	}
	if err := Prepare(context.Background(), home, "pg19", io.Discard); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus(home, "pg19")
	if err != nil || c.Train != "Book 10 of train\n\nBook 11 of train" || c.Test != "Book 30 of test" {
		t.Fatalf("pg19: %+v, %v", c, err)
	}
	i := slices.IndexFunc(Corpora(home), func(info CorpusInfo) bool { return info.Name == "pg19" })
	if i < 0 || !Corpora(home)[i].Prepared || !slices.Contains(CorpusNames(), "wikitext103") || slices.Contains(OfflineDatasetNames(), "pg19") {
		t.Errorf("listing: %+v; names %v; offline %v", Corpora(home), CorpusNames(), OfflineDatasetNames())
	}
}

func TestPrepareStopsWhenInterrupted(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Prepare(ctx, home, "mobydick", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "data prepare mobydick interrupted") {
		t.Fatalf("Prepare after Ctrl-C: %v, want it to stop", err)
	}
	if _, statErr := os.Stat(filepath.Join(home, "data", "mobydick", "meta.json")); !os.IsNotExist(statErr) {
		t.Error("an interrupted prepare left a prepared corpus behind")
	}
}
