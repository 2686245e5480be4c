package results

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestPilotsNameDeclaredClaims(t *testing.T) {
	for _, p := range Pilots {
		if p.Decide == nil || p.Rule == "" || p.Declared == "" {
			t.Errorf("pilot %s lacks its rule, its decision or its date", p.ID)
		}
		for _, id := range p.Claims {
			if _, err := ClaimByID(id); err != nil {
				t.Errorf("pilot %s: %v", p.ID, err)
			}
		}
	}
}

func ecpTokenRecord(perceiverLong float64) PilotRecord {
	r := PilotRecord{ID: "P1"}
	r.Add("kn bigram", 7.8, " bits/token")
	for _, m := range ECPTokenModels {
		bits := 7.5
		if m == "PerceiverAR" {
			bits = 8.3
		}
		r.Add(fmt.Sprintf("%s @%d", m, TokenShortSteps), bits, " bits/token")
		r.Add(m+" tokens/s", TokensPerStep, "")
	}
	if perceiverLong > 0 {
		r.Add(fmt.Sprintf("PerceiverAR @%d", TokenLongSteps), perceiverLong, " bits/token")
	}
	return r
}

func TestECPTokenPilotPicksTheScheduleEveryModelNeeds(t *testing.T) {
	decision, err := decideECPTokens(ecpTokenRecord(7.7))
	if err != nil {
		t.Fatal(err)
	}
	// 8 models × 8 runs × 8,000 steps at one step a second.
	if !strings.Contains(decision, "at 8000 steps") || !strings.Contains(decision, "142.2 hours") {
		t.Errorf("PerceiverAR under the floor only at 8,000 steps: %q", decision)
	}
	decision, _ = decideECPTokens(ecpTokenRecord(7.9))
	if !strings.Contains(decision, "PerceiverAR (7.90 at 8000 steps)") || !strings.Contains(decision, "decidable only at the paper's scale") ||
		!strings.Contains(decision, "the other 7 models train for 2000 steps, 31.1 hours") {
		t.Errorf("PerceiverAR over the floor at both schedules: %q", decision)
	}
	r := ecpTokenRecord(7.7)
	r.Values[slices.IndexFunc(r.Values, func(v PilotValue) bool { return v.Name == "ECP @2000" })].Value = 8
	if decision, _ = decideECPTokens(r); !strings.HasPrefix(decision, "ECP itself stays over the floor") {
		t.Errorf("ECP over the floor: %q", decision)
	}
	if _, err := decideECPTokens(PilotRecord{ID: "P1"}); err == nil {
		t.Error("a record without the floor was decided")
	}
}

func TestPiPilotNeedsDenseAheadOfTheWindow(t *testing.T) {
	r := PilotRecord{ID: "P2"}
	r.Add("wiki tokens dense", 2.30, "")
	r.Add("wiki tokens local", 2.32, "")
	r.Add("books tokens dense", 2.00, "")
	r.Add("books tokens local", 1.995, "")
	decision, err := decidePiSetting(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decision, "wiki tokens: dense beats the local window by 0.020 bits/byte: claims 7, 17, 19, 20 run there") ||
		!strings.Contains(decision, "books tokens: dense − local window +0.005 bits/byte (needs −0.010 or less): claim 23 is decidable only at the paper's scale") {
		t.Errorf("decision %q", decision)
	}
}

func listOpsRecord(dense float64, local, pi []float64) PilotRecord {
	r := PilotRecord{ID: "P3"}
	r.Add("dense seed 1", dense, " points")
	for i := range local {
		r.Add(fmt.Sprintf("local seed %d", i+1), local[i], " points")
		r.Add(fmt.Sprintf("π seed %d", i+1), pi[i], " points")
	}
	return r
}

func TestListOpsPilotAsksTheSeedsThePowerRuleNeeds(t *testing.T) {
	local, pi := []float64{50, 52, 48}, []float64{54, 56, 52}
	decision, err := decideListOpsSeeds(listOpsRecord(60, local, pi))
	if err != nil {
		t.Fatal(err)
	}
	seeds, _ := SeedsFor(local, pi, 3.9)
	if want := fmt.Sprintf("%d seeds a side detect 3.9 points", seeds); seeds < MinSeeds || !strings.Contains(decision, want) {
		t.Errorf("decision %q, want %q (at least %d)", decision, want, MinSeeds)
	}
	decision, _ = decideListOpsSeeds(listOpsRecord(50.5, local, pi))
	if !strings.Contains(decision, "decidable only at the paper's scale") {
		t.Errorf("dense 0.5 points ahead of the window: %q", decision)
	}
	decision, _ = decideListOpsSeeds(listOpsRecord(60, []float64{40, 50, 60}, []float64{45, 60, 50}))
	if !strings.Contains(decision, "more than 30 seeds") {
		t.Errorf("spreads of 10 points: %q", decision)
	}
}

