package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Pilot is a short run of a design, one seed, whose outcome decides how a
// claim's runs are set up (the data, the schedule, the seeds) by a rule
// declared here before the pilot runs. A pilot decides a design, never a
// claim: its runs never enter a verdict, and a claim's runs are trained
// again under the protocol in the regime the pilot chose.
type Pilot struct {
	ID       string // "P1"
	Claims   []int  // the claims whose design it decides
	Notebook string // the notebook that runs it
	Question string
	Runs     string // what runs, in one paragraph
	Rule     string // the rule, in words: Decide applies it
	Declared string // the date it was declared, before its runs
	// History is every change made after some of its runs had been seen,
	// with why: what a reader must weigh.
	History []Change
	// Decide turns the pilot's measured values into its decision.
	Decide func(PilotRecord) (string, error)
}

// PilotRecord is what a pilot measured and what its rule decided, and where:
// pilots are independent, so a notebook may run them in separate sittings
// (each record keeps its own date, machine and code version).
type PilotRecord struct {
	ID          string       `json:"id"`
	Values      []PilotValue `json:"values"`
	Decision    string       `json:"decision"`
	Date        string       `json:"date"`
	Machine     string       `json:"machine"`
	CodeVersion string       `json:"code_version"`
}

// PilotValue is one measurement of a pilot.
type PilotValue struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Value is the value called name.
func (r PilotRecord) Value(name string) (float64, error) {
	for _, v := range r.Values {
		if v.Name == name {
			return v.Value, nil
		}
	}
	return 0, fmt.Errorf("pilot %s has no value %q", r.ID, name)
}

// Add appends a value.
func (r *PilotRecord) Add(name string, value float64, unit string) {
	r.Values = append(r.Values, PilotValue{Name: name, Value: value, Unit: unit})
}

// Changes is the pilot's history in words, a paragraph a change ("" when
// nothing changed after its runs were seen).
func (p Pilot) Changes() string {
	paragraphs := make([]string, len(p.History))
	for i, change := range p.History {
		paragraphs[i] = fmt.Sprintf("Changed %s, after some of its runs were seen: %s. Why: %s.", change.Date, change.Change, change.Reason)
	}
	return strings.Join(paragraphs, "\n\n")
}

// PilotByID is the declared pilot id.
func PilotByID(id string) (Pilot, error) {
	for _, p := range Pilots {
		if p.ID == id {
			return p, nil
		}
	}
	return Pilot{}, fmt.Errorf("no pilot %q is declared (results.Pilots)", id)
}

// The token-level ECP pilot's settings, which its notebook runs and its rule reads.
const (
	// TokenSteps are the schedules tried: the PyTorch check had PerceiverAR
	// above the token bigram at 2,000 steps and under it at 8,000.
	TokenShortSteps, TokenLongSteps = 2000, 8000
	// TokensPerStep is the pilot's batch of 8 windows of 256 tokens.
	TokensPerStep = 8 * 256
	// runsPerModel is what the protocol asks of each model: seed 1 at 4
	// learning rates, then seeds 2 to 5 at the best.
	runsPerModel = 4 + 4
)

// ECPTokenModels are the models of claims 1, 2, 3 and 22 at token level.
var ECPTokenModels = []string{"Transformer", "PerceiverAR", "Double Attention", "Compressed Double", "s-Split Double", "ECP", "ECP, rope=every kv=separate", "S2 (G = 2h)"}

// PiSettings are the settings P2 tries, each with the claims it would decide.
var PiSettings = []struct {
	Name, Corpus string
	Claims       []int
}{
	{"wiki tokens", "wiki", []int{7, 17, 19, 20}},
	{"books tokens", "books", []int{23}},
}

// ListOpsPilotSeeds is how many seeds of the local window and of π P3 trains
// to see their spread.
const ListOpsPilotSeeds = 3

// maxListOpsSeeds bounds what a 2-core machine can give ListOps: past it
// claim 8 is decidable only at the paper's scale.
const maxListOpsSeeds = 30

