package data

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Remote is a file to download once and keep in $ECPI_HOME/cache.
type Remote struct {
	Name   string // file name in the cache
	URL    string
	Digest string // "sha256:<hex>" or "md5:<hex>" (some publishers give only MD5); "" = not checked
}

// httpClient is replaced by tests; real downloads may be large, so only the connection is timed out.
var httpClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	ResponseHeaderTimeout: 60 * time.Second,
}}

// Fetch returns the path of r in home's cache, downloading it first when it is not there. A download
// is written to a temporary file, checked against r.Digest and only then renamed into place, so the
// cache never holds a partial or wrong file; a file already cached is trusted (it was checked when it
// arrived) and no request is made.
func Fetch(ctx context.Context, home string, r Remote, progress io.Writer) (string, error) {
	path := filepath.Join(home, "cache", r.Name)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	h, want, err := parseDigest(r.Digest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", r.Name, err)
	}
	fmt.Fprintf(progress, "  downloading %s\n", r.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", r.URL, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", r.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: HTTP %s", r.URL, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".part*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download %s: %w after %d bytes", r.URL, err, n)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return "", fmt.Errorf("download %s: got %d bytes, server announced %d", r.URL, n, resp.ContentLength)
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return "", fmt.Errorf("download %s: checksum mismatch: got %s, want %s (file discarded)", r.URL, got, r.Digest)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "  cached %s (%d bytes)\n", path, n)
	return path, nil
}

func parseDigest(d string) (hash.Hash, string, error) {
	switch algo, hexsum, _ := strings.Cut(d, ":"); {
	case d == "":
		return sha256.New(), "", nil
	case algo == "sha256" && len(hexsum) == 64:
		return sha256.New(), strings.ToLower(hexsum), nil
	case algo == "md5" && len(hexsum) == 32:
		return md5.New(), strings.ToLower(hexsum), nil
	}
	return nil, "", fmt.Errorf("digest %q must be sha256:<64 hex> or md5:<32 hex>", d)
}
