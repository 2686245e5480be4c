package nb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/figure"
)

// Mode is how much a notebook runs: "quick" (ECPI_MODE=quick, or ECPI_QUICK=1:
// tiny sizes, a smoke test), "full" (the default: the protocol's runs on two
// cores) or "paper" (ECPI_MODE=paper: the papers' own configurations on the
// papers' data, for a machine with an accelerator; see PaperScale).
func Mode() string {
	if os.Getenv("ECPI_QUICK") == "1" {
		return "quick"
	}
	switch mode := os.Getenv("ECPI_MODE"); mode {
	case "", "full":
		return "full"
	case "quick", "paper":
		return mode
	default:
		Must(0, fmt.Errorf("ECPI_MODE=%s: the modes are quick, full and paper", mode))
		return ""
	}
}

// PaperScale is what a notebook trains in paper mode: the papers'
// configurations (`ecpi models`' presets, or the same shapes with a baseline's
// attention) on the papers' data, one seed each. One seed tests no claim: the
// runs say what ecpi reaches at the papers' size, beside the papers' numbers,
// and are saved apart from the verdicts (notebooks/results/paper).
type PaperScale struct {
	Notebook string
	Data     string // wikitext103, pg19 or cifar10: the papers' data, prepared by `ecpi data prepare`
	// Recipe is the training every run shares: the paper's optimiser where it
	// states one, ecpi's choice of steps and batch where it does not.
	Recipe string
	Metric string // what PaperRun.PaperSays measures: "perplexity" or "accuracy (%)"
	Runs   []PaperRun
}

// PaperRun is one configuration of a PaperScale.
type PaperRun struct {
	Label     string
	Options   string  // preset=NAME, or a baseline's options at a preset's shape
	PaperSays float64 // the paper's perplexity or accuracy (%) for it; 0: it reports none
}

// PaperResult is one run of paper mode, as notebooks/results/paper/NOTEBOOK.json keeps it.
type PaperResult struct {
	Label      string  `json:"label"`
	Options    string  `json:"options"`
	Params     int64   `json:"params"`
	Steps      int     `json:"steps"`
	Perplexity float64 `json:"perplexity,omitempty"` // per token of the run's tokenizer
	Accuracy   float64 `json:"accuracy,omitempty"`   // %, classifiers
	PaperSays  float64 `json:"paper_says,omitempty"`
	Seconds    float64 `json:"seconds"`
	Backend    string  `json:"backend"`
}

// PaperResults is a notebook's paper-mode record.
type PaperResults struct {
	Notebook    string        `json:"notebook"`
	Date        string        `json:"date"`
	CodeVersion string        `json:"code_version"`
	Data        string        `json:"data"`
	Recipe      string        `json:"recipe"`
	Seeds       int           `json:"seeds"`
	Runs        []PaperResult `json:"runs"`
}

// Show is the notebook's paper-mode cell. In every mode it lists the
// configurations with their parameter counts and what this machine lacks to
// train them; in paper mode it trains them when nothing is missing, and
// otherwise stops the cell naming what is.
func (s PaperScale) Show() {
	s.configurations().Show()
	missing := s.Missing(Mode() == "paper")
	if Mode() != "paper" {
		if len(missing) == 0 {
			fmt.Println("This machine has what paper mode needs: run the notebook with ECPI_MODE=paper to train these.")
		} else {
			fmt.Printf("Paper mode (ECPI_MODE=paper) trains these, one seed each. This machine lacks:\n  - %s\n", strings.Join(missing, "\n  - "))
		}
		return
	}
	if len(missing) > 0 {
		Must(0, fmt.Errorf("paper mode cannot run here; it needs:\n  - %s", strings.Join(missing, "\n  - ")))
	}
	s.Train(filepath.Join(repo(), "notebooks", "results", "paper")).Table().Show()
}

// configurations is the table of what paper mode trains, with each preset's
// parameter count at the vocabulary ecpi trains it with (`models preset=`);
// a baseline at a preset's shape is counted when it trains.
func (s PaperScale) configurations() figure.Table {
	t := figure.Table{Caption: fmt.Sprintf("paper mode: the papers' configurations on %s, one seed each", s.Data),
		Header: []string{"model", "options", "parameters (vocabulary as trained)", "the paper's " + s.Metric}}
	for _, run := range s.Runs {
		params := "counted when trained"
		if preset, ok := presetOf(run.Options); ok {
			line := "models preset=" + preset
			count := lastOf[struct {
				Trained int64 `json:"trained_params"`
			}](line, Query(line))
			params = fmt.Sprintf("%.1fM", float64(count.Trained)/1e6)
		}
		t.AddRow(run.Label, run.Options, params, paperValue(run.PaperSays))
	}
	t.Notes = "shared recipe: data=" + s.Data + " " + s.Recipe
	return t
}

