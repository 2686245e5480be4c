package results

import (
	"fmt"
	"maps"
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
	// Underpowered is an inconclusive comparison whose seeds could not have
	// seen the effect it is judged against (Detectable above it).
	Underpowered = "underpowered"
	// NoSignal is a π claim against the local window where dense attention
	// does not beat the local window (Declared.Control): a finding about the
	// setting, not about π.
	NoSignal = "no signal beyond the window"
	// Inferior is a non-inferiority claim whose A is shown worse than B by
	// more than the margin.
	Inferior = "worse beyond the margin"
	// PaperScaleOnly is a claim this setting cannot decide (Declared.PaperScaleOnly).
	PaperScaleOnly = "decidable only at the paper's scale"
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
	// Detectable is the smallest difference these values could detect
	// (Detectable: two-sided at Significance, with chance Power) and Target
	// the effect the comparison is judged against: the paper's where it gives
	// one, else the smallest that counts. SeedsNeeded is how many values per
	// side would detect Target, when these do not.
	Detectable  float64 `json:"detectable,omitempty"`
	Target      float64 `json:"target,omitempty"`
	SeedsNeeded int     `json:"seeds_needed,omitempty"`
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
// says, in file f (its sweeps and baselines), with files the other results a
// positive control may live in: every derived field of c (each comparison's
// statistics and verdict, the control, the claim's verdict and why) is set
// anew. Verify compares a stored claim with its judgement.
func Judge(d Declared, c Claim, f *File, files []File) Claim {
	c.Kind, c.Paper, c.Claim, c.PaperSay = d.Kind, d.Paper, d.Statement, d.PaperSays
	if c.Verdict == Untestable {
		return c
	}
	c.Verdict, c.Why, c.Control = NotTested, "", nil
	switch d.Kind {
	case KindComparison, KindCost, KindEquivalence, KindNonInferiority:
		if len(c.Comparisons) == 0 {
			c.Why = "no values stored"
			if d.PaperScaleOnly != "" { // nothing this machine measures could decide it, so nothing was measured
				c.Verdict, c.Why = PaperScaleOnly, d.PaperScaleOnly
			}
			return c
		}
		for i := range c.Comparisons {
			c.Comparisons[i] = judgeComparison(d, c.Comparisons[i], f)
			if why, limited := d.PaperScaleOnlyAgainst[c.Comparisons[i].B]; limited {
				c.Comparisons[i].Verdict, c.Comparisons[i].Why = PaperScaleOnly, why
			}
		}
		c.Verdict, c.Why = overall(d, c.Comparisons)
		c.Ours = comparisonsText(d, c.Comparisons)
		if d.Control != nil {
			c = judgeControl(d, c, f, files)
		}
		if d.Skips && c.Verdict != NoSignal {
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
		c.Why = missedFigure(d, *c.Value)
	case KindBound:
		c.Verdict, c.Why = judgeBound(d, c.Measured, c.Bound)
	case KindScaling:
		c.Verdict, c.Why = judgeScaling(d, c.Lengths, c.Measured)
	}
	if d.PaperScaleOnly != "" && c.Verdict != NotTested {
		c.Verdict, c.Why = PaperScaleOnly, d.PaperScaleOnly
	}
	return c
}

// missedFigure says when a count lies more than a tenth away from the
// paper's own figure, which a count that holds can still do (it only has to
// reach the threshold); "" otherwise.
func missedFigure(d Declared, value float64) string {
	if d.PaperFigure == 0 || math.Abs(value-d.PaperFigure) <= 0.1*math.Abs(d.PaperFigure) {
		return ""
	}
	return fmt.Sprintf("counted %.3g%s, not the paper's %g", value, d.Unit, d.PaperFigure)
}

// judgeControl runs the claim's positive control (Declared.Control) and
// replaces its verdict by NoSignal unless dense attention beats the local
// window there by the smallest effect that counts.
func judgeControl(d Declared, c Claim, f *File, files []File) Claim {
	ctl := d.Control
	source := f
	if ctl.Notebook != "" && ctl.Notebook != f.Notebook {
		source = nil
		for i := range files {
			if files[i].Notebook == ctl.Notebook {
				source = &files[i]
			}
		}
	}
	if source == nil {
		c.Verdict, c.Why = NotTested, fmt.Sprintf("no positive control: the results of %s, where dense attention meets the local window, are missing", ctl.Notebook)
		return c
	}
	control := Comparison{A: ctl.A, B: ctl.B, Metric: ctl.Metric, Better: d.Better,
		AValues: source.Values(ctl.Experiment, ctl.A, ctl.Metric, 0), BValues: source.Values(ctl.Experiment, ctl.B, ctl.Metric, 0)}
	if len(control.AValues) < minValues || len(control.BValues) < minValues {
		c.Verdict, c.Why = NotTested, fmt.Sprintf("no positive control: %d runs of %s and %d of %s in %s", len(control.AValues), ctl.A, len(control.BValues), ctl.B, source.Notebook)
		return c
	}
	w := WelchTest(control.AValues, control.BValues)
	control.Diff, control.P, control.CI95 = w.Diff, w.P, w.CI95
	switch {
	case w.P >= Significance || math.Abs(w.Diff) < d.MinEffect:
		control.Verdict = Inconclusive
	case towards(d.Better, w.Diff):
		control.Verdict = Reproduces
	default:
		control.Verdict = Opposite // the local window ahead of dense attention
	}
	c.Control = &control
	if control.Verdict != Reproduces {
		c.Verdict, c.Why = NoSignal, fmt.Sprintf("%s does not beat %s by %g%s on this data and recipe (%s − %s = %s, p = %.2g, %s): π's skips have nothing to find beyond the window here, so this is a finding about the setting, not about π",
			ctl.A, ctl.B, d.MinEffect, d.Unit, ctl.A, ctl.B, signed(w.Diff, d.Unit), w.P, source.Notebook)
	}
	return c
}

// signed writes a difference with its sign and unit.
func signed(diff float64, unit string) string { return fmt.Sprintf("%+.3g%s", diff, unit) }

// minRunsPerLength is how many timed runs a growth exponent needs at each
// length: their median is the length's cost, so that one outlier among them
// cannot move the fit.
const minRunsPerLength = 3

// judgeScaling fits cost ∝ n^b over the median of each length's runs and
// sets its 95 % interval against the declared exponent: below it holds,
// above it fails.
func judgeScaling(d Declared, lengths, costs []float64) (verdict, why string) {
	byLength := map[float64][]float64{}
	for i, n := range lengths {
		if i < len(costs) {
			byLength[n] = append(byLength[n], costs[i])
		}
	}
	ns := slices.Sorted(maps.Keys(byLength))
	medians := make([]float64, len(ns))
	for i, n := range ns {
		if len(byLength[n]) < minRunsPerLength {
			return NotTested, fmt.Sprintf("%d runs at n = %.0f: the fit takes the median of %d at least per length", len(byLength[n]), n, minRunsPerLength)
		}
		medians[i] = median(byLength[n])
	}
	fit, err := FitExponent(ns, medians)
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
	return verdict, fmt.Sprintf("%s ∝ n^%.3f, 95 %% CI [%.3f, %.3f], against n^%g (the median of %d runs at each n = %s)",
		d.Metric, fit.B, fit.CI95[0], fit.CI95[1], d.Threshold, len(costs)/len(ns), distinctLengths(ns))
}

// median is the middle value of values (the mean of the two middle ones for
// an even count).
func median(values []float64) float64 {
	sorted := slices.Sorted(slices.Values(values))
	mid := len(sorted) / 2
	if len(sorted)%2 == 0 {
		return (sorted[mid-1] + sorted[mid]) / 2
	}
	return sorted[mid]
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
	cmp.Detectable, cmp.Target, cmp.SeedsNeeded = 0, 0, 0
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
	cmp.Detectable, cmp.Target = Detectable(w), target(d, b)
	switch d.Kind {
	case KindEquivalence:
		cmp.P = EquivalenceP(w, d.Margin)
	case KindNonInferiority:
		cmp.P = NonInferiorityP(w, d.Margin, d.Better)
	}
	if why := untested(d, cmp, f); why != "" {
		cmp.Why = why
		return cmp
	}
	switch d.Kind {
	case KindEquivalence:
		cmp.Verdict = NotShown
		if cmp.P < Significance {
			cmp.Verdict = Shown
		}
		return cmp
	case KindNonInferiority:
		switch {
		case cmp.P < Significance:
			cmp.Verdict = Shown
		case InferiorityP(w, d.Margin, d.Better) < Significance:
			cmp.Verdict = Inferior
		default:
			cmp = underpowered(d, cmp, Inconclusive)
		}
		return cmp
	}
	smallest := d.MinEffect
	if d.Relative {
		smallest *= math.Abs(mean(b))
	}
	switch {
	case cmp.P >= Significance:
		cmp = underpowered(d, cmp, Inconclusive)
	case math.Abs(cmp.Diff) < smallest:
		cmp.Verdict, cmp.Why = Inconclusive, fmt.Sprintf("significant, but below the smallest effect that counts (%.4g%s)", smallest, d.Unit)
	case towards(d.Better, cmp.Diff):
		cmp.Verdict = Reproduces
	default:
		cmp.Verdict = Opposite
	}
	return cmp
}

// target is the effect a comparison is judged against, in the claim's unit:
// the paper's own where it gives one, else the smallest that counts (each a
// fraction of B's mean when Relative); a claim of closeness is judged
// against its margin.
func target(d Declared, b []float64) float64 {
	effect := d.MinEffect
	switch {
	case d.Kind == KindEquivalence || d.Kind == KindNonInferiority:
		return d.Margin
	case d.PaperEffect != 0:
		effect = d.PaperEffect
	}
	if d.Relative {
		effect *= math.Abs(mean(b))
	}
	return effect
}

// underpowered gives an undecided comparison its verdict: Underpowered, with
// the seeds per side that would detect its target, when its values could not
// have seen that effect; else verdict.
func underpowered(d Declared, cmp Comparison, verdict string) Comparison {
	cmp.Verdict = verdict
	if cmp.Detectable <= cmp.Target {
		return cmp
	}
	seeds, reached := SeedsFor(cmp.AValues, cmp.BValues, cmp.Target)
	cmp.Verdict, cmp.SeedsNeeded = Underpowered, seeds
	more := fmt.Sprintf("%d values per side", seeds)
	if !reached {
		more = fmt.Sprintf("more than %d values per side", seeds)
	}
	cmp.Why = fmt.Sprintf("%s would detect the %s", more, targetName(d))
	return cmp
}

// targetName names what a comparison's Target is.
func targetName(d Declared) string {
	switch {
	case d.Kind == KindEquivalence || d.Kind == KindNonInferiority:
		return "margin"
	case d.PaperEffect != 0:
		return "paper's effect"
	}
	return "smallest effect that counts"
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
	case "kn_bigram_bpt":
		return "Kneser-Ney token bigram"
	case "pathfinder_chance_points":
		return "chance"
	}
	return name
}

// decided says whether a comparison's verdict settles its part of a claim.
func decided(verdict string) bool {
	switch verdict {
	case Reproduces, Opposite, Shown, Inferior:
		return true
	}
	return false
}

// overall is a claim's verdict from its comparisons. Parts that are decided
// give the claim its verdict when they agree, and make it mixed when they
// disagree; a part that is not decided (not tested, inconclusive,
// underpowered) never makes a claim mixed: the claim names it in its why.
// Without a decided part the claim is not tested when a part is, and
// otherwise underpowered when every part is, else inconclusive. A claim of
// sameness (KindEquivalence) is shown only when every part is.
func overall(d Declared, comparisons []Comparison) (verdict, why string) {
	if d.Kind == KindEquivalence {
		for _, c := range comparisons {
			if c.Verdict == NotTested {
				return NotTested, fmt.Sprintf("%s vs %s: %s", c.A, c.B, c.Why)
			}
			if c.Verdict != Shown {
				return NotShown, ""
			}
		}
		return Shown, ""
	}
	var settled []string
	var open []Comparison
	for _, c := range comparisons {
		if decided(c.Verdict) {
			if !slices.Contains(settled, c.Verdict) {
				settled = append(settled, c.Verdict)
			}
		} else {
			open = append(open, c)
		}
	}
	switch {
	case len(settled) > 1:
		return Mixed, ""
	case len(settled) == 1 && len(open) == 0:
		if len(comparisons) == 1 {
			return settled[0], comparisons[0].Why
		}
		return settled[0], ""
	case len(settled) == 1:
		return settled[0], "in part: " + undecidedParts(open)
	}
	for _, c := range comparisons {
		if c.Verdict == NotTested {
			return NotTested, fmt.Sprintf("%s vs %s: %s", c.A, c.B, c.Why)
		}
	}
	if len(comparisons) > 1 && !slices.ContainsFunc(comparisons, func(c Comparison) bool { return c.Verdict != PaperScaleOnly }) {
		return PaperScaleOnly, undecidedParts(comparisons)
	}
	if len(comparisons) == 1 {
		return comparisons[0].Verdict, comparisons[0].Why
	}
	for _, c := range comparisons {
		if c.Verdict != Underpowered {
			return Inconclusive, ""
		}
	}
	return Underpowered, ""
}

// undecidedParts names the parts of a claim that its verdict does not cover.
func undecidedParts(open []Comparison) string {
	parts := make([]string, len(open))
	for i, c := range open {
		parts[i] = fmt.Sprintf("%s against %s", c.Verdict, c.B)
		if c.Why != "" {
			parts[i] += " (" + c.Why + ")"
		}
	}
	return strings.Join(parts, "; ")
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

// comparisonsText is what a claim's comparisons measured, in one line, each
// with its own verdict where the claim's may differ from it (several parts; a
// claim a positive control or the paper's scale can overrule).
func comparisonsText(d Declared, comparisons []Comparison) string {
	var parts []string
	for _, c := range comparisons {
		s := fmt.Sprintf("vs %s: %s", c.B, formatDiff(c, d))
		if len(comparisons) > 1 || d.Control != nil || d.PaperScaleOnly != "" {
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
	switch d.Kind {
	case KindEquivalence:
		test = fmt.Sprintf("equivalence within ±%g p", d.Margin)
	case KindNonInferiority:
		test = fmt.Sprintf("not worse by %g p", d.Margin)
	}
	power := ""
	if c.Detectable > 0 {
		power = fmt.Sprintf("; detects %.*f%s, the %s %.*f", digits, c.Detectable, d.Unit, targetName(d), digits, c.Target)
	}
	return fmt.Sprintf("%+.*f%s, 95 %% CI [%+.*f, %+.*f], %s = %.2g (n = %d, %d)%s", digits, c.Diff, d.Unit, digits, c.CI95[0], digits, c.CI95[1],
		test, c.P, len(c.AValues), len(c.BValues), power)
}

func mean(values []float64) float64 {
	m, _ := meanVar(values)
	return m
}
