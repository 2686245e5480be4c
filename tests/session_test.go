package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi"
	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/results"
)

// TestNotebookSessionKeepsStateAcrossCells drives the session server as
// notebook cells do, through package nb: the server starts on the first line,
// keeps the session's model between lines (cells), streams results and text,
// and reports a bad line as an error without dying.
func TestNotebookSessionKeepsStateAcrossCells(t *testing.T) {
	home := t.TempDir()
	socket := filepath.Join(t.TempDir(), "s.sock")
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_SESSION", socket)
	t.Setenv("ECPI_BIN", ecpiBin)
	t.Setenv("GOMLX_BACKEND", "go")
	defer func() {
		if _, err := nb.Run("quit"); err != nil {
			t.Errorf("quit: %v", err)
		}
		if _, err := os.Stat(socket); err == nil {
			time.Sleep(200 * time.Millisecond)
			if _, err := os.Stat(socket); err == nil {
				t.Error("the server still listens after quit")
			}
		}
	}()

	model, err := nb.Run("model ecp n=64 half_segment=16")
	if err != nil || len(model) != 1 || model[0].Command != "model" {
		t.Fatalf("model line: %v, %v", model, err)
	}
	var cost struct {
		Model string `json:"model"`
		N     int    `json:"n"`
		Ratio float64
	}
	results, err := nb.Run("cost") // no options: the model of the last cell
	if err != nil || len(results) != 1 {
		t.Fatalf("cost line: %v, %v", results, err)
	}
	if err := results[0].Decode(&cost); err != nil || cost.Model != "ecp" || cost.N != 64 {
		t.Fatalf("cost of the session's model: %+v (%v); want ecp at n=64", cost, err)
	}
	if _, err := nb.Run("model ecp half_segment=7"); err == nil || !strings.Contains(err.Error(), "half_segment=7 must divide") {
		t.Errorf("a bad line: error %v, want the rule", err)
	}
	if _, err := nb.Run("status"); err != nil {
		t.Errorf("the server should survive a bad line: %v", err)
	}
}