// Pilots is every pilot, declared before it runs.
var Pilots = []Pilot{
	{ID: "P1", Claims: []int{1, 2, 3, 22}, Notebook: "10-pilots", Declared: "2026-12-07",
		Question: "At token level, which schedule lets every model of the ECP family beat its floor, and what does the full design cost?",
		Runs: "The WikiText stand-in in WordPiece tokens (8,192, trained on its train split), windows of n = 256, dim 128 in 2 heads, 3 layers, " +
			"batch 8, warm-up 200 steps then cosine, lr 4e-3, no dropout, seed 1: every model of claims 1, 2 and 22 for 2,000 steps " +
			"(ECP h = 16, 12.5 % of dense attention's pairs; PerceiverAR with 64 latents, a quarter of the window, as notebook 01; S2 with G = 2h), " +
			"every model over the floor at 2,000 also for 8,000. Every model is scored on the last 64 positions of each validation window (PerceiverAR's latents), in bits per token. " +
			"The floor is the interpolated Kneser-Ney token bigram fitted on the train split, the trigram shown beside it. Each model's tokens per second in training.",
		Rule: "\"The same training\" is the same steps, batch and windows for every model: every model reads the same tokens, PerceiverAR's loss covers " +
			"its 64 latents as in the authors' code and the paper (which trains every model on one schedule), and all are scored on the same positions. " +
			"The floor is the token bigram: one token of context (about 4 bytes), as the byte 4-gram is at byte level. The schedule is the shorter of " +
			"2,000 and 8,000 steps at which every model is under the floor (a model under it at 2,000 counts as under it at 8,000: a longer cosine " +
			"schedule does not train worse); a model over it at both makes claims 1-3 and 22 against it decidable only at the paper's scale. The full design's " +
			"time is each model's 8 runs (4 rates, then seeds 2-5) at its measured tokens per second, summed.",
		History: []Change{{"2026-12-07", "every model over the floor at 2,000 steps also trains for 8,000 (the rule unchanged)",
			"declared with PerceiverAR alone at 8,000 steps, the PyTorch check's case; its 2,000-step runs had Double, Compressed and s-Split Double " +
				"over the floor as well (8.33, 9.04 and 8.55 bits/token on their latents, all positions they score), and the rule would have read them " +
				"as unable to learn without letting them train as long as PerceiverAR"}},
		Decide: decideECPTokens},
	{ID: "P2", Claims: []int{7, 17, 19, 20, 23}, Notebook: "10-pilots", Declared: "2026-12-07",
		Question: "Is there a setting this machine can train where dense attention beats the local window, so that π's skips have something to find?",
		Runs: "P1's recipe (WordPiece tokens, n = 256, dim 128, 2 heads, 3 layers, 2,000 steps, lr 4e-3, seed 1) on the WikiText stand-in and on the books " +
			"stand-in (its own WordPiece vocabulary): dense attention, the local window k = 16 and π (k = 16, π = 32), every position scored, in bits per byte. " +
			"π's attention mass on its skip keys per layer is printed.",
		Rule: "A setting is chosen when dense attention beats the local window by at least 0.01 bits per byte (the claims' smallest effect) in its pilot. " +
			"The WikiText setting decides claims 7, 17, 19 and 20, the books setting claim 23; a claim whose setting does not pass reads " +
			"\"decidable only at the paper's scale\" with these numbers.",
		Decide: decidePiSetting},
	{ID: "P3", Claims: []int{8}, Notebook: "10-pilots", Declared: "2026-12-07",
		Question: "How many seeds does ListOps need to see the paper's +3.9 points, with 2,000 validation examples?",
		Runs: "Notebook 05's ListOps recipe (n = 256, dim 64, 4 heads, 2 layers, batch 32, 600 steps, lr 2e-3) with 20,000 examples and every validation example scored (2,000, eval_batches=0; " +
			"notebook 05 scored 256 of 1,000): dense attention seed 1, the local window k = 16 and π (k = 16, π = 32) seeds 1 to 3; valid accuracy in points.",
		Rule: "Dense attention must beat the local window by at least 1 point (the claim's smallest effect), else ListOps gives the skips nothing to find " +
			"and claim 8 is decidable only at the paper's scale. The seeds per side are the smallest number, at least 5, at which a two-sided " +
			"Welch test (α 0.05, power 0.8) at the pilot's spreads of the local window and π detects 3.9 points; over 30, claim 8 is decidable only at the paper's scale.",
		Decide: decideListOpsSeeds},
}