func TestVerifyRecomputesPilotDecisions(t *testing.T) {
	r := listOpsRecord(60, []float64{50, 52, 48}, []float64{54, 56, 52})
	var err error
	if r.Decision, err = decideListOpsSeeds(r); err != nil {
		t.Fatal(err)
	}
	r.Date, r.Machine, r.CodeVersion = "2026-12-07", "vm", "abc"
	f := File{Notebook: "10-pilots", Pilots: []PilotRecord{r}}
	if problems := Verify([]File{f}); len(problems) > 0 {
		t.Fatalf("a stored decision failed: %v", problems)
	}
	f.Pilots[0].Decision = "claim 8 runs with 5 seeds"
	if problems := Verify([]File{f}); len(problems) != 1 || !strings.Contains(problems[0], "pilot P3: decision") {
		t.Errorf("a hand-edited decision passed: %v", problems)
	}
	if report := Report([]File{f}, nil); !strings.Contains(report, "### P3 (claim 8)") || !strings.Contains(report, "| local seed 2 | 52 points |") ||
		!strings.Contains(report, "### P1 (claims 1, 2, 3, 22)") || !strings.Contains(report, "**Not run yet.**") {
		t.Error("EXPERIMENTS.md does not show the pilots, run and not run")
	}
}

func TestKeepPilotsCarriesWhatASittingDidNotRun(t *testing.T) {
	prev := File{Notebook: "10-pilots", Pilots: []PilotRecord{{ID: "P3", Date: "old"}, {ID: "P1", Date: "old"}}}
	next := File{Notebook: "10-pilots", Pilots: []PilotRecord{{ID: "P1", Date: "new"}}}
	KeepPilots(File{Notebook: "05-long-range-tasks", Pilots: []PilotRecord{{ID: "P2"}}}, &next)
	KeepPilots(prev, &next)
	if len(next.Pilots) != 2 || next.Pilots[0].ID != "P1" || next.Pilots[0].Date != "new" || next.Pilots[1].ID != "P3" {
		t.Errorf("pilots after the sitting: %+v", next.Pilots)
	}
}

// A comparison against a model a pilot could not train past its floor reads
// "decidable only at the paper's scale" with the pilot's evidence; the claim
// reads by its other parts, or is decidable only at the paper's scale when
// none is left.
func TestPaperScaleOnlyAgainstAModel(t *testing.T) {
	d, _ := ClaimByID(1)
	d.B = []string{"Transformer", "PerceiverAR"}
	d.PaperScaleOnlyAgainst = map[string]string{"PerceiverAR": "pilot P1: over the floor at 8,000 steps"}
	ecp, dense, perc := []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32}, []float64{2.0}
	f := protocolFile(claim1(ecp, perc))
	f.Sweeps = append(f.Sweeps, Sweep{Model: "Transformer", Steps: f.Sweeps[0].Steps, LR: f.Sweeps[0].LR, Valid: f.Sweeps[0].Valid, Chosen: f.Sweeps[0].Chosen})
	c := f.Claims[0]
	c.Comparisons = append([]Comparison{{A: "ECP", B: "Transformer", Metric: d.Metric, Better: d.Better, AValues: ecp, BValues: dense}}, c.Comparisons...)
	got := Judge(d, c, f, nil)
	if got.Verdict != Reproduces || !strings.Contains(got.Why, "decidable only at the paper's scale against PerceiverAR (pilot P1: over the floor at 8,000 steps)") {
		t.Errorf("one part decided, one beyond this machine: %s (%s)", got.Verdict, got.Why)
	}
	d.PaperScaleOnlyAgainst["Transformer"] = "pilot P9"
	if got = Judge(d, c, f, nil); got.Verdict != PaperScaleOnly {
		t.Errorf("every part beyond this machine: %s (%s)", got.Verdict, got.Why)
	}
}
