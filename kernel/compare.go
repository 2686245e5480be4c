package kernel

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/ecpi-dev/ecpi/train"
)

// Compare trains one run per variant — shared words plus the variant's own,
// e.g. Compare(ctx, "data=wiki n=256 steps=300", "model=full", "model=ecp segment=64")
// — with a live plot each, as `ecpi compare` does, and returns the results in order.
// A failing variant stops the comparison with an error naming it.
func Compare(ctx context.Context, shared string, variants ...string) ([]*train.Result, error) {
	var results []*train.Result
	for _, v := range variants {
		r, err := Train(ctx, shared, v)
		if err != nil {
			return results, fmt.Errorf("variant %q: %w", v, err)
		}
		fmt.Printf("%s: %s\n", v, r.Text())
		results = append(results, r)
	}
	return results, nil
}

// LossPlot draws the training loss of every run against the step.
func LossPlot(title string, labels []string, results []*train.Result) Plot {
	p := Plot{Title: title, XLabel: "step", YLabel: "train loss (nats)"}
	for i, r := range results {
		s := Series{Name: r.Model}
		if i < len(labels) {
			s.Name = labels[i]
		}
		for step, loss := range r.Losses {
			s.X, s.Y = append(s.X, float64(step+1)), append(s.Y, loss)
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// ResultsTable is one row per run: what was trained and what it reached, with
// the paper's figure for that model (paper[label], may be empty) beside it.
func ResultsTable(caption string, labels []string, results []*train.Result, paper map[string]string) Table {
	t := Table{Caption: caption, Header: []string{"model", "params", "steps", "train loss", "valid loss", "valid ppl", "valid bpc", "valid acc", "tokens/s", "paper"}}
	for i, r := range results {
		label := r.Model
		if i < len(labels) {
			label = labels[i]
		}
		acc := ""
		if r.ValidAcc != nil {
			acc = fmt.Sprintf("%.2f %%", 100**r.ValidAcc)
		}
		valid := ""
		if r.ValidStep > 0 {
			valid = fmt.Sprintf("%.4f", r.ValidLoss)
		}
		t.AddRow(label, r.Params, r.Steps, fmt.Sprintf("%.4f", r.TrainLoss), valid,
			optional(r.ValidPPL, "%.3f"), optional(r.ValidBPC, "%.4f"), acc, optional(r.TokensPerS, "%.0f"), paper[label])
	}
	if len(results) > 0 {
		data := results[0].Data
		if results[0].Tokenizer != "" {
			data += " (" + results[0].Tokenizer + " tokens)"
		}
		t.Notes = fmt.Sprintf("%s mode; data %s, backend %s, %d CPU cores; small-scale proxy: compare the ordering, not the absolute numbers.",
			Pick("quick (ECPI_QUICK=1: a smoke test, not a result)", "full"), data, results[0].Backend, runtime.NumCPU())
	}
	return t
}

func optional(v float64, format string) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(format, v)
}

// Ranking states the measured order of the runs by validation loss, best
// first; runs that were never evaluated are named after it.
func Ranking(labels []string, results []*train.Result) string {
	label := func(i int) string {
		if i < len(labels) {
			return labels[i]
		}
		return results[i].Model
	}
	var ranked []int
	var unevaluated []string
	for i, r := range results {
		if r.ValidStep > 0 {
			ranked = append(ranked, i)
		} else {
			unevaluated = append(unevaluated, label(i))
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return results[ranked[a]].ValidLoss < results[ranked[b]].ValidLoss })
	s := "measured order by validation loss (best first):"
	for k, i := range ranked {
		if k > 0 {
			s += " <"
		}
		s += fmt.Sprintf(" %s (%.4f)", label(i), results[i].ValidLoss)
	}
	if len(unevaluated) > 0 {
		s += "; not evaluated: " + strings.Join(unevaluated, ", ")
	}
	return s
}
