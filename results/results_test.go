package results

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMeanSE(t *testing.T) {
	mean, se := MeanSE([]float64{1, 2, 3})
	if mean != 2 || math.Abs(se-1/math.Sqrt(3)) > 1e-12 {
		t.Errorf("mean %v, se %v; want 2 and 1/√3", mean, se)
	}
}

// TestStudentT checks the t distribution against tabulated values.
func TestStudentT(t *testing.T) {
	for _, c := range []struct{ q, df, want float64 }{{0.975, 10, 2.228139}, {0.975, 1, 12.706205}, {0.975, 30, 2.042272}, {0.95, 5, 2.015048}} {
		if got := studentQuantile(c.q, c.df); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("t quantile %.3f with %g degrees of freedom: %.6f, want %.6f", c.q, c.df, got, c.want)
		}
	}
	if p := 2 * studentTail(2, 10); math.Abs(p-0.073388) > 1e-5 {
		t.Errorf("two-sided p of t = 2 with 10 degrees of freedom: %.6f, want 0.073388", p)
	}
}

// TestWelch is the first example of Welch's test in the literature (two
// samples of 15, unequal variances): t = -2.46, 25.0 degrees of freedom,
// p = 0.021.
func TestWelch(t *testing.T) {
	a := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	b := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	w := WelchTest(a, b)
	if tStat := w.Diff / w.SE; math.Abs(tStat+2.46) > 0.01 || math.Abs(w.DF-25.0) > 0.1 || math.Abs(w.P-0.021) > 0.001 {
		t.Errorf("t %.3f, df %.2f, p %.4f; want -2.46, 25.0, 0.021", tStat, w.DF, w.P)
	}
	if w.CI95[0] >= w.Diff || w.CI95[1] <= w.Diff || w.CI95[1] >= 0 {
		t.Errorf("95 %% interval %v around %.3f should exclude 0 (p < 0.05)", w.CI95, w.Diff)
	}
}

// protocolFile is a results file whose models were tuned alike and beat the
// byte 4-gram model (2.5 bits/byte).
func protocolFile(claims ...Claim) *File {
	grid := []float64{1e-3, 3e-3, 1e-2, 3e-2}
	f := &File{Notebook: "01-ecp-language-modeling", Baselines: map[string]float64{"fourgram_bpc": 2.5}, Claims: claims}
	for _, model := range []string{"ECP", "PerceiverAR"} {
		f.Sweeps = append(f.Sweeps, Sweep{Model: model, Steps: 100, LR: grid, Valid: []float64{2.4, 2.3, 2.2, 2.6}, Chosen: 1e-2})
	}
	return f
}

func claim1(ecp, perceiver []float64) Claim {
	return Claim{ID: 1, Comparisons: []Comparison{{A: "ECP", B: "PerceiverAR", Metric: "latent_bpc", Better: Lower, AValues: ecp, BValues: perceiver}}}
}

// TestProtocolVerdicts plants the cases a reviewer asks about.
func TestProtocolVerdicts(t *testing.T) {
	d, _ := ClaimByID(1)
	cases := []struct {
		name      string
		ecp, perc []float64
		edit      func(f *File)
		want, why string
	}{
		{"one seed against one", []float64{2.0}, []float64{2.3}, nil, NotTested, "1 and 1 values"},
		{"three seeds", []float64{2.0, 2.01, 2.02}, []float64{2.3, 2.31, 2.32}, nil, NotTested, "the protocol needs 5"},
		{"inside the noise", []float64{2.0, 2.2, 2.1, 2.3, 2.05}, []float64{2.1, 2.15, 2.0, 2.25, 2.2}, nil, Inconclusive, ""},
		{"clearly lower", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32}, nil, Reproduces, ""},
		{"clearly higher", []float64{2.30, 2.31, 2.29, 2.30, 2.32}, []float64{2.00, 2.01, 2.02, 2.01, 2.00}, nil, Opposite, ""},
		{"significant but tiny", []float64{2.000, 2.001, 2.000, 2.001, 2.000}, []float64{2.005, 2.006, 2.005, 2.006, 2.005}, nil, Inconclusive, "smallest effect"},
		{"untuned baseline", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32},
			func(f *File) { f.Sweeps = f.Sweeps[:1] }, NotTested, "no learning-rate sweep of PerceiverAR"},
		{"a shorter grid", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32},
			func(f *File) { f.Sweeps[1].LR = f.Sweeps[1].LR[:3] }, NotTested, "other rates"},
		{"one grid, extended past its top for one model", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32},
			func(f *File) { f.Sweeps[1].Add(9e-2, 2.1, false) }, Reproduces, ""},
		{"undertrained", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.60, 2.61, 2.59, 2.60, 2.62}, nil, NotTested, "PerceiverAR undertrained"},
		{"seed 1 only, its sweep's best above the floor", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.60},
			func(f *File) { f.Sweeps[1].Valid[2], f.Sweeps[1].Floor = 2.60, 2.5 }, NotTested, "PerceiverAR undertrained: its best sweep run reached 2.6"},
		{"a floor the sweep beat", []float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32},
			func(f *File) { f.Sweeps[1].Floor = 2.5 }, Reproduces, ""},
	}
	for _, c := range cases {
		f := protocolFile(claim1(c.ecp, c.perc))
		if c.edit != nil {
			c.edit(f)
		}
		got := Judge(d, f.Claims[0], f)
		if got.Verdict != c.want || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: %s (%s); want %s (%s)", c.name, got.Verdict, got.Why, c.want, c.why)
		}
	}
}

