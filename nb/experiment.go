package nb

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/results"
)

// Variant is one model of a comparison: how the notebook names it and the
// options that make it.
type Variant struct {
	Label   string
	Options string
}

// Trained is what `train --json` reports of one run, as the notebooks read it.
type Trained struct {
	Model      string            `json:"model"`
	Config     map[string]string `json:"config"`
	Params     int64             `json:"params"`
	Steps      int               `json:"steps"`
	TrainLoss  float64           `json:"train_loss"`
	ValidLoss  float64           `json:"valid_loss"`
	ValidBPC   float64           `json:"valid_bpc"`
	ValidAcc   *float64          `json:"valid_acc"`
	TokensPerS float64           `json:"tokens_per_s"`
	Seconds    float64           `json:"seconds"`
	Losses     []float64         `json:"losses"`
	Checkpoint string            `json:"checkpoint"`
	Backend    string            `json:"backend"`
	Eval       *struct {
		Loss          float64            `json:"loss"`
		Acc           float64            `json:"acc"`
		ByPosition    []float64          `json:"by_position"`
		FirstPosition int                `json:"first_position"`
		Recall        map[string]float64 `json:"recall"`
	} `json:"eval"`
}

// LossFrom is the mean validation loss of window positions from..n-1 (every
// model scored on the same positions: the latents of the PerceiverAR family).
func (r Trained) LossFrom(from int) float64 {
	if r.Eval == nil || from < r.Eval.FirstPosition || from-r.Eval.FirstPosition >= len(r.Eval.ByPosition) {
		return math.NaN()
	}
	var sum float64
	positions := r.Eval.ByPosition[from-r.Eval.FirstPosition:]
	for _, v := range positions {
		sum += v
	}
	return sum / float64(len(positions))
}

// Acc is the validation accuracy (NaN when the run has none).
func (r Trained) Acc() float64 {
	if r.ValidAcc == nil {
		return math.NaN()
	}
	return *r.ValidAcc
}

// Train runs `train OPTIONS` in the session, prints the run on one line and
// returns it. With reuse=true (the notebooks' default) a run already in the run
// cache is read, not trained again.
func Train(options string) Trained {
	r := trainQuietly(options)
	fmt.Println(r.summary())
	return r
}

// trainQuietly is Train without the summary line (progress and the live plot
// still show while a run trains).
func trainQuietly(options string) Trained {
	results := Must(run("train "+options, true))
	if len(results) == 0 {
		Must(0, fmt.Errorf("train %s gave no result", options))
	}
	var r Trained
	Must(0, results[len(results)-1].Decode(&r))
	return r
}

// TrainSeeds trains each variant with seeds 1..seeds on shared options,
// prints each run on one line and returns the runs by label, each in seed
// order.
func TrainSeeds(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, seeds, true)
}

// Runs is TrainSeeds without the lines: for the cells after the one that
// trained, which read the same runs back from the run cache.
func Runs(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, seeds, false)
}

func trainSeeds(shared string, variants []Variant, seeds int, verbose bool) map[string][]Trained {
	out := map[string][]Trained{}
	for _, v := range variants {
		for seed := 1; seed <= seeds; seed++ {
			r := trainQuietly(fmt.Sprintf("%s %s seed=%d", shared, v.Options, seed))
			if verbose {
				fmt.Printf("%-22s seed %d: %s\n", v.Label, seed, r.summary())
			}
			out[v.Label] = append(out[v.Label], r)
		}
	}
	return out
}

// summary is a run on one line: what it reached, in how long.
func (r Trained) summary() string {
	s := fmt.Sprintf("%s, %d steps, train loss %.4f", r.Model, r.Steps, r.TrainLoss)
	switch {
	case r.ValidBPC > 0:
		s += fmt.Sprintf(", valid %.4f bits/byte", r.ValidBPC)
	case r.Eval != nil && r.Eval.Recall != nil:
		s += fmt.Sprintf(", valid recall@1 %.1f%% / %.1f%%", 100*r.Eval.Recall["image_to_text@1"], 100*r.Eval.Recall["text_to_image@1"])
	case r.ValidAcc != nil:
		s += fmt.Sprintf(", valid accuracy %.1f%%", 100**r.ValidAcc)
	}
	return s + fmt.Sprintf(" (%d parameters, %.0f s)", r.Params, r.Seconds)
}

// Values maps runs to one number each.
func Values(runs []Trained, metric func(Trained) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = metric(r)
	}
	return out
}

// MeanSE formats the mean of a metric over runs with its standard error.
func MeanSE(runs []Trained, metric func(Trained) float64, unit string) string {
	mean, se := results.MeanSE(Values(runs, metric))
	return results.FormatSE(mean, se, unit)
}

