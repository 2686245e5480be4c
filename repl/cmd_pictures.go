package repl

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
)

// Terminal pictures of the current model and of training runs.

func init() {
	Register(&Command{
		Name:    "mask",
		Summary: "draw the attention pattern K(i) of the current model as a block diagram",
		Details: "Rows are queries, columns keys, both from position 0 at the top left; each character\n" +
			"covers a block of (query, key) pairs and is shaded by the share of them K(i) allows.\n" +
			"Cells holding only skip keys (π-Attention's) are drawn apart from the local window.\n" +
			"Model options typed here override the session's for this picture only.",
		Options: append(modelOptions(), maskOptions.Declare()...),
		Run:     runMask,
	})
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

// maskArgs are mask's own options; the model's come from ModelConfig.
type maskArgs struct{ Head, Width int }

var maskOptions = Options[maskArgs]{Table: option.Table[maskArgs]{
	option.Int("head", "head to draw, for patterns that differ between heads", func(a *maskArgs) *int { return &a.Head }, option.AtLeast(0)),
	option.Int("width", "columns of the diagram (0: fit the terminal)", func(a *maskArgs) *int { return &a.Width },
		option.NewRule(func(w int) bool { return w == 0 || w >= 8 }, "must be at least 8 (or 0: fit the terminal)")),
}}

// maskMaxN bounds the diagram: drawing evaluates K(i) on all n² pairs.
const maskMaxN = 8192

// shades draw the share of allowed pairs in a cell: none, up to 1/3, up to 2/3, most, all.
var shades = []rune(" ░▒▓█")

// skipGlyph marks cells that hold skip keys and no local ones.
const skipGlyph = '•'

// MaskPicture is what `mask` prints.
type MaskPicture struct {
	Model   string   `json:"model"`
	Config  string   `json:"config"`
	N       int      `json:"n"`
	Head    int      `json:"head"`
	Allowed int64    `json:"allowed_pairs"`  // (query, key) pairs in K(i) for this head
	Rows    []string `json:"rows,omitempty"` // the diagram, first query block first
	Legend  string   `json:"legend"`
}

func (m MaskPicture) Text() string {
	var b strings.Builder
	causal := int64(m.N) * int64(m.N+1) / 2
	fmt.Fprintf(&b, "K(i) of %s, head %d: %d pairs allowed (%.1f%% of the %d causal pairs)\n",
		m.Config, m.Head, m.Allowed, 100*float64(m.Allowed)/float64(causal), causal)
	if len(m.Rows) == 0 {
		return b.String()
	}
	label := len(strconv.Itoa(m.N))
	fmt.Fprintf(&b, "%*s keys 0 → %d\n", label, "", m.N-1)
	for r, row := range m.Rows {
		start := r * m.N / len(m.Rows)
		fmt.Fprintf(&b, "%*d│%s│\n", label, start, row)
	}
	b.WriteString(m.Legend)
	return b.String()
}

func runMask(c *Call) error {
	cfg, err := c.ModelConfig()
	if err != nil {
		return err
	}
	if cfg.SeqLen > maskMaxN {
		return Usagef("mask draws up to n=%d (it evaluates all n² pairs); got n=%d", maskMaxN, cfg.SeqLen)
	}
	args, err := maskOptions.Read(c)
	if err != nil {
		return err
	}
	head, width := args.Head, cmp.Or(args.Width, terminalWidth(c.Out))
	if head >= cfg.Heads {
		return Usagef("option head=%d must be in 0..%d (heads=%d)", head, cfg.Heads-1, cfg.Heads)
	}
	cols := min(cfg.SeqLen, width-len(strconv.Itoa(cfg.SeqLen))-2)
	if cols < 4 {
		return Usagef("option width=%d leaves no room for the diagram", width)
	}
	pattern := cfg.Pattern()
	rows, allowed, err := maskRows(c.Ctx, pattern, head, cfg.SeqLen, cols)
	if err != nil {
		return err
	}
	showMask(c, pattern, head, cfg.SeqLen, cfg.Resolved().String())
	if c.Events != nil {
		rows = nil // a notebook shows the picture; the character diagram would repeat it
	}
	return c.Emit(MaskPicture{
		Model: cfg.Model, Config: cfg.Resolved().String(), N: cfg.SeqLen, Head: head,
		Allowed: allowed, Rows: rows, Legend: maskLegend(pattern),
	})
}

// maskRows draws K(i) for one head on a grid of cols columns and about
// cols/2 rows (a terminal cell is twice as tall as wide, so the square stays
// square). It returns the rows and the number of allowed pairs. K(i) is
// asked of every pair, which takes a minute for some patterns at the
// largest n: cancelling ctx stops it between queries.
func maskRows(ctx context.Context, p models.Pattern, head, n, cols int) ([]string, int64, error) {
	rows := max(1, min(n, cols/2))
	skips, hasSkips := p.(models.SkipKeys)
	local := make([][]int, rows)
	skip := make([][]int, rows)
	for r := range rows {
		local[r], skip[r] = make([]int, cols), make([]int, cols)
	}
	var allowed int64
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("mask interrupted at query %d of %d", i, n)
		}
		r := i * rows / n
		for j := range n {
			if !p.Allows(head, i, j) {
				continue
			}
			allowed++
			if hasSkips && skips.IsSkip(head, i, j) {
				skip[r][j*cols/n]++
			} else {
				local[r][j*cols/n]++
			}
		}
	}
	out := make([]string, rows)
	for r := range rows {
		var b strings.Builder
		queries := (r+1)*n/rows - r*n/rows
		for col := range cols {
			pairs := queries * ((col+1)*n/cols - col*n/cols)
			b.WriteRune(cellGlyph(local[r][col], skip[r][col], pairs))
		}
		out[r] = b.String()
	}
	return out, allowed, nil
}

func cellGlyph(local, skip, pairs int) rune {
	switch {
	case local == 0 && skip > 0:
		return skipGlyph
	case local == 0:
		return shades[0]
	case local == pairs:
		return shades[len(shades)-1]
	}
	// Partial cells take the three middle shades by thirds.
	return shades[1+min(2, 3*local/pairs)]
}

func maskLegend(p models.Pattern) string {
	legend := "█ all pairs of the cell allowed  ▓ ▒ ░ at least 2/3, at least 1/3, some  (blank: none)"
	if _, ok := p.(models.SkipKeys); ok {
		legend += fmt.Sprintf("\n%c skip keys only, shades: local window", skipGlyph)
	}
	return legend
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

// RFPicture shows a receptive-field measurement as bars, one per depth: the
// measured reach next to the bound the pattern allows. Its JSON is the
// measurement's own.
type RFPicture struct{ *train.RFResult }

func (p RFPicture) Text() string {
	var labels []string
	var reach []float64
	for _, l := range p.Layers {
		labels = append(labels, fmt.Sprintf("%d layer(s) measured", l.Layers))
		reach = append(reach, float64(l.Measured))
		if l.Bound >= 0 {
			labels = append(labels, fmt.Sprintf("%d layer(s) bound", l.Layers))
			reach = append(reach, float64(l.Bound))
		}
	}
	state := "random"
	if p.Trained {
		state = "trained"
	}
	return fmt.Sprintf("receptive field of %s (%s weights) at position %d, in tokens back:\n%s",
		p.Model, state, p.Position, Bars(labels, reach, sparkWidth, func(v float64) string { return strconv.Itoa(int(v)) }))
}
