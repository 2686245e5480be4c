package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi"
)

// Verify recomputes the verdict of every claim of files from its stored
// values and returns one line for each thing that does not agree: a claim
// that is not declared or not in its declared notebook, comparisons of other
// models or metrics than the declaration's, and any verdict, why, difference,
// p or interval that differs from the judgement (a hand-edited file fails
// here). No lines: every verdict stands.
func Verify(files []File) []string {
	var problems []string
	seen := map[int]string{}
	for _, f := range files {
		problems = append(problems, verifyPilots(f)...)
		for _, stored := range f.Claims {
			where := fmt.Sprintf("%s, claim %d", f.Notebook, stored.ID)
			d, err := ClaimByID(stored.ID)
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			if other, twice := seen[d.ID]; twice {
				problems = append(problems, fmt.Sprintf("%s: also in %s", where, other))
			}
			seen[d.ID] = f.Notebook
			if d.Notebook != f.Notebook {
				problems = append(problems, fmt.Sprintf("%s: declared for notebook %s", where, d.Notebook))
			}
			problems = append(problems, prefixed(where, declarationMismatches(d, stored))...)
			judged := Judge(d, cloneClaim(stored), &f, files)
			problems = append(problems, prefixed(where, verdictMismatches(stored, judged))...)
		}
	}
	return problems
}

func prefixed(where string, lines []string) []string {
	for i := range lines {
		lines[i] = where + ": " + lines[i]
	}
	return lines
}

// declarationMismatches compares what a stored claim says it tested with its
// declaration.
func declarationMismatches(d Declared, c Claim) []string {
	var out []string
	if c.Kind != d.Kind || c.Claim != d.Statement || c.Paper != d.Paper {
		out = append(out, fmt.Sprintf("stored as %s %q (%s), declared as %s %q (%s)", c.Kind, c.Claim, c.Paper, d.Kind, d.Statement, d.Paper))
	}
	return append(out, comparisonMismatches(d, c)...)
}

// comparisonMismatches names each stored comparison of other models, metric
// or direction than the declaration's.
func comparisonMismatches(d Declared, c Claim) []string {
	var out []string
	for _, cmp := range c.Comparisons {
		if cmp.A != d.A || !slices.Contains(d.B, cmp.B) || cmp.Metric != d.Metric || cmp.Better != d.Better {
			out = append(out, fmt.Sprintf("compares %s with %s on %s (%s better); declared: %s with %s on %s (%s better)",
				cmp.A, cmp.B, cmp.Metric, cmp.Better, d.A, strings.Join(d.B, ", "), d.Metric, d.Better))
		}
	}
	return out
}

// verdictMismatches compares a stored claim's verdicts and statistics with
// their recomputation.
func verdictMismatches(stored, judged Claim) []string {
	var out []string
	if stored.Verdict != judged.Verdict || stored.Why != judged.Why {
		out = append(out, fmt.Sprintf("verdict %q (%s), recomputed %q (%s)", stored.Verdict, stored.Why, judged.Verdict, judged.Why))
	}
	for i, s := range stored.Comparisons {
		j := judged.Comparisons[i]
		same := func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }
		if s.Verdict != j.Verdict || s.Why != j.Why || !same(s.Diff, j.Diff) || !same(s.P, j.P) || !same(s.CI95[0], j.CI95[0]) || !same(s.CI95[1], j.CI95[1]) ||
			!same(s.Detectable, j.Detectable) || !same(s.Target, j.Target) || s.SeedsNeeded != j.SeedsNeeded {
			out = append(out, fmt.Sprintf("vs %s: stored %s (diff %g, p %g, CI %v, detects %g of %g), recomputed %s (diff %g, p %g, CI %v, detects %g of %g)",
				s.B, s.Verdict, s.Diff, s.P, s.CI95, s.Detectable, s.Target, j.Verdict, j.Diff, j.P, j.CI95, j.Detectable, j.Target))
		}
	}
	if (stored.Control == nil) != (judged.Control == nil) || stored.Control != nil && (stored.Control.Verdict != judged.Control.Verdict || stored.Control.Diff != judged.Control.Diff) {
		out = append(out, fmt.Sprintf("positive control stored as %v, recomputed %v", stored.Control, judged.Control))
	}
	return out
}

// cloneClaim copies a claim deeply enough for Judge to rewrite its comparisons.
func cloneClaim(c Claim) Claim {
	c.Comparisons = slices.Clone(c.Comparisons)
	return c
}

// JudgeFile judges every claim of f in place, with files the other results a
// positive control may live in (a notebook saves what this gives, so that
// Verify finds nothing to recompute differently).
func JudgeFile(f *File, files []File) error {
	if err := retireRedeclared(f); err != nil {
		return err
	}
	for i, c := range f.Claims {
		d, err := ClaimByID(c.ID)
		if err != nil {
			return err
		}
		f.Claims[i] = Judge(d, c, f, files)
	}
	for i, r := range f.Pilots {
		p, err := PilotByID(r.ID)
		if err != nil {
			return err
		}
		if f.Pilots[i].Decision, err = p.Decide(r); err != nil {
			return err
		}
	}
	return nil
}

