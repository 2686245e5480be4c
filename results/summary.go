package results

import (
	"fmt"
	"strings"
)

// Outcome is what a claim's verdict says at this scale, in plain words.
type Outcome string

const (
	OutcomeReproduces Outcome = "reproduce or hold at this scale"
	OutcomeDoesNot    Outcome = "do not reproduce at this scale"
	OutcomePartly     Outcome = "mixed: the verdict differs from one compared model to another"
	OutcomeUndecided  Outcome = "cannot be decided at this scale (inconclusive, not tested, skips unused)"
	OutcomeNotRun     Outcome = "not yet measured on the current code"
)

// Outcomes lists them in the order a summary gives them.
var Outcomes = []Outcome{OutcomeReproduces, OutcomeDoesNot, OutcomePartly, OutcomeUndecided, OutcomeNotRun}

// outcomeOf sorts a verdict: what holds, what fails, what is mixed, and
// everything without a verdict (inconclusive, not tested, skips unused,
// untestable) as undecided.
func outcomeOf(verdict string) Outcome {
	switch verdict {
	case Reproduces, Holds, HoldsByConstruction, Shown:
		return OutcomeReproduces
	case Opposite, Fails, DoesNotHold, NotShown:
		return OutcomeDoesNot
	case Mixed:
		return OutcomePartly
	}
	return OutcomeUndecided
}

// claimOutcome sorts a claim by its verdict, except that a claim not tested
// as a whole for want of one comparison, while another is decided (ECP worse
// than dense attention, PerceiverAR undertrained), is mixed: its parts are
// listed, so the decided one is not lost among the undecided claims.
func claimOutcome(c Claim) Outcome {
	outcome := outcomeOf(c.Verdict)
	if outcome != OutcomeUndecided {
		return outcome
	}
	for _, part := range c.Comparisons {
		if decided := outcomeOf(part.Verdict); decided == OutcomeReproduces || decided == OutcomeDoesNot {
			return OutcomePartly
		}
	}
	return outcome
}

// Summary sorts every declared claim by outcome; a claim that no results
// file holds, or only a stale one, is not yet measured on the current code.
func Summary(files []File, stale map[string]string) map[Outcome][]Declared {
	out := map[Outcome][]Declared{}
	for _, d := range Claims {
		claim, notebook, found := find(files, d.ID)
		_, old := stale[notebook]
		outcome := OutcomeNotRun
		if found && !old {
			outcome = claimOutcome(claim)
		}
		out[outcome] = append(out[outcome], d)
	}
	return out
}

// SummaryLine is the summary in one line: each outcome with its claims' numbers.
func SummaryLine(files []File, stale map[string]string) string {
	summary := Summary(files, stale)
	var parts []string
	for _, outcome := range Outcomes {
		if claims := summary[outcome]; len(claims) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", outcome, claimNumbers(claims)))
		}
	}
	return fmt.Sprintf("Of the %d claims: %s.", len(Claims), strings.Join(parts, "; "))
}

// summaryText is the summary as EXPERIMENTS.md opens it: a paragraph per
// outcome naming its claims.
func summaryText(files []File, stale map[string]string) string {
	summary := Summary(files, stale)
	var b strings.Builder
	b.WriteString("## In plain words\n\n")
	for _, outcome := range Outcomes {
		claims := summary[outcome]
		if len(claims) == 0 {
			continue
		}
		statements := make([]string, len(claims))
		for i, d := range claims {
			statements[i] = fmt.Sprintf("%d (%s: %s)", d.ID, short(d.Paper), d.Statement)
			if outcome != OutcomePartly {
				continue
			}
			if claim, _, found := find(files, d.ID); found {
				statements[i] += ": " + verdictsByModel(claim.Comparisons)
			}
		}
		fmt.Fprintf(&b, "- **%s%s** (%d): %s.\n", strings.ToUpper(string(outcome[:1])), outcome[1:], len(claims), strings.Join(statements, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

// verdictsByModel splits a mixed claim into its parts, so that a clear result
// against one model stays visible beside an unclear one against another:
// "reproduces against Transformer, local; inconclusive against PerceiverAR"
// (a part not tested says why).
func verdictsByModel(comparisons []Comparison) string {
	var verdicts []string
	models := map[string][]string{}
	for _, c := range comparisons {
		if _, seen := models[c.Verdict]; !seen {
			verdicts = append(verdicts, c.Verdict)
		}
		name := c.B
		if c.Verdict == NotTested && c.Why != "" {
			name += " (" + c.Why + ")"
		}
		models[c.Verdict] = append(models[c.Verdict], name)
	}
	parts := make([]string, len(verdicts))
	for i, verdict := range verdicts {
		parts[i] = fmt.Sprintf("%s against %s", verdict, strings.Join(models[verdict], ", "))
	}
	return strings.Join(parts, "; ")
}

func claimNumbers(claims []Declared) string {
	numbers := make([]string, len(claims))
	for i, d := range claims {
		numbers[i] = fmt.Sprint(d.ID)
	}
	return strings.Join(numbers, ", ")
}