// Experiment records a notebook's runs, tables and claims, and in full mode
// writes them to notebooks/results/<notebook>.json (ecpi experiments turns
// those files into EXPERIMENTS.md).
type Experiment struct {
	results.File
}

// NewExperiment starts the record of a notebook.
func NewExperiment(notebook, title string) *Experiment {
	host, _ := os.Hostname()
	mode := "full"
	if Quick() {
		mode = "quick"
	}
	return &Experiment{results.File{Notebook: notebook, Title: title, Date: time.Now().Format("2006-01-02"), Mode: mode,
		Machine:   fmt.Sprintf("%s, %d cores, %s", host, runtime.NumCPU(), cpuModel()),
		Backend:   os.Getenv("GOMLX_BACKEND"),
		Baselines: map[string]float64{}}}
}

// cpuModel is the machine's CPU as /proc/cpuinfo names it.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

// Record adds every run of runs (by label, seed order) under an experiment
// name, with one metric.
func (e *Experiment) Record(experiment string, runs map[string][]Trained, metric string, value func(Trained) float64) {
	for label, list := range runs {
		for i, r := range list {
			e.Runs = append(e.Runs, results.Run{Experiment: experiment, Model: label, Seed: int64(i + 1), Metric: metric,
				Value: value(r), Steps: r.Steps, Params: r.Params})
		}
	}
}

// Claim computes and shows the verdict on a paper's claim that a beats b
// (lowerIsBetter for losses), and records it.
func (e *Experiment) Claim(id int, paper, claim, paperSays string, a, b []float64, lowerIsBetter bool, unit string) results.Claim {
	diff, se, verdict := results.Difference(a, b, lowerIsBetter)
	c := results.Claim{ID: id, Paper: paper, Claim: claim, PaperSay: paperSays, Ours: "difference " + results.FormatSE(diff, se, unit), Verdict: verdict}
	e.Claims = append(e.Claims, c)
	figure.ShowMarkdown(fmt.Sprintf("**Claim %d** (%s): %s. Paper: %s. Ours: %s → **%s**.", id, short(paper), claim, paperSays, c.Ours, verdict))
	return c
}

// ClaimEach is Claim against several groups at once ("better than A, B and
// C"): it reproduces when every comparison does, is opposite when every one
// is, and is inconclusive otherwise. against is in the order to report.
func (e *Experiment) ClaimEach(id int, paper, claim, paperSays string, a []float64, labels []string, against [][]float64, lowerIsBetter bool, unit string) results.Claim {
	var parts []string
	tally := map[string]int{}
	for i, b := range against {
		diff, se, verdict := results.Difference(a, b, lowerIsBetter)
		parts = append(parts, fmt.Sprintf("vs %s %s (%s)", labels[i], results.FormatSE(diff, se, unit), verdict))
		tally[verdict]++
	}
	verdict := results.Inconclusive
	switch len(against) {
	case tally[results.Reproduces]:
		verdict = results.Reproduces
	case tally[results.Opposite]:
		verdict = results.Opposite
	}
	c := results.Claim{ID: id, Paper: paper, Claim: claim, PaperSay: paperSays, Ours: "differences " + strings.Join(parts, "; "), Verdict: verdict}
	e.Note(c)
	return c
}

// Note records a claim whose verdict is stated rather than computed from
// two groups of runs (a count, a ratio measured once, untestable here).
func (e *Experiment) Note(c results.Claim) {
	e.Claims = append(e.Claims, c)
	figure.ShowMarkdown(fmt.Sprintf("**Claim %d** (%s): %s. Paper: %s. Ours: %s → **%s**.", c.ID, short(c.Paper), c.Claim, c.PaperSay, c.Ours, c.Verdict))
}

func short(paper string) string {
	name, _, _ := strings.Cut(paper, " (")
	return name
}

// Table shows a table and records it for EXPERIMENTS.md.
func (e *Experiment) Table(t figure.Table) {
	t.Show()
	e.Tables = append(e.Tables, results.Table{Caption: t.Caption, Header: t.Header, Rows: t.Rows, Notes: t.Notes})
}

// Save writes the record in full mode (quick mode is a smoke test, not a
// result) to notebooks/results of the repository the kernel uses.
func (e *Experiment) Save() {
	if Quick() {
		fmt.Println("quick mode: results not saved (run the notebook in full mode to record them)")
		return
	}
	dir := filepath.Join(repo(), "notebooks", "results")
	Must(0, e.Write(dir))
	fmt.Printf("results saved to %s/%s.json\n", dir, e.Notebook)
}

// repo is ecpi's repository (the kernel sets ECPI_REPO), else the working directory's.
func repo() string {
	if dir := os.Getenv("ECPI_REPO"); dir != "" {
		return dir
	}
	dir, _ := os.Getwd()
	return filepath.Dir(dir)
}
