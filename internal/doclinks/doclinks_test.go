package doclinks

import (
	"strings"
	"testing"
)

// TestModuleDocCommentsPointAtWhatExists: every doc link of the module names
// a declared identifier and every docs/ path in a comment exists.
func TestModuleDocCommentsPointAtWhatExists(t *testing.T) {
	problems, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s", p)
	}
}

// TestStaleReferencesAreFound: a fixture module with one good and one stale
// reference of each kind.
func TestStaleReferencesAreFound(t *testing.T) {
	problems, err := Check("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"a.go:1: docs/missing.md does not exist",
		"a.go:1: doc link [Missing]: this package declares no Missing",
		"a.go:1: doc link [Box.Close]: this package has no type Box with a method or field Close",
		"a.go:1: doc link [strings.NoSuch]: strings declares no NoSuch",
		"a.go:1: doc link [nowhere.Thing]: the file imports no package nowhere",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
