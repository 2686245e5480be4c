package kernel

import (
	"fmt"
	"slices"

	"github.com/ecpi-dev/ecpi/models"
)

// Summary describes a model config: its options, the attention of every
// layer with the query-key pairs it scores, and its cost against dense
// attention of the same size. The config is validated first.
func Summary(cfg models.Config) (Table, error) {
	if err := cfg.Validate(); err != nil {
		return Table{}, err
	}
	r := cfg.Resolved()
	family := r.Family()
	t := Table{
		Caption: fmt.Sprintf("%s — %s", r.Model, family.Summary),
		Header:  []string{"item", "value"},
	}
	opts := r.Options()
	names := make([]string, 0, len(opts))
	for name := range opts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.AddRow(name, opts[name])
	}
	for i, lp := range r.LayerPatterns() {
		t.AddRow(fmt.Sprintf("layer %d attention", i), fmt.Sprintf("%s over %d positions, %d pairs per head", lp.Pattern.Name(), lp.SeqLen, lp.Pattern.ScoredPairs(lp.SeqLen)))
	}
	c := models.CostOf(r)
	t.AddRow("pairs / dense pairs (layer 0)", fmt.Sprintf("%d / %d = %.1f %%", c.Pairs, c.DensePairs, 100*c.Ratio))
	t.AddRow("causal pairs / full causal (layer 0)", fmt.Sprintf("%d / %d = %.1f %%", c.CausalPairs, c.CausalDensePairs, 100*c.CausalRatio))
	t.AddRow("attention FLOPs, all layers", fmt.Sprintf("%.3g (dense: %.3g)", float64(c.ModelFLOPs), float64(c.DenseModelFLOPs)))
	t.Notes = "loss on " + lossPositions(r)
	return t, nil
}

func lossPositions(c models.Config) string {
	if start := c.LossStart(); start > 0 {
		return fmt.Sprintf("positions %d..%d (the latents)", start, c.SeqLen-1)
	}
	return "every position"
}
