package nb

import (
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/results"
)

// PiChoices are the settings of π-Attention that are ecpi's choice rather
// than the paper's (docs/attention-variants.md), one at a time against the
// default (every earlier position congruent to i mod π, up to k of them;
// no head phase): one skip, i − π, as our summary of the paper reads it,
// and head-level phase offsets. Appended to a tuned π variant's options,
// they run at that variant's learning rate.
var PiChoices = []Variant{
	{"one skip", "skips=1"},
	{"head phase", "head_phase=true"},
}

// PiSetting is one π setting's result: its per-seed values and the skip
// mass per layer of its seed-1 model.
type PiSetting struct {
	Label    string
	Values   []float64
	SkipMass []float64
}

// Sensitivity is the table that says whether a π result depends on ecpi's
// choices: a row per setting with its mean ± s.e., its difference from the
// baseline (Welch's 95 % interval and p) and its skip mass per layer. It is
// no verdict: the choices run at the default's learning rate, not swept.
func Sensitivity(caption, unit, baseline string, baselineValues []float64, settings []PiSetting) figure.Table {
	t := figure.Table{Caption: caption, Header: []string{"π setting", "mean ± s.e.", "difference from " + baseline + " (95 % CI)", "p", "skip mass by layer"}}
	for _, s := range settings {
		mean, se := results.MeanSE(s.Values)
		w := results.WelchTest(s.Values, baselineValues)
		mass := make([]string, len(s.SkipMass))
		for i, m := range s.SkipMass {
			mass[i] = fmt.Sprintf("%.3f", m)
		}
		t.AddRow(s.Label, results.FormatSE(mean, se, unit),
			fmt.Sprintf("%+.3g%s [%+.3g, %+.3g]", w.Diff, unit, w.CI95[0], w.CI95[1]), fmt.Sprintf("%.2g", w.P), strings.Join(mass, " / "))
	}
	return t
}

// PiChoiceRuns is a tuned π variant (runs: its seeds on shared) beside the
// same model under each of PiChoices, trained with as many seeds on shared:
// every setting's values and skip mass, the default first.
func PiChoiceRuns(shared string, pi Variant, runs []Trained, value func(Trained) float64) []PiSetting {
	out := []PiSetting{{Label: "M skips (default)", Values: Values(runs, value), SkipMass: SkipMass(runs[0].Checkpoint)}}
	for _, choice := range PiChoices {
		variant := Variant{Label: choice.Label, Options: pi.Options + " " + choice.Options}
		trained := ReadSeeds(shared, []Variant{variant}, len(runs))[choice.Label]
		out = append(out, PiSetting{Label: choice.Label, Values: Values(trained, value), SkipMass: SkipMass(trained[0].Checkpoint)})
	}
	return out
}
