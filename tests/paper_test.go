package tests

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/nb"
)

// TestPaperModeNamesWhatIsMissing: the notebooks' paper mode names what this
// machine lacks (the papers' data, and an accelerator where `doctor` finds
// none) without preparing or training anything; and its runs, trained
// through the session server, are saved beside the paper's numbers as
// perplexities of the run's tokens.
func TestPaperModeNamesWhatIsMissing(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_SESSION", filepath.Join(t.TempDir(), "s.sock"))
	t.Setenv("ECPI_BIN", ecpiBin)
	t.Setenv("GOMLX_BACKEND", "go")
	defer nb.Run("quit")

	missing := nb.PaperScale{Data: "wikitext103"}.Missing(false)
	if !slices.ContainsFunc(missing, func(m string) bool { return strings.Contains(m, "ecpi data prepare wikitext103") }) {
		t.Errorf("missing %q: want the data and how to prepare it", missing)
	}
	if _, err := os.Stat(filepath.Join(home, "data", "wikitext103")); err == nil {
		t.Error("checking what is missing prepared the data")
	}
	found := nb.Query("doctor")
	var doctor struct {
		Available []string `json:"available"`
	}
	if err := found[len(found)-1].Decode(&doctor); err != nil {
		t.Fatal(err)
	}
	accelerated := slices.ContainsFunc(doctor.Available, func(b string) bool { return strings.HasPrefix(b, "xla:") && b != "xla:cpu" })
	if named := slices.ContainsFunc(missing, func(m string) bool { return strings.HasPrefix(m, "an accelerator") }); named == accelerated {
		t.Errorf("backends %q, missing %q: want an accelerator named missing exactly when none is available", doctor.Available, missing)
	}

	scale := nb.PaperScale{Notebook: "00-tour", Data: "opticks", Metric: "perplexity",
		Recipe: "n=32 dim=16 heads=2 layers=1 batch=2 steps=3 warmup=1 eval_every=0 eval_batches=2",
		Runs:   []nb.PaperRun{{Label: "ECP", Options: "model=ecp half_segment=8", PaperSays: 17.82}}}
	if _, err := nb.Run("data prepare opticks"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	record := scale.Train(dir)
	var saved nb.PaperResults
	raw, err := os.ReadFile(filepath.Join(dir, "00-tour.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Runs) != 1 || saved.Seeds != 1 || saved.CodeVersion == "" || saved.CodeVersion != record.CodeVersion {
		t.Fatalf("saved %+v, want one run of one seed with the code version", saved)
	}
	run := saved.Runs[0]
	// Three steps of a byte model: the perplexity is near the 256 bytes' uniform guess, above 1, never NaN.
	if run.Steps != 3 || run.Params == 0 || !(run.Perplexity > 1 && run.Perplexity < 1000) || math.IsNaN(run.Perplexity) || run.PaperSays != 17.82 {
		t.Errorf("run %+v: want 3 steps, parameters, a perplexity in (1, 1000) and the paper's 17.82", run)
	}
	table := record.Table()
	if row := table.Rows[0]; row[0] != "ECP" || !strings.HasPrefix(row[3], "perplexity ") || row[4] != "17.82" {
		t.Errorf("row %q: want the label, ecpi's perplexity and the paper's", row)
	}
}
