// Package results is the machine-readable record of ecpi's experiments and
// the protocol that turns it into verdicts. Each claim of the two papers is
// declared once, before it runs (Claims: the metric, its direction, the
// models compared, the kind of test, the smallest effect that counts); each
// notebook's full mode writes one File (notebooks/results/NN-name.json) with
// every value it measured; Judge computes each verdict from those values
// (Welch's t-test and its 95 % interval, two one-sided tests for sameness,
// equal tuning and enough seeds or no verdict), Verify recomputes every
// stored verdict, and Report rebuilds EXPERIMENTS.md.
package results

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// File is one notebook's results.
type File struct {
	Notebook string `json:"notebook"` // e.g. "05-long-range-tasks"
	// CodeVersion is the code that computed the results: ecpi.CodeVersion,
	// a dot, and NotebookVersion of the notebook's code cells ("" for files
	// written before code versions were kept).
	CodeVersion string             `json:"code_version"`
	Title       string             `json:"title"`
	Date        string             `json:"date"`
	Machine     string             `json:"machine"`
	Backend     string             `json:"backend"`
	Mode        string             `json:"mode"` // full or quick
	Sweeps      []Sweep            `json:"sweeps,omitempty"`
	Runs        []Run              `json:"runs"`
	Claims      []Claim            `json:"claims"`
	Baselines   map[string]float64 `json:"baselines"`
	Tables      []Table            `json:"tables,omitempty"` // what the notebook shows, for EXPERIMENTS.md
	Notes       []string           `json:"notes,omitempty"`
	// Pilots are the pilots the notebook ran (Pilots): their values and
	// decisions, never a verdict's.
	Pilots []PilotRecord `json:"pilots,omitempty"`
	// Sittings is how many runs of the notebook on this code version and
	// machine the repeated measurements pool (Pool); 0 or 1: one.
	Sittings int `json:"sittings,omitempty"`
}

// Run is one measurement of one trained model.
type Run struct {
	Experiment string  `json:"experiment"`
	Model      string  `json:"model"`
	Seed       int64   `json:"seed"`
	Distance   int     `json:"distance,omitempty"`
	Metric     string  `json:"metric"`
	Value      float64 `json:"value"`
	Steps      int     `json:"steps,omitempty"`
	Params     int64   `json:"params,omitempty"`
}

// Claim is one declared claim and what ecpi measured of it. The values are
// the record; Kind, Paper, Claim and PaperSay repeat the declaration, and the
// verdict, why and each comparison's statistics are Judge's.
type Claim struct {
	ID          int          `json:"id"` // the claim's ID in Claims
	Kind        Kind         `json:"kind"`
	Paper       string       `json:"paper"`
	Claim       string       `json:"claim"`
	PaperSay    string       `json:"paper_says"` // the paper's number
	Ours        string       `json:"ours"`       // what was measured, in one line
	Verdict     string       `json:"verdict"`
	Why         string       `json:"why,omitempty"`
	Comparisons []Comparison `json:"comparisons,omitempty"` // KindComparison, KindEquivalence, KindCost
	Value       *float64     `json:"value,omitempty"`       // KindCount
	Measured    []float64    `json:"measured,omitempty"`    // KindBound: per layer, from L = 1; KindScaling: every run's cost
	Bound       []float64    `json:"bound,omitempty"`
	Lengths     []float64    `json:"lengths,omitempty"` // KindScaling: the sequence length of each Measured value
	// SkipMass is the trained π model's attention mass on its skip keys per
	// layer (mean over heads, `probe gate` on its first seed): claims
	// declared with Skips need it, and below MinSkipMass π computed local
	// attention.
	SkipMass []float64 `json:"skip_mass,omitempty"`
	// Control is the positive control Judge ran for a claim declared with
	// one (Declared.Control): dense attention against the local window.
	Control *Comparison `json:"control,omitempty"`
}

// Table is a small table a notebook shows (Markdown in EXPERIMENTS.md).
type Table struct {
	Caption string     `json:"caption"`
	Header  []string   `json:"header"`
	Rows    [][]string `json:"rows"`
	Notes   string     `json:"notes,omitempty"`
}

// MeanSE is the mean of values and its standard error (the sample standard
// deviation over √count; 0 for a single value).
func MeanSE(values []float64) (mean, se float64) {
	if len(values) == 0 {
		return math.NaN(), math.NaN()
	}
	mean, variance := meanVar(values)
	return mean, math.Sqrt(variance / float64(len(values)))
}

// Values picks the values of one experiment, model and metric (and distance,
// when not zero), in seed order.
func (f *File) Values(experiment, model, metric string, distance int) []float64 {
	var runs []Run
	for _, r := range f.Runs {
		if r.Experiment == experiment && r.Model == model && r.Metric == metric && r.Distance == distance {
			runs = append(runs, r)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Seed < runs[j].Seed })
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = r.Value
	}
	return out
}

// Pool adds the repeated measurements of prev, an earlier sitting of the same
// notebook, to next when both ran the same code version on the same machine
// in full mode: a claim measured by repetition (KindCost, KindScaling) keeps
// every repeat of that code, not only the last sitting's. It returns whether
// it pooled; the caller judges next again.
func Pool(prev File, next *File) bool {
	if prev.Notebook != next.Notebook || prev.CodeVersion == "" || prev.CodeVersion != next.CodeVersion ||
		prev.Machine != next.Machine || prev.Mode != "full" || next.Mode != "full" {
		return false
	}
	pooled := false
	for i := range next.Claims {
		c := &next.Claims[i]
		earlier, found := claimIn(prev, c.ID)
		if !found || (c.Kind != KindCost && c.Kind != KindScaling) {
			continue
		}
		c.Lengths, c.Measured = append(slices.Clone(earlier.Lengths), c.Lengths...), append(slices.Clone(earlier.Measured), c.Measured...)
		for j := range c.Comparisons {
			for _, old := range earlier.Comparisons {
				if old.A == c.Comparisons[j].A && old.B == c.Comparisons[j].B {
					c.Comparisons[j].AValues = append(slices.Clone(old.AValues), c.Comparisons[j].AValues...)
					c.Comparisons[j].BValues = append(slices.Clone(old.BValues), c.Comparisons[j].BValues...)
				}
			}
		}
		pooled = true
	}
	if pooled {
		next.Sittings = max(prev.Sittings, 1) + 1
	}
	return pooled
}

// claimIn is claim id of f.
func claimIn(f File, id int) (Claim, bool) {
	for _, c := range f.Claims {
		if c.ID == id {
			return c, true
		}
	}
	return Claim{}, false
}

// Write saves the file as indented JSON in dir/<notebook>.json.
func (f *File) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, f.Notebook+".json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads every results file of dir, in notebook order.
func Load(dir string) ([]File, error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("results folder %s: not a folder (the notebooks write theirs to notebooks/results)", dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var files []File
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var f File
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// FormatSE writes a mean and its standard error with a sensible precision.
func FormatSE(mean, se float64, unit string) string {
	digits := 3
	if se > 0 {
		digits = max(0, min(4, 1-int(math.Floor(math.Log10(se)))))
	}
	return fmt.Sprintf("%.*f ± %.*f%s", digits, mean, digits, se, unit)
}

// markdown renders a table.
func (t Table) markdown() string {
	var b strings.Builder
	if t.Caption != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Caption)
	}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
	for _, row := range t.Rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	if t.Notes != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Notes)
	}
	return b.String()
}
