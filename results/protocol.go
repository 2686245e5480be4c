package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The verdicts. Each kind of claim has its own words, so that a count is
// never said to "reproduce" and a claim of sameness can fail to be shown.
const (
	Reproduces          = "reproduces"   // significant in the paper's direction, at least the smallest effect that counts
	Opposite            = "opposite"     // significant the other way, as large
	Inconclusive        = "inconclusive" // neither
	Mixed               = "mixed"        // comparisons with several models that disagree (each is shown)
	NotTested           = "not tested"   // too few values, unequal tuning or an undertrained model: no verdict
	Shown               = "shown"        // equivalence within the declared margin (two one-sided tests)
	NotShown            = "not shown"
	HoldsByConstruction = "holds by construction" // a count that follows from the definition
	DoesNotHold         = "does not hold"
	Holds               = "holds" // a measured bound
	Fails               = "fails"
	Untestable          = "untestable here"
	SkipsUnused         = "skips unused" // π's skips carried under MinSkipMass of its attention: no verdict on π
)

// Comparison is one side-by-side of a claim: the per-seed (or per-measurement)
// values of both sides and what the protocol makes of them.
type Comparison struct {
	A       string     `json:"a"`
	B       string     `json:"b"`
	Metric  string     `json:"metric"`
	Better  string     `json:"better"` // Lower or Higher
	AValues []float64  `json:"a_values"`
	BValues []float64  `json:"b_values"`
	Diff    float64    `json:"diff"` // mean(a) - mean(b)
	P       float64    `json:"p"`    // Welch's two-sided p; the TOST p for an equivalence
	CI95    [2]float64 `json:"ci95"`
	Verdict string     `json:"verdict"`
	Why     string     `json:"why,omitempty"`
}

// Sweep is one model's learning-rate search: the validation figure at each
// rate of the grid after the same steps, and the rate chosen for its seeds.
type Sweep struct {
	Model    string    `json:"model"`
	Steps    int       `json:"steps"`
	LR       []float64 `json:"lr"`
	Valid    []float64 `json:"valid"`              // 0 where the rate diverged
	Diverged []bool    `json:"diverged,omitempty"` // the loss became infinite or NaN at that rate
	Chosen   float64   `json:"chosen"`
	// Floor is the figure the sweep's best run had to beat (lower is better)
	// for the model to get more seeds: the byte 4-gram's bits per byte, say.
	// A model that does not beat it is undertrained whatever its other seeds
	// would say, so the notebook trains it no further (nb.Experiment.Floor).
	// 0: no floor.
	Floor float64 `json:"floor,omitempty"`
}

// Best is the figure of the chosen rate's run; false while every rate diverged.
func (s Sweep) Best() (float64, bool) {
	i := slices.Index(s.LR, s.Chosen)
	if i < 0 || i >= len(s.Valid) || s.DivergedAt(i) {
		return 0, false
	}
	return s.Valid[i], true
}

// Undertrained says whether the sweep set a floor that its best run did not beat.
func (s Sweep) Undertrained() bool {
	best, ok := s.Best()
	return s.Floor > 0 && (!ok || best >= s.Floor)
}

// DivergedAt says whether the rate at index i diverged (sweeps saved before
// Diverged existed have none).
func (s Sweep) DivergedAt(i int) bool { return i < len(s.Diverged) && s.Diverged[i] }

// MaxExtension is how many rates a sweep may add past the edge of its grid
// while its best rate is still the highest (or lowest) it tried, each one
// grid step further: a grid that does not bracket a model's best rate would
// under-tune that model against one whose best rate lies inside the grid.
const MaxExtension = 2

// Add records the validation figure at rate lr (diverged: the loss became
// infinite or NaN there), keeping the rates in ascending order, and sets
// Chosen to the rate with the lowest figure (the lower rate on a tie; 0 while
// every rate diverged).
func (s *Sweep) Add(lr, valid float64, diverged bool) {
	at, _ := slices.BinarySearch(s.LR, lr)
	// Clones: a copy of this sweep (one kept in an Experiment, say) must not see the insertion.
	s.Diverged = append(slices.Clone(s.Diverged), make([]bool, len(s.LR)-len(s.Diverged))...)
	s.LR, s.Valid = slices.Clone(s.LR), slices.Clone(s.Valid)
	s.LR, s.Valid, s.Diverged = slices.Insert(s.LR, at, lr), slices.Insert(s.Valid, at, valid), slices.Insert(s.Diverged, at, diverged)
	best := -1
	for i := range s.LR {
		if !s.Diverged[i] && (best < 0 || s.Valid[i] < s.Valid[best]) {
			best = i
		}
	}
	s.Chosen = 0
	if best >= 0 {
		s.Chosen = s.LR[best]
	}
}