// TestPiResultsShowTheirSkips: a π claim without a stored skip mass is not
// tested; one whose skips carried under 1 % of the attention in every layer
// is "skips unused" whatever its comparison says; otherwise the comparison's
// verdict stands, with the masses shown beside it.
func TestPiResultsShowTheirSkips(t *testing.T) {
	d, _ := ClaimByID(7)
	claim := func(mass ...float64) Claim {
		return Claim{ID: 7, SkipMass: mass, Comparisons: []Comparison{{A: "π-Attention", B: "local (RingAttention)", Metric: "valid_bpc", Better: Lower,
			AValues: []float64{2.00, 2.01, 2.02, 2.01, 2.00}, BValues: []float64{2.30, 2.31, 2.29, 2.30, 2.32}}}}
	}
	judged := func(c Claim) Claim {
		f := protocolFile(c)
		for i := range f.Sweeps {
			f.Sweeps[i].Model = []string{"π-Attention", "local (RingAttention)"}[i]
		}
		return Judge(d, c, f)
	}
	if got := judged(claim()); got.Verdict != NotTested || !strings.Contains(got.Why, "skip mass") {
		t.Errorf("no skip mass stored: %s (%s), want not tested", got.Verdict, got.Why)
	}
	if got := judged(claim(0.002, 0.000, 0.006)); got.Verdict != SkipsUnused || !strings.Contains(got.Why, "0.006") {
		t.Errorf("skip mass at most 0.006: %s (%s), want skips unused", got.Verdict, got.Why)
	}
	got := judged(claim(0.002, 0.03))
	if got.Verdict != Reproduces || !strings.Contains(got.Ours, "0.002, 0.030") {
		t.Errorf("skip mass 0.03 in layer 2: %s, ours %q; want reproduces with the masses shown", got.Verdict, got.Ours)
	}
}