func decideECPTokens(r PilotRecord) (string, error) {
	floor, err := r.Value("kn bigram")
	if err != nil {
		return "", err
	}
	var over []string
	overFloor := map[string]bool{}
	steps := TokenShortSteps
	var hours float64
	for _, m := range ECPTokenModels {
		short, err := r.Value(fmt.Sprintf("%s @%d", m, TokenShortSteps))
		if err != nil {
			return "", err
		}
		if short >= floor {
			long, err := r.Value(fmt.Sprintf("%s @%d", m, TokenLongSteps))
			switch {
			case err != nil:
				over, overFloor[m] = append(over, fmt.Sprintf("%s (%.2f at %d steps, not run longer)", m, short, TokenShortSteps)), true
			case long >= floor:
				over, overFloor[m] = append(over, fmt.Sprintf("%s (%.2f at %d steps)", m, long, TokenLongSteps)), true
			default:
				steps = TokenLongSteps
			}
		}
	}
	var trained int
	for _, m := range ECPTokenModels {
		speed, err := r.Value(m + " tokens/s")
		if err != nil {
			return "", err
		}
		if !overFloor[m] {
			trained++
			hours += float64(runsPerModel*steps*TokensPerStep) / speed / 3600
		}
	}
	if overFloor["ECP"] {
		return fmt.Sprintf("ECP itself stays over the floor (%.2f bits/token): %s: claims 1, 2, 3 and 22 are decidable only at the paper's scale", floor, strings.Join(over, ", ")), nil
	}
	if len(over) > 0 {
		return fmt.Sprintf("over the floor (%.2f bits/token) at every schedule tried: %s: claims 1-3 and 22 against them are decidable only at the paper's scale; "+
			"the other %d models train for %d steps, %.1f hours of training on the pilot's machine for their %d runs each", floor, strings.Join(over, ", "), trained, steps, hours, runsPerModel), nil
	}
	return fmt.Sprintf("every model under the floor (%.2f bits/token) at %d steps: claims 1, 2 and 22 run at token level for %d steps each "+
		"(claim 3 on the books stand-in at the same schedule), %.1f hours of training on the pilot's machine for the 8 models' %d runs each", floor, steps, steps, hours, runsPerModel), nil
}

func decidePiSetting(r PilotRecord) (string, error) {
	var parts []string
	for _, s := range PiSettings {
		dense, err := r.Value(s.Name + " dense")
		if err != nil {
			return "", err
		}
		local, err := r.Value(s.Name + " local")
		if err != nil {
			return "", err
		}
		claims, verb := claimsPhrase(s.Claims), "are"
		if len(s.Claims) == 1 {
			verb = "is"
		}
		if gap := local - dense; gap >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s: dense beats the local window by %.3f bits/byte: %s run there", s.Name, gap, claims))
		} else {
			parts = append(parts, fmt.Sprintf("%s: dense − local window %+.3f bits/byte (needs −0.010 or less): %s %s decidable only at the paper's scale", s.Name, dense-local, claims, verb))
		}
	}
	return strings.Join(parts, "; "), nil
}

func decideListOpsSeeds(r PilotRecord) (string, error) {
	dense, err := r.Value("dense seed 1")
	if err != nil {
		return "", err
	}
	seedValues := func(model string) ([]float64, error) {
		var values []float64
		for seed := 1; seed <= ListOpsPilotSeeds; seed++ {
			v, err := r.Value(fmt.Sprintf("%s seed %d", model, seed))
			if err != nil {
				return nil, err
			}
			values = append(values, v)
		}
		return values, nil
	}
	local, err := seedValues("local")
	if err != nil {
		return "", err
	}
	pi, err := seedValues("π")
	if err != nil {
		return "", err
	}
	localMean, _ := MeanSE(local)
	if gap := dense - localMean; gap < 1 {
		return fmt.Sprintf("dense attention beats the local window by %.1f points (needs 1): claim 8 is decidable only at the paper's scale", gap), nil
	}
	seeds, found := SeedsFor(local, pi, 3.9)
	_, localVar := meanVar(local)
	_, piVar := meanVar(pi)
	spread := fmt.Sprintf("standard deviations %.1f (local) and %.1f (π) points", math.Sqrt(localVar), math.Sqrt(piVar))
	if !found || seeds > maxListOpsSeeds {
		return fmt.Sprintf("at %s, 3.9 points needs more than %d seeds a side: claim 8 is decidable only at the paper's scale", spread, maxListOpsSeeds), nil
	}
	return fmt.Sprintf("dense beats the local window by %.1f points; at %s, %d seeds a side detect 3.9 points: claim 8 runs with 2,000 validation examples and %d seeds",
		dense-localMean, spread, seeds, max(seeds, MinSeeds)), nil
}