// Beyond is the rate a sweep tries next: one grid step past the edge where
// its best rate lies; false when the sweep brackets its best rate (a rate
// on each side did worse or diverged).
func (s Sweep) Beyond() (float64, bool) {
	last := len(s.LR) - 1
	switch s.edge() {
	case +1:
		return s.LR[last] * s.LR[last] / s.LR[last-1], true
	case -1:
		return s.LR[0] * s.LR[0] / s.LR[1], true
	}
	return 0, false
}

// edge is +1 when the sweep kept the highest rate it tried and that rate beat
// the one below it, −1 when it kept the lowest and beat the one above, else
// 0. A tie (every rate solved a task, say) brackets nothing and is no edge.
func (s Sweep) edge() int {
	i := slices.Index(s.LR, s.Chosen)
	beats := func(neighbour int) bool {
		return s.DivergedAt(neighbour) || i < len(s.Valid) && neighbour < len(s.Valid) && s.Valid[i] < s.Valid[neighbour]
	}
	switch {
	case len(s.LR) < 2 || i < 0:
		return 0
	case i == len(s.LR)-1 && beats(i-1):
		return +1
	case i == 0 && beats(1):
		return -1
	}
	return 0
}

// minGrid is the number of learning rates every model's sweep tries.
const minGrid = 4

// Judge computes a claim's verdict from its raw values as its declaration
// says, in file f (its sweeps and baselines): every derived field of c
// (each comparison's statistics and verdict, the claim's verdict and why) is
// set anew. Verify compares a stored claim with its judgement.
func Judge(d Declared, c Claim, f *File) Claim {
	c.Kind, c.Paper, c.Claim, c.PaperSay = d.Kind, d.Paper, d.Statement, d.PaperSays
	if c.Verdict == Untestable {
		return c
	}
	c.Verdict, c.Why = NotTested, ""
	switch d.Kind {
	case KindComparison, KindCost, KindEquivalence:
		if len(c.Comparisons) == 0 {
			c.Why = "no values stored"
			return c
		}
		for i := range c.Comparisons {
			c.Comparisons[i] = judgeComparison(d, c.Comparisons[i], f)
		}
		c.Verdict, c.Why = overall(d, c.Comparisons)
		c.Ours = comparisonsText(d, c.Comparisons)
		if d.Skips {
			c.Verdict, c.Why = skipsUsed(c)
		}
		if len(c.SkipMass) > 0 {
			masses := make([]string, len(c.SkipMass))
			for i, m := range c.SkipMass {
				masses[i] = fmt.Sprintf("%.3f", m)
			}
			c.Ours += "; π's attention mass on skip keys by layer: " + strings.Join(masses, ", ")
		}
	case KindCount:
		if c.Value == nil {
			c.Why = "no counted value stored"
			return c
		}
		c.Verdict = DoesNotHold
		if towards(d.Better, *c.Value-d.Threshold) || *c.Value == d.Threshold {
			c.Verdict = HoldsByConstruction
			if d.Compiled {
				c.Verdict = Holds
			}
		}
	case KindBound:
		c.Verdict, c.Why = judgeBound(d, c.Measured, c.Bound)
	case KindScaling:
		c.Verdict, c.Why = judgeScaling(d, c.Lengths, c.Measured)
	}
	return c
}

// judgeScaling fits cost ∝ n^b over every run and sets its 95 % interval
// against the declared exponent: below it holds, above it fails.
func judgeScaling(d Declared, lengths, costs []float64) (verdict, why string) {
	fit, err := FitExponent(lengths, costs)
	if err != nil {
		return NotTested, err.Error()
	}
	verdict = Inconclusive
	switch {
	case fit.CI95[1] < d.Threshold:
		verdict = Holds
	case fit.CI95[0] > d.Threshold:
		verdict = Fails
	}
	return verdict, fmt.Sprintf("%s ∝ n^%.3f, 95 %% CI [%.3f, %.3f], against n^%g (%d runs at n = %s)",
		d.Metric, fit.B, fit.CI95[0], fit.CI95[1], d.Threshold, len(costs), distinctLengths(lengths))
}

// distinctLengths lists the lengths of a scaling claim once each, in order.
func distinctLengths(lengths []float64) string {
	var parts []string
	for i, n := range lengths {
		if i == 0 || n != lengths[i-1] {
			parts = append(parts, fmt.Sprintf("%.0f", n))
		}
	}
	return strings.Join(parts, ", ")
}