// TestNotebookExperimentHelpers runs a notebook's experiment the way notebooks
// 01–08 do, through the helpers of package nb: train variants over seeds, read
// them back from the run cache, summarise them over seeds, compute verdicts and
// save the results file that EXPERIMENTS.md is built from.
func TestNotebookExperimentHelpers(t *testing.T) {
	home := preparedHome(t)
	repo := t.TempDir()
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_SESSION", filepath.Join(t.TempDir(), "s.sock"))
	t.Setenv("ECPI_BIN", ecpiBin)
	t.Setenv("ECPI_REPO", repo)
	t.Setenv("GOMLX_BACKEND", "go")
	t.Setenv("ECPI_QUICK", "")
	defer nb.Run("quit")

	if nb.Quick() || nb.Pick(1, 2) != 2 {
		t.Fatal("ECPI_QUICK unset must be full mode")
	}
	nb.Gap(true, "nothing") // a filled gap lets the cell go on
	shared := "data=opticks n=32 dim=16 heads=2 layers=1 batch=2 steps=3 warmup=1 lr=1e-3 eval_every=0 eval_batches=2 reuse=true"
	variants := []nb.Variant{{Label: "dense", Options: "model=full"}, {Label: "ECP", Options: "model=ecp half_segment=8"}}
	trained := nb.TrainSeeds(shared, variants, 2)
	again := nb.ReadSeeds(shared, variants, 2)
	for _, v := range variants {
		runs := trained[v.Label]
		if len(runs) != 2 || len(again[v.Label]) != 2 {
			t.Fatalf("%s: %d runs trained, %d read back; want 2 seeds", v.Label, len(runs), len(again[v.Label]))
		}
		for i, r := range runs {
			if r.Steps != 3 || r.Params <= 0 || !(r.ValidBPC > 0) || !math.IsNaN(r.Acc()) {
				t.Errorf("%s seed %d: %+v", v.Label, i+1, r)
			}
			if back := again[v.Label][i]; back.TrainLoss != r.TrainLoss || back.Checkpoint != r.Checkpoint {
				t.Errorf("%s seed %d was trained again instead of read from the cache", v.Label, i+1)
			}
			// Every position of the window is scored, so the loss from position 0 is the valid loss
			// (up to the evaluation's own batches).
			if all, late := r.LossFrom(0), r.LossFrom(16); math.Abs(all/math.Ln2-r.ValidBPC) > 0.02*r.ValidBPC || math.IsNaN(late) || !math.IsNaN(r.LossFrom(32)) {
				t.Errorf("%s seed %d: loss from 0 %.4f (valid %.4f bpc), from 16 %.4f, from 32 %.4f", v.Label, i+1, all/math.Ln2, r.ValidBPC, late, r.LossFrom(32))
			}
		}
	}
	if runs := trained["dense"]; trained["dense"][0].TrainLoss == trained["dense"][1].TrainLoss {
		t.Errorf("seeds 1 and 2 trained the same run: %+v", runs)
	}
	if one := nb.Train(shared + " model=full seed=2"); one.TrainLoss != trained["dense"][1].TrainLoss {
		t.Error("Train of a finished run did not read it back from the cache")
	}
	if quiet := nb.Query("cost model=full n=64"); len(quiet) != 1 || quiet[0].Command != "cost" {
		t.Errorf("Query: %+v", quiet)
	}
	bpc := func(r nb.Trained) float64 { return r.ValidBPC }
	if got := nb.MeanSE(trained["dense"], bpc, "bits/byte"); !strings.Contains(got, "±") || !strings.HasSuffix(got, "bits/byte") {
		t.Errorf("MeanSE = %q", got)
	}
	if cost := nb.Last[struct{ Ratio float64 }]("cost model=ecp n=64 half_segment=8"); !(cost.Ratio > 0 && cost.Ratio < 1) {
		t.Errorf("cost of ECP as a fraction of dense: %v", cost.Ratio)
	}

	e := nb.NewExperiment("06-efficiency", "helpers")
	e.Record("lm", trained, "valid_bpc", bpc)
	grid := []float64{1e-3, 2e-3, 4e-3, 1e6} // the last rate diverges: one answer of the sweep
	tuned := e.Tune(shared, variants, grid, bpc)
	if len(e.Sweeps) != 2 || len(e.Sweeps[0].Valid) != 4 || !e.Sweeps[0].Diverged[3] || e.Sweeps[0].Chosen == 1e6 ||
		!slices.Contains(grid, e.Sweeps[0].Chosen) || !strings.HasSuffix(tuned[0].Options, fmt.Sprintf("lr=%g", e.Sweeps[0].Chosen)) {
		t.Errorf("sweeps %+v, tuned variants %+v", e.Sweeps, tuned)
	}
	faster, slower := []float64{2000, 2100, 1900}, []float64{1000, 1050, 950}
	// Claim 12's speed-up is for a ring of 8 GPUs: on one device the claim reads "decidable only at the paper's
	// scale" whatever the comparison, which keeps its own verdict beside it.
	if c := e.Compare(12, map[string][]float64{"π-Attention": faster, "local (RingAttention)": slower}); c.Verdict != results.PaperScaleOnly ||
		len(c.Comparisons) != 1 || c.Comparisons[0].Verdict != results.Reproduces {
		t.Errorf("twice the training speed: %+v", c)
	}
	if c := e.Count(5, 12.5, "counted"); c.Verdict != results.HoldsByConstruction {
		t.Errorf("a count: %+v", c)
	}
	e.Table(figure.Table{Caption: "t", Header: []string{"model"}, Rows: [][]string{{"dense"}}})
	// The results file's code version covers the notebook's code cells.
	notebooks := filepath.Join(repo, "notebooks")
	if err := os.MkdirAll(notebooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notebooks, "06-efficiency.ipynb"), []byte(`{"cells": [{"cell_type": "code", "source": ["nb.Train(\"...\")"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Save()
	files, err := results.Load(filepath.Join(notebooks, "results"))
	if err != nil || len(files) != 1 {
		t.Fatalf("saved results: %v, %v", files, err)
	}
	f := files[0]
	if f.Mode != "full" || len(f.Runs) != 4 || len(f.Claims) != 2 || len(f.Sweeps) != 2 || len(f.Tables) != 1 || f.Machine == "" {
		t.Errorf("saved results: %+v", f)
	}
	if why := results.Staleness(f, notebooks); why != "" {
		t.Errorf("results just saved are stale: %s", why)
	}
	if problems := results.Verify(files); len(problems) != 0 {
		t.Errorf("results just saved do not verify: %v", problems)
	}
}

// TestResultsCarryTheServersCodeVersion: a notebook's results carry the code
// version of the session server that trained them, beside its cells' hash.
func TestResultsCarryTheServersCodeVersion(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "s.sock")
	t.Setenv("ECPI_HOME", t.TempDir())
	t.Setenv("ECPI_SESSION", socket)
	t.Setenv("ECPI_BIN", ecpiBin)
	defer nb.Run("quit")
	notebooks := filepath.Join("..", "notebooks")
	cells, err := results.NotebookVersion(filepath.Join(notebooks, "00-tour.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := nb.TrainedVersion(notebooks, "00-tour"), ecpi.CodeVersion()+"."+cells; got != want {
		t.Errorf("version %q, want the server's code and the cells: %q", got, want)
	}
}
