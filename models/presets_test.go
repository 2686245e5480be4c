package models

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestPresetSchedulesAreNotebooksRecipes: the schedule `bench train preset=`
// prices is the one paper mode trains, read from the notebooks' recipes.
func TestPresetSchedulesAreNotebooksRecipes(t *testing.T) {
	notebooks, err := filepath.Glob("../notebooks/0[1-4]-*.ipynb")
	if err != nil || len(notebooks) != 4 {
		t.Fatalf("notebooks 01-04: %v (%d found)", err, len(notebooks))
	}
	recipe := regexp.MustCompile(`Recipe: \\"[^\\]*\bbatch=(\d+) steps=(\d+)`)
	preset := regexp.MustCompile(`preset=([a-z0-9.-]+)`)
	checked := 0
	for _, path := range notebooks {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := recipe.FindSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no paper-mode recipe with batch= and steps=", path)
		}
		batch, _ := strconv.Atoi(string(m[1]))
		steps, _ := strconv.Atoi(string(m[2]))
		for _, name := range preset.FindAllSubmatch(text, -1) {
			p, err := PresetByName(string(name[1]))
			if err != nil {
				continue // preset= written out as an example
			}
			if p.Steps != steps || p.Batch != batch {
				t.Errorf("preset %s: %d steps of batch %d, %s trains it %d steps of batch %d", p.Name, p.Steps, p.Batch, filepath.Base(path), steps, batch)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("only %d preset mentions checked: the notebooks name ecp-wikitext103, perceiverar-wikitext103, ecp-pg19, ecp-scifar10 and pi-125m", checked)
	}
}
