package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/results"
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

// TestReadmeListsEachNotebooksClaims: the README's table of notebooks gives
// each notebook the claims that the registry (results.Claims) declares for
// it, in number order ("—" for none).
func TestReadmeListsEachNotebooksClaims(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]int{}
	for _, d := range results.Claims {
		declared[d.Notebook] = append(declared[d.Notebook], d.ID)
	}
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, " | ")
		notebook := strings.Trim(cells[0], "| `")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") || !fileExists(filepath.Join("..", "notebooks", notebook+".ipynb")) {
			continue // not a row of the notebooks' table
		}
		rows++
		var listed []int
		if cells[2] != "—" {
			for _, id := range strings.Split(cells[2], ", ") {
				n, err := strconv.Atoi(id)
				if err != nil {
					t.Errorf("README row of %s: claim %q is not a number", notebook, id)
				}
				listed = append(listed, n)
			}
		}
		if want := slices.Sorted(slices.Values(declared[notebook])); !slices.Equal(listed, want) {
			t.Errorf("README row of %s lists claims %v; the registry declares %v", notebook, listed, want)
		}
	}
	if rows == 0 {
		t.Fatal("the README has no table of notebooks")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
