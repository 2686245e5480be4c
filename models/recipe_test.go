package models

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recipeDoc is the workshop guide whose "Adding a family" recipe
// TestWorkshopRecipe follows.
const recipeDoc = "../docs/workshop.md"

// recipeTests are the tests that check every registered family. The ones with
// a subtest per familyCases row run only the recipe family's rows; the others
// are cheap and run whole.
var recipeTests = struct{ perRow, whole []string }{
	perRow: []string{"TestModelsAreCausal", "TestBlockFormsMatchDenseReference", "TestNoFutureLeaks", "TestDecodingMatchesRecomputation"},
	whole:  []string{"TestEveryFamilyHasARow", "TestAllowedPairsCountsK", "TestCountsAtTheLargestN"},
}

// recipeBlock is a Go block of the recipe: fenced "```go recipe FILE" it is a
// new file of this package; fenced "```go recipe FILE TABLE" its lines are
// rows added to the table TABLE declared in FILE.
type recipeBlock struct {
	file, table, text string
}

// recipeBlocks reads the recipe blocks of a Markdown text.
func recipeBlocks(doc string) ([]recipeBlock, error) {
	var blocks []recipeBlock
	var current *recipeBlock
	for n, line := range strings.Split(doc, "\n") {
		switch {
		case current != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *current)
			current = nil
		case current != nil:
			current.text += line + "\n"
		case strings.HasPrefix(line, "```go recipe"):
			fields := strings.Fields(strings.TrimPrefix(line, "```"))
			if len(fields) < 3 || len(fields) > 4 {
				return nil, fmt.Errorf("line %d: %q: want ```go recipe FILE [TABLE]", n+1, line)
			}
			current = &recipeBlock{file: fields[2]}
			if len(fields) == 4 {
				current.table = fields[3]
			}
		}
	}
	if current != nil {
		return nil, fmt.Errorf("the recipe block of %s is not closed", current.file)
	}
	return blocks, nil
}

// withRows is a Go source with rows inserted at the top of the composite
// literal that declares table ("var table = ...{").
func withRows(source, table, rows string) (string, error) {
	decl := regexp.MustCompile(`(?m)^var ` + regexp.QuoteMeta(table) + ` = .*\{\n`)
	at := decl.FindStringIndex(source)
	if at == nil {
		return "", fmt.Errorf("no line `var %s = ...{`", table)
	}
	return source[:at[1]] + rows + source[at[1]:], nil
}

// TestWorkshopRecipe follows docs/workshop.md's "Adding a family": it adds the
// recipe's file and table rows to a build of this package through the go
// command's -overlay (the repository is not written to), then runs the tests
// that check every registered family on the recipe's family. It fails when the
// recipe does not compile, when its file name is taken, or when its family
// fails those tests, so the recipe cannot drift from the code.
func TestWorkshopRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds this package again with the recipe's family (about 10 s)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the recipe with: %v", err) // a carried test binary (scripts/gpu-check.sh)
	}
	doc, err := os.ReadFile(recipeDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := recipeBlocks(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", recipeDoc, err)
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	overlay := map[string]string{}
	family := ""
	for i, b := range blocks {
		if filepath.Dir(b.file) != "models" {
			t.Fatalf("%s: recipe block %d writes %s: the recipe adds to models/ only", recipeDoc, i+1, b.file)
		}
		target := filepath.Join(here, filepath.Base(b.file))
		text := b.text
		if b.table == "" {
			if _, err := os.Stat(target); err == nil {
				t.Fatalf("%s: the recipe's new file %s already exists", recipeDoc, b.file)
			}
		} else {
			source, err := os.ReadFile(target)
			if err != nil {
				t.Fatalf("%s: recipe block %d: %v", recipeDoc, i+1, err)
			}
			if text, err = withRows(string(source), b.table, b.text); err != nil {
				t.Fatalf("%s: recipe block %d: %s: %v", recipeDoc, i+1, b.file, err)
			}
			if m := regexp.MustCompile(`"model":\s*"([^"]+)"`).FindStringSubmatch(b.text); m != nil {
				family = m[1]
			}
		}
		if _, dup := overlay[target]; dup {
			t.Fatalf("%s: two recipe blocks write %s", recipeDoc, b.file)
		}
		written := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(b.file)))
		if err := os.WriteFile(written, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[target] = written
	}
	if len(overlay) < 2 || family == "" {
		t.Fatalf("%s: want a recipe block with the new family's file and one with its familyCases rows; found %d blocks", recipeDoc, len(blocks))
	}
	if _, taken := FamilyByName(family); taken {
		t.Fatalf("%s: the recipe's family %q is registered already", recipeDoc, family)
	}
	overlayJSON, _ := json.Marshal(map[string]any{"Replace": overlay})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlayJSON, 0o644); err != nil {
		t.Fatal(err)
	}

	run := fmt.Sprintf("^(%s)$|^(%s)$/^%s(_|$)", strings.Join(recipeTests.whole, "|"),
		strings.Join(recipeTests.perRow, "|"), regexp.QuoteMeta(family))
	cmd := exec.Command(goCmd, "test", "-count=1", "-overlay", overlayFile, "-run", run, "-v", ".")
	cmd.Dir = here
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the recipe's family %q fails (go test -run %q):\n%s", family, run, failures(string(out), 60))
	}
	// A subtest pattern that matches nothing passes silently: make sure the
	// family's rows ran.
	for _, test := range []string{"TestModelsAreCausal", "TestBlockFormsMatchDenseReference"} {
		if !strings.Contains(string(out), "--- PASS: "+test+"/"+family) {
			t.Errorf("%s ran no row of the recipe's family %q:\n%s", test, family, failures(string(out), 40))
		}
	}
}

// failures is go test's output without the lines of tests that ran or
// passed, cut to its first n lines: a build error or a panic comes first, and
// a panic's goroutine dump after it.
func failures(out string, n int) string {
	var kept []string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "=== RUN") && !strings.HasPrefix(trimmed, "--- PASS") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept[:min(n, len(kept))], "\n")
}
