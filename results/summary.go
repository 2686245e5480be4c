package results

import (
	"fmt"
	"strings"
)

// Outcome is what a claim's verdict shows at this scale, in plain words. The
// groups are never merged: a result that follows from construction or from
// the task's design is never counted as a reproduction, and what this scale
// cannot decide says why.
type Outcome string

const (
	// OutcomeFor: a trained comparison or a timing that could have gone
	// either way went the paper's way.
	OutcomeFor Outcome = "decided for the papers by trained models or measurements"
	// OutcomeAgainst: decided against the paper (a mixed claim, whose decided
	// parts disagree, is not the claim as stated either).
	OutcomeAgainst Outcome = "decided against them"
	// OutcomeByDesign: counts, properties of a mask, and tasks whose baseline
	// cannot succeed by construction (Declared.ByDesign).
	OutcomeByDesign Outcome = "hold by construction or by the task's design, not reproductions"
	// OutcomeUndecided: each with its reason (underpowered, a model under its
	// floor, skips unused, no signal beyond the window, ...).
	OutcomeUndecided Outcome = "cannot be decided at this scale"
	// OutcomeOwn: ecpi's own questions (Declared.Own), whatever their verdict.
	OutcomeOwn    Outcome = "questions of ecpi's own, not the papers'"
	OutcomeNotRun Outcome = "not measured yet"
)

// Outcomes lists them in the order a summary gives them.
var Outcomes = []Outcome{OutcomeFor, OutcomeAgainst, OutcomeByDesign, OutcomeUndecided, OutcomeOwn, OutcomeNotRun}

// claimOutcome sorts a judged claim.
func claimOutcome(d Declared, c Claim) Outcome {
	if d.Own {
		return OutcomeOwn
	}
	switch c.Verdict {
	case HoldsByConstruction:
		return OutcomeByDesign
	case Reproduces, Shown, Holds:
		if d.ByDesign != "" {
			return OutcomeByDesign
		}
		return OutcomeFor
	case Opposite, Fails, DoesNotHold, NotShown, Inferior, Mixed:
		return OutcomeAgainst
	}
	return OutcomeUndecided
}

// Summarised is one claim as the summary gives it: its declaration, its
// outcome and a note in brackets (the reason it is undecided, its parts, a
// count that misses the paper's figure), and whether that is the verdict of
// older code (its notebook's section is stale).
type Summarised struct {
	Declared
	Outcome Outcome
	Note    string
	Stale   bool
}

// Summary sorts every declared claim by outcome; a claim that no results
// file holds is not measured yet, and one that only a stale file holds keeps
// its older code's outcome, marked stale.
func Summary(files []File, stale map[string]string) []Summarised {
	var out []Summarised
	for _, d := range Claims {
		claim, notebook, found := find(files, d.ID)
		_, old := stale[notebook]
		s := Summarised{Declared: d, Outcome: OutcomeNotRun, Stale: found && old}
		if found {
			s.Outcome, s.Note = claimOutcome(d, claim), note(d, claim)
		}
		out = append(out, s)
	}
	return out
}

// note is what a claim's number carries in brackets in the summary: why it is
// undecided, its parts where they differ, its verdict when it is ecpi's own
// question, or a count away from the paper's figure.
func note(d Declared, c Claim) string {
	var parts []string
	outcome := claimOutcome(d, c)
	switch {
	case outcome == OutcomeUndecided:
		parts = append(parts, undecidedReason(c))
	case outcome == OutcomeOwn:
		parts = append(parts, c.Verdict)
	case d.Kind == KindCount && c.Why != "":
		parts = append(parts, c.Why)
	}
	if outcome != OutcomeUndecided && len(c.Comparisons) > 1 && !allAlike(c.Comparisons) {
		parts = append(parts, verdictsByModel(c.Comparisons, false))
	}
	return strings.Join(parts, "; ")
}

// undecidedReason is why a claim without a verdict has none, in a few words.
func undecidedReason(c Claim) string {
	switch {
	case c.Verdict == NotTested && strings.Contains(c.Why, "undertrained"):
		return "a model under its floor"
	case c.Verdict == Inconclusive && len(c.Comparisons) > 0 && !anyUnderpowered(c.Comparisons):
		return "inconclusive, though powered for the effect it is judged against"
	}
	return c.Verdict
}