// presetOf finds preset=NAME among options.
func presetOf(options string) (string, bool) {
	for _, field := range strings.Fields(options) {
		if name, ok := strings.CutPrefix(field, "preset="); ok {
			return name, true
		}
	}
	return "", false
}

// Missing lists what this machine lacks for paper mode: an accelerator
// (`ecpi doctor` lists none) and the data. With prepare, on a machine with an
// accelerator, data not yet prepared is prepared first (WikiText-103 and
// CIFAR-10 download; PG-19 reads a copy), and only a failure counts as missing.
func (s PaperScale) Missing(prepare bool) []string {
	var missing []string
	doctor := lastOf[struct {
		Available []string `json:"available"`
	}]("doctor", Query("doctor"))
	if !slices.ContainsFunc(doctor.Available, isAccelerator) {
		missing = append(missing, fmt.Sprintf("an accelerator: the backends here are %s (on a GPU machine, `ecpi doctor install=cuda` installs XLA's CUDA plugin)", strings.Join(doctor.Available, ", ")))
	}
	if !s.prepared() {
		if !prepare || len(missing) > 0 { // no download for a machine that cannot train on it
			return append(missing, fmt.Sprintf("data %s: not prepared (`ecpi data prepare %s`)", s.Data, s.Data))
		}
		if _, err := Run("data prepare " + s.Data); err != nil {
			missing = append(missing, fmt.Sprintf("data %s: %v", s.Data, err))
		}
	}
	return missing
}

func isAccelerator(backend string) bool {
	platform, _ := strings.CutPrefix(backend, "xla:")
	return platform != backend && platform != "cpu"
}

// dataEntry is one line of `data list`.
type dataEntry struct {
	Name     string `json:"name"`
	Prepared bool   `json:"prepared"`
}

// prepared reports whether `data list` says the data is ready.
func (s PaperScale) prepared() bool {
	list := lastOf[struct {
		Datasets []dataEntry `json:"datasets"`
	}]("data list", Query("data list"))
	i := slices.IndexFunc(list.Datasets, func(d dataEntry) bool { return d.Name == s.Data })
	if i < 0 {
		Must(0, fmt.Errorf("paper mode: no data named %s (`ecpi data list`)", s.Data))
	}
	return list.Datasets[i].Prepared
}

// Train trains every run (seed 1; finished runs come back from the run cache)
// and writes the record to dir/NOTEBOOK.json.
func (s PaperScale) Train(dir string) PaperResults {
	record := PaperResults{Notebook: s.Notebook, Date: time.Now().UTC().Format("2006-01-02"), Data: s.Data, Recipe: s.Recipe, Seeds: 1}
	for _, run := range s.Runs {
		r := Train(fmt.Sprintf("data=%s %s %s seed=1", s.Data, s.Recipe, run.Options))
		result := PaperResult{Label: run.Label, Options: run.Options, Params: r.Params, Steps: r.Steps, PaperSays: run.PaperSays, Seconds: r.Seconds, Backend: r.Backend}
		if r.ValidAcc != nil {
			result.Accuracy = 100 * *r.ValidAcc
		} else {
			result.Perplexity = r.ValidPPL
		}
		record.Runs = append(record.Runs, result)
	}
	record.CodeVersion = TrainedVersion(filepath.Join(repo(), "notebooks"), s.Notebook)
	Must(0, os.MkdirAll(dir, 0o755))
	data := Must(json.MarshalIndent(record, "", "  "))
	path := filepath.Join(dir, s.Notebook+".json")
	Must(0, os.WriteFile(path, append(data, '\n'), 0o644))
	fmt.Printf("paper-mode results saved to %s\n", path)
	return record
}

// Table shows the runs beside the papers' numbers.
func (r PaperResults) Table() figure.Table {
	t := figure.Table{Caption: fmt.Sprintf("%s at the papers' configurations, seed 1", r.Data),
		Header: []string{"model", "parameters", "steps", "ecpi", "the paper", "backend", "time"}}
	for _, run := range r.Runs {
		ours := fmt.Sprintf("perplexity %.2f", run.Perplexity)
		if run.Perplexity == 0 {
			ours = fmt.Sprintf("accuracy %.2f %%", run.Accuracy)
		}
		t.AddRow(run.Label, fmt.Sprintf("%.1fM", float64(run.Params)/1e6), run.Steps, ours, paperValue(run.PaperSays),
			run.Backend, (time.Duration(run.Seconds) * time.Second).String())
	}
	t.Notes = "One seed: a measurement at the papers' size, not a test of a claim. Perplexity is per token of the run's tokenizer " +
		"(GPT-2 BPE), the ECP paper's per BERT-cased WordPiece token: comparable in size, not digit for digit. Recipe: " + r.Recipe
	return t
}

func paperValue(says float64) string {
	if says == 0 {
		return "—"
	}
	return fmt.Sprint(says)
}