// TestEquivalenceCountsAndBounds: sameness must be shown within its margin;
// counts and bounds get their own words.
func TestEquivalenceCountsAndBounds(t *testing.T) {
	same, _ := ClaimByID(19)
	tuned := func(c Claim) *File {
		f := protocolFile(c)
		for i := range f.Sweeps {
			f.Sweeps[i].Model = []string{"π-Attention", "dense"}[i]
		}
		return f
	}
	closeRuns := Claim{ID: 19, SkipMass: []float64{0.004, 0.2}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.200, 2.202, 2.201, 2.199, 2.200}, BValues: []float64{2.201, 2.200, 2.199, 2.202, 2.201}}}}
	if got := Judge(same, closeRuns, tuned(closeRuns)); got.Verdict != Shown {
		t.Errorf("equal within 0.003 bits/byte: %s, want shown", got.Verdict)
	}
	noisy := Claim{ID: 19, SkipMass: []float64{0.05}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.0, 2.2, 2.1, 2.3, 2.05}, BValues: []float64{2.1, 2.15, 2.0, 2.25, 2.2}}}}
	if got := Judge(same, noisy, tuned(noisy)); got.Verdict != NotShown {
		t.Errorf("no difference but noise of 0.1: %s, want not shown (no difference is not sameness)", got.Verdict)
	}
	count, _ := ClaimByID(5)
	for value, want := range map[float64]string{12.5: HoldsByConstruction, 50: DoesNotHold} {
		if got := Judge(count, Claim{ID: 5, Value: &value}, &File{}); got.Verdict != want {
			t.Errorf("claim 5 counted at %g %%: %s, want %s", value, got.Verdict, want)
		}
	}
	// Claim 15: the reach must exceed the bound (the local window's reach) at every depth.
	beyond, _ := ClaimByID(15)
	reach := Claim{ID: 15, Measured: []float64{48, 80, 96}, Bound: []float64{17, 33, 41}}
	if got := Judge(beyond, reach, &File{}); got.Verdict != Holds {
		t.Errorf("beyond the local window at every depth: %s (%s), want holds", got.Verdict, got.Why)
	}
	reach.Measured[2] = 40
	if got := Judge(beyond, reach, &File{}); got.Verdict != Fails || !strings.Contains(got.Why, "L = 3") {
		t.Errorf("short of the local window at L = 3: %s (%s), want fails at L = 3", got.Verdict, got.Why)
	}
	// An upper bound checked from L = 2 (the first declaration of claim 15).
	upper := beyond
	upper.Upper, upper.FromLayer = true, 2
	within := Claim{ID: 15, Measured: []float64{40, 60, 80}, Bound: []float64{16, 64, 112}}
	if got := Judge(upper, within, &File{}); got.Verdict != Holds {
		t.Errorf("within the bound from L = 2: %s (%s), want holds", got.Verdict, got.Why)
	}
	within.Measured[2] = 200
	if got := Judge(upper, within, &File{}); got.Verdict != Fails || !strings.Contains(got.Why, "L = 3") {
		t.Errorf("beyond the bound at L = 3: %s (%s), want fails at L = 3", got.Verdict, got.Why)
	}
}

// TestVerifyCatchesHandEdits: a judged file verifies; a value, a verdict or
// a model edited by hand afterwards does not.
func TestVerifyCatchesHandEdits(t *testing.T) {
	judged := func() []File {
		f := protocolFile(claim1([]float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32}))
		if err := JudgeFile(f); err != nil {
			t.Fatal(err)
		}
		return []File{*f}
	}
	if problems := Verify(judged()); len(problems) != 0 {
		t.Fatalf("a judged file: %v", problems)
	}
	edits := map[string]func(f *File){
		"a value":    func(f *File) { f.Claims[0].Comparisons[0].BValues = []float64{2.0, 2.0, 2.0, 2.0, 2.0} },
		"a verdict":  func(f *File) { f.Claims[0].Verdict = Reproduces; f.Claims[0].Comparisons[0].Verdict = Opposite },
		"a model":    func(f *File) { f.Claims[0].Comparisons[0].B = "Transformer" },
		"a claim id": func(f *File) { f.Claims[0].ID = 99 },
	}
	for name, edit := range edits {
		files := judged()
		edit(&files[0])
		if problems := Verify(files); len(problems) == 0 {
			t.Errorf("%s edited by hand: Verify found nothing", name)
		}
	}
}

// TestReportListsEveryClaim: measured claims carry their verdict and stale
// sections say so; the others say they are not measured and which notebook
// measures them.
func TestReportListsEveryClaim(t *testing.T) {
	f := protocolFile(claim1([]float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32}))
	f.Title = "ECP language modelling"
	if err := JudgeFile(f); err != nil {
		t.Fatal(err)
	}
	report := Report([]File{*f}, StaleSections([]File{*f}, "../notebooks"))
	for _, want := range []string{"**reproduces** (stale)", "0 of 1 notebook sections", "**Stale**: computed before results recorded their code version",
		"| 2 | ECP | better than Double", "not measured yet", "Changed 2026-12-01, after results existed", "p = "} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(report, "\n### Claim "); n != len(Claims) {
		t.Errorf("%d claims in detail, %d declared", n, len(Claims))
	}
}

