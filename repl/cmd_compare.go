package repl

import (
	"fmt"
	"strconv"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
)

// compare: several families trained on one budget, side by side. Its compareValues, one family's options, are
// also what train and retrieval run with (runValues).

func init() {
	Register(&Command{
		Name:    "compare",
		Summary: "train several models on the same budget and print them side by side",
		Details: "Each family in models= trains with the same data, steps and training options, and with the\n" +
			"model options (typed or from the session) that apply to it: window=32 reaches local and pi\n" +
			"but not ecp. pairs scored is the query-key scores per head and sequence over all layers.\n" +
			"executor=\"slurm partition=gpu ...\" (or $ECPI_EXECUTOR) trains the models as one Slurm job array\n" +
			"through the shared run cache, then reads them from it (docs/cluster.md).",
		Options: compareOptions(),
		Run:     runCompare,
	})
}

// compareFamilies is compare's own option; the rest are train's, forwarded by name.
var compareFamilies = Options[compareArgs]{
	Table: option.Table[compareArgs]{option.List("models", "comma-separated model families to train", models.FamilyNames(),
		func(a *compareArgs) *[]string { return &a.Models }),
		option.Text("executor", "where the models train: local (in the session) or slurm with its knobs (default: $ECPI_EXECUTOR, else local)",
			func(a *compareArgs) *string { return &a.Executor })},
	Defaults: compareArgs{Models: models.HeadlineFamilies()},
}

type compareArgs struct {
	Models   []string
	Executor string
}

// compareOptions: the families, every training option but the run folder
// (each model gets its own), and the model options that set the budget.
func compareOptions() []Option {
	opts := compareFamilies.Declare()
	for _, opt := range trainOptions() {
		switch opt.Name {
		case "run", "model", "vocab":
		default:
			opts = append(opts, opt)
		}
	}
	return opts
}

// Comparison is what `compare` prints: one row per model, in the order given.
type Comparison struct {
	Rows []ComparisonRow `json:"rows"`
}

// ComparisonRow is one model's run.
type ComparisonRow struct {
	*train.Result
	PairsScored int64 `json:"pairs_scored"`
}

func (cmp Comparison) Text() string {
	header := []string{"model", "steps", "train loss", "valid loss", "valid ppl", "tokens/s", "pairs scored", "seconds", "loss"}
	var rows [][]string
	for _, r := range cmp.Rows {
		steps := strconv.Itoa(r.Steps)
		if r.Interrupted {
			steps += "!"
		}
		valid, ppl, speed := "-", "-", "-"
		if r.ValidStep > 0 {
			valid = fmt.Sprintf("%.4f", r.ValidLoss)
		}
		if r.ValidPPL > 0 {
			ppl = fmt.Sprintf("%.3f", r.ValidPPL)
		}
		if r.MsPerStep > 0 {
			speed = fmt.Sprintf("%.0f", r.TokensPerS)
		}
		rows = append(rows, []string{r.Model, steps, fmt.Sprintf("%.4f", r.TrainLoss), valid,
			ppl, speed, strconv.FormatInt(r.PairsScored, 10), fmt.Sprintf("%.1f", r.Seconds),
			train.Sparkline(r.Losses, 24)})
	}
	text := Table(header, rows)
	for _, r := range cmp.Rows {
		if r.Interrupted {
			text += "! interrupted before the last step\n"
			break
		}
	}
	return text
}

func runCompare(c *Call) error {
	chosen, err := compareFamilies.Read(c)
	if err != nil {
		return err
	}
	families := chosen.Models
	runs := make([]train.Options, len(families))
	lines := make([]string, len(families))
	for i, family := range families {
		values := compareValues(c, family)
		o, err := train.ParseOptions(values)
		if err == nil {
			// Check every model before training the first, not when its turn comes.
			err = o.Model.Validate()
		}
		if err != nil {
			return Usagef("%s: %v", family, err)
		}
		runs[i], lines[i] = o, optionsLine(values)
	}
	if err := executeElsewhere(c, chosen.Executor, runs, lines, families); err != nil {
		return err
	}
	var cmp Comparison
	for i, o := range runs {
		line := NewLossLine(c, fmt.Sprintf("%-*s", maxLen(families), families[i]))
		result, err := trainRun(c, o, line.Update)
		line.End()
		if err != nil {
			return fmt.Errorf("training %s: %w", families[i], err)
		}
		cmp.Rows = append(cmp.Rows, ComparisonRow{Result: result, PairsScored: pairsScored(result.Config)})
		if result.Interrupted {
			break
		}
	}
	c.Session.Remember("compare", cmp)
	var trained []*train.Result
	for _, row := range cmp.Rows {
		trained = append(trained, row.Result)
	}
	showLosses(c, "training loss", trained)
	return c.Emit(cmp)
}

// compareValues are one family's options: every training option and the
// model options (typed or from the session) that the family reads.
func compareValues(c *Call, family string) map[string]string {
	values := map[string]string{"model": family}
	f, _ := models.FamilyByName(family)
	for _, opt := range c.Command.Options {
		if opt.Name == "models" || opt.Name == "executor" || !c.Has(opt.Name) {
			continue
		}
		if models.IsOption(opt.Name) && !f.Reads(opt.Name) {
			continue
		}
		values[opt.Name] = c.String(opt.Name)
	}
	return values
}

// pairsScored counts the query-key scores per head and sequence over all layers.
func pairsScored(cfg models.Config) int64 {
	var total int64
	for _, layer := range cfg.LayerPatterns() {
		total += layer.Pattern.ScoredPairs(layer.SeqLen)
	}
	return total
}

func maxLen(words []string) int {
	n := 0
	for _, w := range words {
		n = max(n, len(w))
	}
	return n
}
