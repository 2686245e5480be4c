package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
)

// TestDocsNameEveryRegisteredName: the pages users read for the families and
// the data name every registered family and every data name, so a new one
// cannot be added without its documentation (the registries generate the
// help texts; these pages are written by hand).
func TestDocsNameEveryRegisteredName(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "docs", name)) // go test runs in tests/
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	variants, sources := read("attention-variants.md"), read("data-sources.md")
	for _, family := range models.FamilyNames() {
		if !strings.Contains(variants, "`"+family+"`") {
			t.Errorf("docs/attention-variants.md does not name family `%s`", family)
		}
	}
	for _, d := range train.DataInfos() {
		if !strings.Contains(sources, "`"+d.Name+"`") {
			t.Errorf("docs/data-sources.md does not name data `%s` (%s)", d.Name, d.Kind)
		}
	}
}