// TestSweepEdgeIsNamed: a sweep that kept the highest or lowest rate it tried,
// better than its neighbour, says the best rate may lie beyond the grid; an
// interior rate, or a tie at the edge, says nothing.
func TestSweepEdgeIsNamed(t *testing.T) {
	grid := []float64{0.002, 0.004, 0.008, 0.016}
	for _, c := range []struct {
		valid    []float64
		diverged []bool
		chosen   float64
		want     string
	}{
		{[]float64{3.0, 2.9, 2.8, 2.7}, nil, 0.016, "the highest rate swept"},
		{[]float64{2.7, 2.8, 2.9, 3.0}, nil, 0.002, "the lowest rate swept"},
		{[]float64{2.7, 0, 0, 0}, []bool{false, true, true, true}, 0.002, "the lowest rate swept"},
		{[]float64{3.0, 2.7, 2.8, 2.9}, nil, 0.004, ""},
		{[]float64{1, 1, 1, 1}, nil, 0.002, ""},
	} {
		s := Sweep{Model: "m", LR: grid, Valid: c.valid, Diverged: c.diverged, Chosen: c.chosen}
		got := s.edgeNote()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("sweep %v chose %g: note %q, want one containing %q", c.valid, c.chosen, got, c.want)
		}
	}
	f := File{Notebook: "n", Sweeps: []Sweep{{Model: "m", Steps: 10, LR: grid, Valid: []float64{3.0, 2.9, 2.8, 2.7}, Chosen: 0.016}}}
	if report := Report([]File{f}, nil); !strings.Contains(report, "chosen 0.016 (the highest rate swept: the best rate may lie above it).") {
		t.Errorf("report does not name the sweep's edge:\n%s", report)
	}
}

// TestSweepExtendsPastItsEdge: a sweep whose best rate is the highest (or
// lowest) it tried asks for the next rate a grid step beyond, keeps its rates
// in order and its best rate chosen, and asks for nothing once a worse or
// diverged rate lies on each side of the best.
func TestSweepExtendsPastItsEdge(t *testing.T) {
	var s Sweep
	for i, lr := range []float64{2e-3, 4e-3, 8e-3, 1.6e-2} {
		s.Add(lr, 3.0-0.1*float64(i), false)
	}
	if next, ok := s.Beyond(); !ok || math.Abs(next-3.2e-2) > 1e-12 || s.Chosen != 1.6e-2 {
		t.Fatalf("best at the top edge: Beyond() = %g, %v (chosen %g), want 0.032, true", next, ok, s.Chosen)
	}
	s.Add(3.2e-2, 0, true) // diverged: the best rate is bracketed
	if next, ok := s.Beyond(); ok {
		t.Errorf("diverged above the best rate: Beyond() = %g, want none", next)
	}
	if !slices.Equal(s.LR, []float64{2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2}) || !s.DivergedAt(4) || s.Chosen != 1.6e-2 {
		t.Errorf("sweep %+v: want rates in order, the last diverged, 0.016 chosen", s)
	}

	var low Sweep
	for i, lr := range []float64{8e-3, 4e-3, 2e-3, 1.6e-2} { // any order
		low.Add(lr, []float64{2.9, 2.8, 2.7, 3.0}[i], false)
	}
	next, ok := low.Beyond()
	if !ok || math.Abs(next-1e-3) > 1e-12 || low.Chosen != 2e-3 {
		t.Fatalf("best at the bottom edge: Beyond() = %g, %v (chosen %g), want 0.001, true", next, ok, low.Chosen)
	}
	low.Add(next, 2.75, false)
	if _, ok := low.Beyond(); ok || low.Chosen != 2e-3 || low.LR[0] != 1e-3 {
		t.Errorf("worse below the best rate: sweep %+v should be bracketed with 0.002 chosen", low)
	}

	var three Sweep // three rates: room left in their arrays for a fourth
	for _, lr := range []float64{2e-3, 4e-3, 8e-3} {
		three.Add(lr, lr, false)
	}
	kept := three // a copy, as an Experiment keeps its sweeps
	three.Add(1e-3, 1e-3, false)
	if !slices.Equal(kept.LR, []float64{2e-3, 4e-3, 8e-3}) || !slices.Equal(kept.Valid, []float64{2e-3, 4e-3, 8e-3}) {
		t.Errorf("adding to a sweep changed its copy: %+v", kept)
	}
}

