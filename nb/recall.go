package nb

// What notebook 05 (long-range tasks) reads from `retrieval` and how it shows it: recall accuracies by model, distance
// and seed, each model's computed reach beside them, and π's skip mass and ecpi's own choices of π on recall. The
// notebook's cells keep its design: the recipes, distances, models, sweeps and claims.

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/results"
)

// ReachModel is a model of a recall table with its computed reach back from the last position (from its pattern and
// depth), shown beside its accuracy.
type ReachModel struct {
	Variant
	Reach string
}

// recallRun is one `retrieval` result: the test accuracy at one distance, and the run's checkpoint.
type recallRun struct {
	Distance   int     `json:"distance"`
	Acc        float64 `json:"acc"`
	Checkpoint string  `json:"checkpoint"`
}

// retrieval runs `retrieval` of one model under recipe at distances with one seed; verbose shows each run's line.
func retrieval(options, recipe string, distances []int, seed int, verbose bool) []recallRun {
	do := Query
	if verbose {
		do = Do
	}
	var out []recallRun
	for _, result := range do(fmt.Sprintf("retrieval %s %s distances=%s seed=%d", options, recipe, Ints(distances), seed)) {
		var r recallRun
		Must(0, result.Decode(&r))
		out = append(out, r)
	}
	return out
}

// Recall is the test accuracy (%) of every model trained on recipe with seeds 1..seeds, at every distance: by model,
// distance, then seed. Verbose shows each run's lines under its model and seed.
func Recall(models []ReachModel, recipe string, distances []int, seeds int, verbose bool) map[string]map[int][]float64 {
	out := map[string]map[int][]float64{}
	for _, m := range models {
		out[m.Label] = map[int][]float64{}
		for seed := 1; seed <= seeds; seed++ {
			if verbose { // the run's own line names its family, not the model
				fmt.Printf("%s, seed %d: ", m.Label, seed)
			}
			for _, r := range retrieval(m.Options, recipe, distances, seed, verbose) {
				out[m.Label][r.Distance] = append(out[m.Label][r.Distance], 100*r.Acc)
			}
		}
	}
	return out
}

// RecallAt is Recall at one distance: the accuracies (%) by model, then seed.
func RecallAt(models []ReachModel, recipe string, distance, seeds int, verbose bool) map[string][]float64 {
	out := map[string][]float64{}
	for label, byDistance := range Recall(models, recipe, []int{distance}, seeds, verbose) {
		out[label] = byDistance[distance]
	}
	return out
}

// RecallSkipMass is the attention mass on skip keys, per layer, of a π recall model's seed 1 at distance (its run read
// back from the run cache).
func RecallSkipMass(options, recipe string, distance int) []float64 {
	runs := retrieval(options, recipe, []int{distance}, 1, false)
	return SkipMass(runs[len(runs)-1].Checkpoint)
}

// RecallChoices is a tuned π recall model (values: its accuracies by seed at distance under recipe) beside the same
// model under each of PiChoices, at its learning rate with as many seeds: every setting's accuracies and skip mass, the
// default first.
func RecallChoices(pi Variant, values []float64, recipe string, distance int) []PiSetting {
	out := []PiSetting{{Label: "M skips (default)", Values: values, SkipMass: RecallSkipMass(pi.Options, recipe, distance)}}
	for _, choice := range PiChoices {
		options := pi.Options + " " + choice.Options
		acc := RecallAt([]ReachModel{{Variant: Variant{choice.Label, options}}}, recipe, distance, len(values), false)
		out = append(out, PiSetting{Label: choice.Label, Values: acc[choice.Label], SkipMass: RecallSkipMass(options, recipe, distance)})
	}
	return out
}

// TuneRecall is Tune for recall models at one distance under recipe: every model at each rate of grid (with `train`,
// whose validation accuracy is the share of answers right, as `retrieval` measures it on the test split), keeping the
// rate with the highest accuracy. The models keep their computed reach.
func (e *Experiment) TuneRecall(models []ReachModel, recipe string, distance int, grid []float64) []ReachModel {
	variants := make([]Variant, len(models))
	for i, m := range models {
		variants[i] = m.Variant
	}
	out := make([]ReachModel, len(models))
	for i, v := range e.Tune(fmt.Sprintf("%s distance=%d", recipe, distance), variants, grid, ErrorRate) {
		out[i] = ReachModel{v, models[i].Reach}
	}
	return out
}

// ReachTable is the accuracy (%) of each model (acc: by seed), mean ± s.e. over seeds, beside its computed reach.
func ReachTable(caption string, models []ReachModel, acc map[string][]float64) figure.Table {
	t := figure.Table{Caption: caption, Header: []string{"model", "computed reach", "accuracy"}}
	for _, m := range models {
		mean, se := results.MeanSE(acc[m.Label])
		t.AddRow(m.Label, m.Reach, results.FormatSE(mean, se, ""))
	}
	return t
}