// MinSkipMass is the share of attention π must put on its skip keys in some
// layer for a result to speak of π rather than of its local window.
const MinSkipMass = 0.01

// skipsUsed keeps a π claim's verdict when its skips carried attention, and
// replaces it otherwise: without a stored skip mass by "not tested", below
// MinSkipMass in every layer by "skips unused".
func skipsUsed(c Claim) (verdict, why string) {
	if len(c.SkipMass) == 0 {
		return NotTested, "no skip mass stored: every π result shows how much attention its skips carry (probe gate)"
	}
	most := slices.Max(c.SkipMass)
	if most < MinSkipMass {
		return SkipsUnused, fmt.Sprintf("π put at most %.3f of its attention on skip keys in any layer (under %g): it computed local attention, so this says nothing of its skips", most, MinSkipMass)
	}
	return c.Verdict, c.Why
}

// towards says whether a difference points the way better says.
func towards(better string, diff float64) bool {
	if better == Lower {
		return diff < 0
	}
	return diff > 0
}

func judgeComparison(d Declared, cmp Comparison, f *File) Comparison {
	cmp.Diff, cmp.P, cmp.CI95, cmp.Verdict, cmp.Why = 0, 0, [2]float64{}, NotTested, ""
	a, b := cmp.AValues, cmp.BValues
	if len(a) < minValues || len(b) < minValues {
		cmp.Why = fmt.Sprintf("%d and %d values; at least %d per side", len(a), len(b), minValues)
		if why := undertrained(d, cmp, f); why != "" { // the reason it has so few
			cmp.Why = why
		}
		return cmp
	}
	w := WelchTest(a, b)
	cmp.Diff, cmp.P, cmp.CI95 = w.Diff, w.P, w.CI95
	if d.Kind == KindEquivalence {
		cmp.P = EquivalenceP(w, d.Margin)
	}
	if why := untested(d, cmp, f); why != "" {
		cmp.Why = why
		return cmp
	}
	if d.Kind == KindEquivalence {
		cmp.Verdict = NotShown
		if cmp.P < Significance {
			cmp.Verdict = Shown
		}
		return cmp
	}
	smallest := d.MinEffect
	if d.Relative {
		smallest *= math.Abs(mean(b))
	}
	switch {
	case cmp.P >= Significance:
		cmp.Verdict = Inconclusive
	case math.Abs(cmp.Diff) < smallest:
		cmp.Verdict, cmp.Why = Inconclusive, fmt.Sprintf("significant, but below the smallest effect that counts (%.4g%s)", smallest, d.Unit)
	case towards(d.Better, cmp.Diff):
		cmp.Verdict = Reproduces
	default:
		cmp.Verdict = Opposite
	}
	return cmp
}

// untested is why a comparison of trained models gets no verdict: too few
// seeds, tuning that was not equal, or a model no better than the trivial
// baseline; "" when none of these.
func untested(d Declared, cmp Comparison, f *File) string {
	if !d.Trained {
		return ""
	}
	if why := undertrained(d, cmp, f); why != "" {
		return why
	}
	if len(cmp.AValues) < MinSeeds || len(cmp.BValues) < MinSeeds {
		return fmt.Sprintf("%d and %d seeds; the protocol needs %d per side", len(cmp.AValues), len(cmp.BValues), MinSeeds)
	}
	if why := unequalTuning(f.Sweeps, cmp.A, cmp.B); why != "" {
		return "unequal tuning: " + why
	}
	return ""
}

// undertrained names a side of a trained comparison whose sweep's best run
// did not beat the sweep's floor (so it got no more seeds), or that is no
// better than the claim's trivial baseline by the mean of its values; "" when
// neither.
func undertrained(d Declared, cmp Comparison, f *File) string {
	if !d.Trained {
		return ""
	}
	for _, side := range []struct {
		model  string
		values []float64
	}{{cmp.A, cmp.AValues}, {cmp.B, cmp.BValues}} {
		if s, ok := findSweep(f.Sweeps, side.model); ok && s.Undertrained() {
			best, _ := s.Best()
			return fmt.Sprintf("%s undertrained: its best sweep run reached %.4g%s, no better than the floor of %.4g%s, so it got no more seeds", side.model, best, d.Unit, s.Floor, d.Unit)
		}
		if base, ok := f.Baselines[d.Baseline]; ok && len(side.values) > 0 {
			if m := mean(side.values); !towards(d.Better, m-base) {
				return fmt.Sprintf("%s undertrained: %.4g%s, no better than the %s's %.4g", side.model, m, d.Unit, baselineName(d.Baseline), base)
			}
		}
	}
	return ""
}

