// Package ecpi knows one thing about ecpi as a whole: the version of the code
// that decides what it computes.
package ecpi

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

// sources are the packages whose code decides what a run computes: the
// models, training and data. Other packages choose backends, draw, parse
// commands or talk to notebooks, and change no number a run produces.
//
//go:embed models/*.go train/*.go data/*.go
var sources embed.FS

var (
	versionOnce sync.Once
	version     string
)

// CodeVersion is a short hash of those sources (tests excluded) as this
// binary was built from them. The run cache keys on it, so a run of other
// code is never replayed, and every results file records it, so a result of
// other code is marked stale.
func CodeVersion() string {
	versionOnce.Do(func() {
		var err error
		if version, err = VersionOf(sources); err != nil {
			panic(err) // the embedded files are always readable
		}
	})
	return version
}

// VersionOf hashes the Go sources of fsys other than tests: each file's path
// and contents, in path order.
func VersionOf(fsys fs.FS) (string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && path.Ext(p) == ".go" && !strings.HasSuffix(p, "_test.go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", err
		}
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