func anyUnderpowered(comparisons []Comparison) bool {
	for _, c := range comparisons {
		if c.Verdict == Underpowered {
			return true
		}
	}
	return false
}

func allAlike(comparisons []Comparison) bool {
	for _, c := range comparisons[1:] {
		if c.Verdict != comparisons[0].Verdict {
			return false
		}
	}
	return true
}

// SummaryLine is the summary in one line: each outcome with its claims'
// numbers, claims of the same note grouped under it, the current code's
// verdicts first and older code's (stale sections) after them.
func SummaryLine(files []File, stale map[string]string) string {
	var current, older []Summarised
	for _, s := range Summary(files, stale) {
		if s.Stale {
			older = append(older, s)
		} else {
			current = append(current, s)
		}
	}
	line := fmt.Sprintf("Of the %d claims", len(Claims))
	switch {
	case len(older) == 0:
		line += " — " + outcomesLine(current) + "."
	case len(current) == 0:
		line += ", none has a verdict of the current code."
	default:
		line += ", on the current code — " + outcomesLine(current) + "."
	}
	if len(older) > 0 {
		line += " On older code (stale until their notebooks run again) — " + outcomesLine(older) + "."
	}
	return line
}

// outcomesLine is claims by outcome, in one line.
func outcomesLine(summary []Summarised) string {
	var parts []string
	for _, outcome := range Outcomes {
		var numbers []string
		for _, group := range byNote(summary, outcome) {
			ids := make([]string, len(group))
			for i, s := range group {
				ids[i] = fmt.Sprint(s.ID)
			}
			text := strings.Join(ids, ", ")
			if group[0].Note != "" {
				text += " (" + group[0].Note + ")"
			}
			numbers = append(numbers, text)
		}
		if len(numbers) > 0 {
			parts = append(parts, fmt.Sprintf("%s%s: %s", strings.ToUpper(string(outcome[:1])), outcome[1:], strings.Join(numbers, "; ")))
		}
	}
	return strings.Join(parts, ". ")
}

// byNote is the claims of one outcome in groups of the same note, each group
// where its first claim falls in the registry's order.
func byNote(summary []Summarised, outcome Outcome) [][]Summarised {
	var groups [][]Summarised
	at := map[string]int{}
	for _, s := range summary {
		if s.Outcome != outcome {
			continue
		}
		i, seen := at[s.Note]
		if !seen {
			i, at[s.Note] = len(groups), len(groups)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	return groups
}

// summaryText is the summary as EXPERIMENTS.md opens it: a paragraph per
// outcome naming its claims.
func summaryText(files []File, stale map[string]string) string {
	summary := Summary(files, stale)
	var b strings.Builder
	b.WriteString("## In plain words\n\n")
	for _, outcome := range Outcomes {
		var statements []string
		for _, s := range summary {
			if s.Outcome != outcome {
				continue
			}
			text := fmt.Sprintf("%d (%s: %s", s.ID, short(s.Paper), s.Statement)
			if s.Note != "" {
				text += " — " + s.Note
			}
			if s.ByDesign != "" && outcome == OutcomeByDesign {
				text += " — " + s.ByDesign
			}
			if s.Stale {
				text += "; stale: a verdict of older code"
			}
			statements = append(statements, text+")")
		}
		if len(statements) > 0 {
			fmt.Fprintf(&b, "- **%s%s** (%d): %s.\n", strings.ToUpper(string(outcome[:1])), outcome[1:], len(statements), strings.Join(statements, "; "))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// verdictsByModel splits a claim into its parts, so that a clear result
// against one model stays visible beside an unclear one against another:
// "reproduces against Transformer, local; inconclusive against PerceiverAR"
// (with why, a part that is not tested says why).
func verdictsByModel(comparisons []Comparison, why bool) string {
	var verdicts []string
	models := map[string][]string{}
	for _, c := range comparisons {
		if _, seen := models[c.Verdict]; !seen {
			verdicts = append(verdicts, c.Verdict)
		}
		name := c.B
		if why && c.Verdict == NotTested && c.Why != "" {
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