// findSweep is model's sweep in sweeps.
func findSweep(sweeps []Sweep, model string) (Sweep, bool) {
	i := slices.IndexFunc(sweeps, func(s Sweep) bool { return s.Model == model })
	if i < 0 {
		return Sweep{}, false
	}
	return sweeps[i], true
}

// unequalTuning says how two models' learning-rate sweeps differ from the
// protocol (each its own sweep over the same grid of at least minGrid rates,
// at the same steps, each extended past the grid's edge as its best rate
// asked); "" when they do not.
func unequalTuning(sweeps []Sweep, a, b string) string {
	sa, okA := findSweep(sweeps, a)
	sb, okB := findSweep(sweeps, b)
	switch {
	case !okA || !okB:
		var missing []string
		if !okA {
			missing = append(missing, a)
		}
		if !okB {
			missing = append(missing, b)
		}
		return "no learning-rate sweep of " + strings.Join(missing, " and ")
	case len(sa.LR) < minGrid:
		return fmt.Sprintf("%s's sweep tried %d rates, the protocol %d", a, len(sa.LR), minGrid)
	case commonRates(sa, sb) < minGrid || sa.Steps != sb.Steps:
		return fmt.Sprintf("%s and %s were swept over other rates or steps", a, b)
	}
	return ""
}

// commonRates is how many learning rates two sweeps both tried: the shared
// grid, whatever each added past its edges (MaxExtension).
func commonRates(a, b Sweep) int {
	n := 0
	for _, lr := range a.LR {
		if slices.Contains(b.LR, lr) {
			n++
		}
	}
	return n
}

func baselineName(name string) string {
	switch name {
	case "fourgram_bpc":
		return "byte 4-gram count model"
	case "pathfinder_chance_points":
		return "chance"
	}
	return name
}

// overall is a claim's verdict from its comparisons: theirs when they agree;
// not tested when any is; mixed when they disagree (an equivalence is shown
// only when every comparison is).
func overall(d Declared, comparisons []Comparison) (verdict, why string) {
	for _, c := range comparisons {
		if c.Verdict == NotTested {
			return NotTested, fmt.Sprintf("%s vs %s: %s", c.A, c.B, c.Why)
		}
	}
	first := comparisons[0].Verdict
	for _, c := range comparisons[1:] {
		if c.Verdict != first {
			if d.Kind == KindEquivalence {
				return NotShown, ""
			}
			return Mixed, ""
		}
	}
	if len(comparisons) == 1 {
		return first, comparisons[0].Why
	}
	return first, ""
}

func judgeBound(d Declared, measured, bound []float64) (verdict, why string) {
	if len(measured) == 0 || len(measured) != len(bound) {
		return NotTested, fmt.Sprintf("%d measurements against %d bounds", len(measured), len(bound))
	}
	for i := max(d.FromLayer, 1) - 1; i < len(measured); i++ {
		if (d.Upper && measured[i] > bound[i]) || (!d.Upper && measured[i] < bound[i]) {
			return Fails, fmt.Sprintf("at L = %d: %.0f against the bound %.0f", i+1, measured[i], bound[i])
		}
	}
	return Holds, ""
}

// comparisonsText is what a claim's comparisons measured, in one line.
func comparisonsText(d Declared, comparisons []Comparison) string {
	var parts []string
	for _, c := range comparisons {
		s := fmt.Sprintf("vs %s: %s", c.B, formatDiff(c, d))
		if len(comparisons) > 1 {
			s += fmt.Sprintf(" (%s)", c.Verdict)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// formatDiff is a comparison's difference, interval and p (of the two
// one-sided tests, for a claim of sameness).
func formatDiff(c Comparison, d Declared) string {
	if len(c.AValues) < minValues || len(c.BValues) < minValues {
		return fmt.Sprintf("%d and %d values", len(c.AValues), len(c.BValues))
	}
	digits := 3
	if width := c.CI95[1] - c.CI95[0]; width > 0 {
		digits = max(0, min(4, 2-int(math.Floor(math.Log10(width)))))
	}
	test := "p"
	if d.Kind == KindEquivalence {
		test = fmt.Sprintf("equivalence within ±%g p", d.Margin)
	}
	return fmt.Sprintf("%+.*f%s, 95 %% CI [%+.*f, %+.*f], %s = %.2g (n = %d, %d)", digits, c.Diff, d.Unit, digits, c.CI95[0], digits, c.CI95[1],
		test, c.P, len(c.AValues), len(c.BValues))
}

func mean(values []float64) float64 {
	m, _ := meanVar(values)
	return m
}