// TestStaleness: a file of the current code and cells is current; one of
// other cells is stale and says which part changed.
func TestStaleness(t *testing.T) {
	current, err := CurrentVersion("../notebooks", "00-tour")
	if err != nil {
		t.Fatal(err)
	}
	if why := Staleness(File{Notebook: "00-tour", CodeVersion: current}, "../notebooks"); why != "" {
		t.Errorf("current results: %s", why)
	}
	code, _, _ := strings.Cut(current, ".")
	if why := Staleness(File{Notebook: "00-tour", CodeVersion: code + ".000000000000"}, "../notebooks"); !strings.Contains(why, "the notebook's cells") {
		t.Errorf("other cells: %q", why)
	}

	// Current code, but a sweep that kept its grid's edge and never tried past it: an older protocol's tuning.
	edge := Sweep{Model: "dense", Steps: 600, LR: []float64{1e-3, 2e-3, 4e-3, 8e-3}, Valid: []float64{0.7, 0.68, 0.65, 0.63}, Chosen: 8e-3}
	if why := Staleness(File{Notebook: "00-tour", CodeVersion: current, Sweeps: []Sweep{edge}}, "../notebooks"); !strings.Contains(why, "the learning-rate sweep of dense (600 steps) kept an edge") {
		t.Errorf("an unextended edge: %q", why)
	}
	extended, inside := edge, edge
	extended.Add(1.6e-2, 0.62, false)
	extended.Add(3.2e-2, 0.61, false) // still the edge, but the extensions are spent
	inside.Add(1.6e-2, 0.64, false)
	for _, s := range []Sweep{extended, inside} {
		if why := Staleness(File{Notebook: "00-tour", CodeVersion: current, Sweeps: []Sweep{s}}, "../notebooks"); why != "" {
			t.Errorf("a sweep tuned under the extension rule (%v → %v): %q", s.LR, s.Valid, why)
		}
	}
}

// TestScalingClaims: the exponent of cost ∝ n^b is fitted over every run;
// its 95 % interval under the declared exponent holds, above it fails,
// across it is inconclusive, and too few points are not tested.
func TestScalingClaims(t *testing.T) {
	d := Declared{ID: 99, Kind: KindScaling, Metric: "attention_time_ms", A: "π", Threshold: 1.25}
	lengths := []float64{1024, 1024, 2048, 2048, 4096, 4096}
	runs := func(b float64, jitter float64) []float64 {
		out := make([]float64, len(lengths))
		for i, n := range lengths {
			out[i] = 3 * math.Pow(n/1024, b) * (1 + jitter*float64(i%2*2-1))
		}
		return out
	}
	fit, err := FitExponent(lengths, runs(1, 0))
	if err != nil || math.Abs(fit.B-1) > 1e-12 || fit.CI95[1]-fit.CI95[0] > 1e-12 {
		t.Fatalf("exact linear runs: %+v, %v; want b = 1 with no spread", fit, err)
	}
	for _, c := range []struct {
		b, jitter float64
		want      string
	}{{1.0, 0.02, Holds}, {2.0, 0.02, Fails}, {1.25, 0.02, Inconclusive}, {1.0, 0.6, Inconclusive}} {
		got := Judge(d, Claim{ID: 99, Lengths: lengths, Measured: runs(c.b, c.jitter)}, &File{})
		if got.Verdict != c.want || !strings.Contains(got.Why, "n = 1024, 2048, 4096") {
			t.Errorf("b = %g, jitter %g: %s (%s), want %s", c.b, c.jitter, got.Verdict, got.Why, c.want)
		}
	}
	if got := Judge(d, Claim{ID: 99, Lengths: lengths[:2], Measured: runs(1, 0)[:2]}, &File{}); got.Verdict != NotTested {
		t.Errorf("two runs: %s, want %s", got.Verdict, NotTested)
	}
	if got := Judge(d, Claim{ID: 99, Lengths: []float64{1024, 1024, 1024}, Measured: []float64{1, 2, 3}}, &File{}); got.Verdict != NotTested {
		t.Errorf("one length: %s, want %s", got.Verdict, NotTested)
	}
}