// retireRedeclared drops from f every claim whose stored comparisons answer
// an older declaration (other models or metric than the current one), with a
// note naming the dated change that retired it: the current declaration
// cannot judge values measured for another, and the claim reads "not run yet"
// until its notebook runs again. A mismatch that no change of the claim's
// History dated on or after the file's date explains is an error, and f is
// left as it was: a declaration is never changed after its results without a
// date.
func retireRedeclared(f *File) error {
	kept := make([]Claim, 0, len(f.Claims)) // not f.Claims[:0]: an error must leave f's claims whole
	var notes []string
	for _, c := range f.Claims {
		d, err := ClaimByID(c.ID)
		if err != nil {
			return err
		}
		mismatches := comparisonMismatches(d, c)
		if len(mismatches) == 0 {
			kept = append(kept, c)
			continue
		}
		change, dated := changeSince(d, f.Date)
		if !dated {
			return fmt.Errorf("%s, claim %d: the stored comparisons answer another declaration (%s), and no change in the claim's history is dated on or after the results' date %s",
				f.Notebook, c.ID, strings.Join(mismatches, "; "), f.Date)
		}
		notes = append(notes, fmt.Sprintf("Claim %d was retired from these results: it was declared anew on %s (its history says how), and these runs answered the declaration before.",
			c.ID, change.Date))
	}
	f.Claims, f.Notes = kept, append(f.Notes, notes...)
	return nil
}

// changeSince is the latest change of d's History dated on or after date
// (YYYY-MM-DD, which orders as text).
func changeSince(d Declared, date string) (Change, bool) {
	var latest Change
	for _, change := range d.History {
		if change.Date >= date && change.Date > latest.Date {
			latest = change
		}
	}
	return latest, latest.Date != ""
}

// NotebookVersion hashes the code cells of a notebook (their source, not
// their outputs): the cells that declare its runs and claims.
func NotebookVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var notebook struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &notebook); err != nil {
		return "", fmt.Errorf("notebook %s: %w", path, err)
	}
	h := sha256.New()
	for _, cell := range notebook.Cells {
		if cell.Type != "code" {
			continue
		}
		var lines []string // nbformat writes a source as a list of lines or one string
		if json.Unmarshal(cell.Source, &lines) != nil {
			var text string
			if err := json.Unmarshal(cell.Source, &text); err != nil {
				return "", fmt.Errorf("notebook %s: a cell's source: %w", path, err)
			}
			lines = []string{text}
		}
		h.Write([]byte(strings.Join(lines, "")))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// CurrentVersion is the code version a notebook's results would carry if it
// ran now: this binary's code and the notebook's cells in notebooksDir.
func CurrentVersion(notebooksDir, notebook string) (string, error) {
	cells, err := NotebookVersion(filepath.Join(notebooksDir, notebook+".ipynb"))
	if err != nil {
		return "", err
	}
	return ecpi.CodeVersion() + "." + cells, nil
}

// StaleSections says, for each file whose results are not those of the
// current code, why (Staleness).
func StaleSections(files []File, notebooksDir string) map[string]string {
	stale := map[string]string{}
	for _, f := range files {
		if why := Staleness(f, notebooksDir); why != "" {
			stale[f.Notebook] = why
		}
	}
	return stale
}

// Staleness says why f's results are not those of the current code, or ""
// when they are.
func Staleness(f File, notebooksDir string) string {
	current, err := CurrentVersion(notebooksDir, f.Notebook)
	if err != nil {
		return err.Error()
	}
	if f.CodeVersion == current {
		return unextendedEdge(f.Sweeps)
	}
	code, cells, _ := strings.Cut(f.CodeVersion, ".")
	nowCode, nowCells, _ := strings.Cut(current, ".")
	var changed []string
	switch {
	case f.CodeVersion == "":
		return "computed before results recorded their code version"
	case code != nowCode:
		changed = append(changed, "the models, training or data code")
	}
	if cells != nowCells {
		changed = append(changed, "the notebook's cells")
	}
	return fmt.Sprintf("computed by code %s; %s changed since (now %s)", f.CodeVersion, strings.Join(changed, " and "), current)
}

// unextendedEdge names a sweep that kept the edge of its grid without the
// rates past it that Experiment.Tune now tries (MaxExtension of them, on a grid
// of at least minGrid): the results were tuned under an older protocol, and the
// current code would tune that model further. The code version does not cover
// the protocol, so the sweeps themselves are read.
func unextendedEdge(sweeps []Sweep) string {
	for _, s := range sweeps {
		if s.edge() != 0 && len(s.LR) < minGrid+MaxExtension {
			return fmt.Sprintf("tuned before the sweep-extension rule: the learning-rate sweep of %s (%d steps) kept an edge of its %d rates, where the protocol now tries up to %d more past it",
				s.Model, s.Steps, len(s.LR), MaxExtension)
		}
	}
	return ""
}
