package train

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
)

// datasetRecipeDoc is the workshop guide whose "Adding a dataset" recipe
// TestDatasetRecipe follows.
const datasetRecipeDoc = "../docs/workshop.md"

// recipeDatasetVariable names the dataset TestRecipeDatasetTrains trains, in
// the build of TestDatasetRecipe that holds the recipe's file.
const recipeDatasetVariable = "ECPI_RECIPE_DATASET"

// TestDatasetRecipe follows docs/workshop.md's "Adding a dataset": it adds the
// recipe's new file of package data to a build of this package through the go
// command's -overlay (the repository is not written to) and runs
// TestRecipeDatasetTrains on the recipe's set. It fails when the recipe does
// not compile, when its file name or dataset name is taken, or when the set
// does not list and train as its record says.
func TestDatasetRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds this package again with the recipe's dataset (about 10 s)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the recipe with: %v", err) // a carried test binary (scripts/gpu-check.sh)
	}
	doc, err := os.ReadFile(datasetRecipeDoc)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```go data-recipe (data/[a-z0-9_]+\\.go)\n(.*?)\n```").FindStringSubmatch(string(doc))
	if block == nil {
		t.Fatalf("%s: no block fenced ```go data-recipe data/FILE.go", datasetRecipeDoc)
	}
	name := regexp.MustCompile(`Name:\s*"([^"]+)"`).FindStringSubmatch(block[2])
	if name == nil {
		t.Fatalf("%s: the recipe's record names no dataset (Name: \"...\")", datasetRecipeDoc)
	}
	if slices.Contains(data.DatasetNames(), name[1]) {
		t.Fatalf("%s: the recipe's dataset %q exists already", datasetRecipeDoc, name[1])
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(filepath.Dir(here), block[1])
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("%s: the recipe's new file %s already exists", datasetRecipeDoc, block[1])
	}
	dir := t.TempDir()
	written := filepath.Join(dir, filepath.Base(block[1]))
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{target: written}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if os.WriteFile(written, []byte(block[2]+"\n"), 0o644) != nil || os.WriteFile(overlayFile, overlay, 0o644) != nil {
		t.Fatal("cannot write the overlay")
	}
	cmd := exec.Command(goCmd, "test", "-count=1", "-overlay", overlayFile, "-run", "^TestRecipeDatasetTrains$", "-v", ".")
	cmd.Dir, cmd.Env = here, append(os.Environ(), recipeDatasetVariable+"="+name[1], "GOMLX_BACKEND=go")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRecipeDatasetTrains") {
		t.Fatalf("the recipe's dataset %q fails (%v):\n%s", name[1], err, out)
	}
}

// TestRecipeDatasetTrains lists and trains the dataset TestDatasetRecipe added
// (skipped in any other build): `data list` shows it with its class count, and
// a classifier trained on it has one output per class of its record.
func TestRecipeDatasetTrains(t *testing.T) {
	name := os.Getenv(recipeDatasetVariable)
	if name == "" {
		t.Skip("run by TestDatasetRecipe")
	}
	src, err := data.ImageSourceNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	listed := slices.IndexFunc(data.ImageSets(home(t)), func(c data.CorpusInfo) bool { return c.Name == name })
	if listed < 0 || data.ImageSets(home(t))[listed].Classes != len(src.Classes) || !slices.Contains(data.OfflineDatasetNames(), name) == src.Offline {
		t.Errorf("data list: %+v; want %s with %d classes", data.ImageSets(home(t)), name, len(src.Classes))
	}
	r, err := Run(context.Background(), tinyTask(t, map[string]string{"model": "full", "causal": "false", "data": name, "examples": "0"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := CountParams(r.Config, len(src.Classes))
	if err != nil {
		t.Fatal(err)
	}
	if r.Params != want || r.ValidAcc == nil {
		t.Errorf("%d parameters, valid acc %v; want a classifier of %d classes (%d parameters)", r.Params, r.ValidAcc, len(src.Classes), want)
	}
}