// claimsPhrase is "claim 8" or "claims 7, 17".
func claimsPhrase(ids []int) string {
	words := make([]string, len(ids))
	for i, id := range ids {
		words[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "claim " + words[0]
	}
	return "claims " + strings.Join(words, ", ")
}

// verifyPilots recomputes each stored pilot's decision.
func verifyPilots(f File) []string {
	var problems []string
	for _, stored := range f.Pilots {
		where := fmt.Sprintf("%s, pilot %s", f.Notebook, stored.ID)
		p, err := PilotByID(stored.ID)
		if err != nil {
			problems = append(problems, where+": "+err.Error())
			continue
		}
		if p.Notebook != f.Notebook {
			problems = append(problems, fmt.Sprintf("%s: declared for notebook %s", where, p.Notebook))
		}
		decision, err := p.Decide(stored)
		if err != nil {
			problems = append(problems, where+": "+err.Error())
		} else if decision != stored.Decision {
			problems = append(problems, fmt.Sprintf("%s: decision %q, recomputed %q", where, stored.Decision, decision))
		}
	}
	return problems
}

// pilotsSection is EXPERIMENTS.md's account of every pilot: its question,
// rule and, once run, what it measured and decided.
func pilotsSection(files []File) string {
	var b strings.Builder
	b.WriteString("\n## Pilots: how the designs were chosen\n\nA pilot is a short run of a design, one seed, whose outcome picks the data, schedule or seeds of a claim's runs by a rule declared before it runs (`results.Pilots`). Its runs never enter a verdict.\n")
	for _, p := range Pilots {
		fmt.Fprintf(&b, "\n### %s (%s): %s\n\nDeclared %s. **Runs**: %s\n\n**Rule**: %s\n\n", p.ID, claimsPhrase(p.Claims), p.Question, p.Declared, p.Runs, p.Rule)
		if changes := p.Changes(); changes != "" {
			b.WriteString(changes + "\n\n")
		}
		record, found := findPilot(files, p.ID)
		if !found {
			b.WriteString("**Not run yet.**\n")
			continue
		}
		fmt.Fprintf(&b, "**Measured** (%s, %s, code version %s):\n\n| value | measured |\n|---|---|\n", record.Date, record.Machine, record.CodeVersion)
		for _, v := range record.Values {
			fmt.Fprintf(&b, "| %s | %.4g%s |\n", v.Name, v.Value, v.Unit)
		}
		fmt.Fprintf(&b, "\n**Decision**: %s.\n", record.Decision)
	}
	return b.String()
}

func findPilot(files []File, id string) (PilotRecord, bool) {
	for _, f := range files {
		if i := slices.IndexFunc(f.Pilots, func(r PilotRecord) bool { return r.ID == id }); i >= 0 {
			return f.Pilots[i], true
		}
	}
	return PilotRecord{}, false
}

// KeepPilots carries into next the pilots of prev (the same notebook's
// earlier sitting) that next did not run again.
func KeepPilots(prev File, next *File) {
	if prev.Notebook != next.Notebook {
		return
	}
	for _, r := range prev.Pilots {
		if _, again := findPilot([]File{*next}, r.ID); !again {
			next.Pilots = append(next.Pilots, r)
		}
	}
	slices.SortFunc(next.Pilots, func(a, b PilotRecord) int { return strings.Compare(a.ID, b.ID) })
}
