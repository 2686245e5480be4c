package ecpi

import (
	"testing"
	"testing/fstest"
)

// TestCodeVersionFollowsTheSources: a changed model file changes the
// version, a changed test file or another kind of file does not.
func TestCodeVersionFollowsTheSources(t *testing.T) {
	tree := fstest.MapFS{
		"models/ecp.go":      {Data: []byte("package models // ECP")},
		"models/ecp_test.go": {Data: []byte("package models // its test")},
		"data/corpus.go":     {Data: []byte("package data")},
		"data/notes.md":      {Data: []byte("notes")},
	}
	version := func() string {
		v, err := VersionOf(tree)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	tree["models/ecp_test.go"] = &fstest.MapFile{Data: []byte("package models // another test")}
	tree["data/notes.md"] = &fstest.MapFile{Data: []byte("other notes")}
	if v := version(); v != before {
		t.Errorf("a test or a non-Go file changed the version: %s -> %s", before, v)
	}
	tree["models/ecp.go"] = &fstest.MapFile{Data: []byte("package models // ECP, changed")}
	if v := version(); v == before {
		t.Errorf("a changed model file kept the version %s", v)
	}
	if CodeVersion() == "" || len(CodeVersion()) != 12 {
		t.Errorf("CodeVersion() = %q", CodeVersion())
	}
}