// TestSummarySortsClaimsByOutcome: verdicts of current sections sort into
// what reproduces, what does not, what is mixed and what this scale cannot
// decide; a stale section's claims and claims no file holds are not yet
// measured on the current code.
func TestSummarySortsClaimsByOutcome(t *testing.T) {
	files := []File{
		{Notebook: "current", Claims: []Claim{{ID: 5, Verdict: HoldsByConstruction}, {ID: 12, Verdict: Opposite},
			{ID: 4, Verdict: Mixed}, {ID: 7, Verdict: SkipsUnused}, {ID: 19, Verdict: NotShown}, {ID: 13, Verdict: Inconclusive}}},
		{Notebook: "old", Claims: []Claim{{ID: 1, Verdict: Reproduces}}},
	}
	summary := Summary(files, map[string]string{"old": "older code"})
	ids := func(outcome Outcome) []int {
		var out []int
		for _, d := range summary[outcome] {
			out = append(out, d.ID)
		}
		return out
	}
	for outcome, want := range map[Outcome][]int{OutcomeReproduces: {5}, OutcomeDoesNot: {12, 19}, OutcomePartly: {4}, OutcomeUndecided: {7, 13}} {
		if got := ids(outcome); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", outcome, got, want)
		}
	}
	if notRun := ids(OutcomeNotRun); len(notRun) != len(Claims)-6 || !slices.Contains(notRun, 1) {
		t.Errorf("not yet measured: %v; want every other claim, the stale section's 1 among them", notRun)
	}
	if line := SummaryLine(files, nil); !strings.Contains(line, "reproduce or hold at this scale: 1, 5;") {
		t.Errorf("summary line %q: without stale sections claim 1 reproduces beside 5", line)
	}
}

// TestMixedClaimNamesEachModelsVerdict: a mixed claim's plain words keep
// each part, so that a clear result against one model is not lost in the mix.
func TestMixedClaimNamesEachModelsVerdict(t *testing.T) {
	files := []File{{Notebook: "current", Claims: []Claim{{ID: 4, Verdict: Mixed, Comparisons: []Comparison{
		{B: "Transformer", Verdict: Reproduces}, {B: "local", Verdict: Reproduces}, {B: "PerceiverAR", Verdict: Inconclusive}}}}}}
	text := summaryText(files, nil)
	want := "reproduces against Transformer, local; inconclusive against PerceiverAR"
	if !strings.Contains(text, want) {
		t.Errorf("plain words %q lack %q", text, want)
	}

	// Not tested as a whole for want of one part, with the other part decided.
	files = []File{{Notebook: "current", Claims: []Claim{{ID: 3, Verdict: NotTested, Comparisons: []Comparison{
		{B: "Transformer", Verdict: Opposite}, {B: "PerceiverAR", Verdict: NotTested, Why: "PerceiverAR undertrained"}}}}}}
	if got := Summary(files, nil)[OutcomePartly]; len(got) != 1 || got[0].ID != 3 {
		t.Errorf("claim 3, opposite against one model and not tested against the other, is not mixed: %v", got)
	}
	want = "opposite against Transformer; not tested against PerceiverAR (PerceiverAR undertrained)"
	if text := summaryText(files, nil); !strings.Contains(text, want) {
		t.Errorf("plain words %q lack %q", text, want)
	}
	if row := "| **mixed** — " + want + " |"; !strings.Contains(Report(files, nil), row) {
		t.Errorf("the verdicts table lacks %q", row)
	}
}

// TestSweepFloorIsNamed: a sweep whose best run did not beat its floor says
// so; one that beat it, or has no floor, says nothing.
func TestSweepFloorIsNamed(t *testing.T) {
	s := Sweep{Model: "PerceiverAR", LR: []float64{2e-3, 4e-3}, Valid: []float64{3.48, 3.47}, Chosen: 4e-3, Floor: 2.541}
	if note := s.FloorNote(); !strings.Contains(note, "3.47") || !strings.Contains(note, "2.541") || !s.Undertrained() {
		t.Errorf("best 3.47 above the floor 2.541: note %q, undertrained %v", note, s.Undertrained())
	}
	s.Floor = 4
	if note := s.FloorNote(); note != "" || s.Undertrained() {
		t.Errorf("floor beaten: note %q", note)
	}
	s.Floor = 0
	if note := s.FloorNote(); note != "" || s.Undertrained() {
		t.Errorf("no floor: note %q", note)
	}
}
