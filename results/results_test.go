package results

import (
	"fmt"
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
// floor (2.5).
func protocolFile(claims ...Claim) *File {
	grid := []float64{1e-3, 3e-3, 1e-2, 3e-2}
	f := &File{Notebook: "01-ecp-language-modeling", Baselines: map[string]float64{"kn_bigram_bpt": 2.5}, Claims: claims}
	for _, model := range []string{"ECP", "PerceiverAR"} {
		f.Sweeps = append(f.Sweeps, Sweep{Model: model, Steps: 100, LR: grid, Valid: []float64{2.4, 2.3, 2.2, 2.6}, Chosen: 1e-2})
	}
	return f
}

func claim1(ecp, perceiver []float64) Claim {
	return Claim{ID: 1, Comparisons: []Comparison{{A: "ECP", B: "PerceiverAR", Metric: "latent_bpt", Better: Lower, AValues: ecp, BValues: perceiver}}}
}

// TestProtocolVerdicts plants the cases a reviewer asks about.
func TestProtocolVerdicts(t *testing.T) {
	d, _ := ClaimByID(1)
	d.PaperScaleOnlyAgainst = nil // the statistics, whatever a pilot found of PerceiverAR
	cases := []struct {
		name      string
		ecp, perc []float64
		edit      func(f *File)
		want, why string
	}{
		{"one seed against one", []float64{2.0}, []float64{2.3}, nil, NotTested, "1 and 1 values"},
		{"three seeds", []float64{2.0, 2.01, 2.02}, []float64{2.3, 2.31, 2.32}, nil, NotTested, "the protocol needs 5"},
		{"inside the noise", []float64{2.0, 2.2, 2.1, 2.3, 2.05}, []float64{2.1, 2.15, 2.0, 2.25, 2.2}, nil, Underpowered, "values per side would"},
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
		got := Judge(d, f.Claims[0], f, nil)
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
	d.PaperScaleOnly = "" // the mechanics, whatever pilot P2 found of the setting
	claim := func(mass ...float64) Claim {
		return Claim{ID: 7, SkipMass: mass, Comparisons: []Comparison{{A: "π-Attention", B: "local (RingAttention)", Metric: "valid_bpc", Better: Lower,
			AValues: []float64{2.00, 2.01, 2.02, 2.01, 2.00}, BValues: []float64{2.30, 2.31, 2.29, 2.30, 2.32}}}}
	}
	judged := func(c Claim) Claim {
		f := protocolFile(c)
		for i := range f.Sweeps {
			f.Sweeps[i].Model = []string{"π-Attention", "local (RingAttention)"}[i]
		}
		return Judge(d, c, f, wikiControlFiles(-0.1))
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
	same.PaperScaleOnly = "" // the statistics, whatever pilot P2 found of the setting
	tuned := func(c Claim) *File {
		f := protocolFile(c)
		for i := range f.Sweeps {
			f.Sweeps[i].Model = []string{"π-Attention", "dense"}[i]
		}
		return f
	}
	closeRuns := Claim{ID: 19, SkipMass: []float64{0.004, 0.2}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.200, 2.202, 2.201, 2.199, 2.200}, BValues: []float64{2.201, 2.200, 2.199, 2.202, 2.201}}}}
	if got := Judge(same, closeRuns, tuned(closeRuns), nil); got.Verdict != Shown {
		t.Errorf("equal within 0.003 bits/byte: %s, want shown", got.Verdict)
	}
	noisy := Claim{ID: 19, SkipMass: []float64{0.05}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.0, 2.2, 2.1, 2.3, 2.05}, BValues: []float64{2.1, 2.15, 2.0, 2.25, 2.2}}}}
	if got := Judge(same, noisy, tuned(noisy), nil); got.Verdict != Underpowered {
		t.Errorf("no difference but noise of 0.1: %s, want underpowered (no difference is not closeness)", got.Verdict)
	}
	// Non-inferiority is one-sided: a π better than dense passes it, one clearly worse by more than the margin fails it.
	better := Claim{ID: 19, SkipMass: []float64{0.05}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.125, 2.130, 2.120, 2.128, 2.122}, BValues: []float64{2.200, 2.205, 2.195, 2.201, 2.199}}}}
	if got := Judge(same, better, tuned(better), nil); got.Verdict != Shown {
		t.Errorf("π 0.075 better than dense: %s, want shown (being better passes non-inferiority)", got.Verdict)
	}
	worse := Claim{ID: 19, SkipMass: []float64{0.05}, Comparisons: []Comparison{{A: "π-Attention", B: "dense", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.275, 2.280, 2.270, 2.278, 2.272}, BValues: []float64{2.200, 2.205, 2.195, 2.201, 2.199}}}}
	if got := Judge(same, worse, tuned(worse), nil); got.Verdict != Inferior {
		t.Errorf("π 0.075 worse than dense: %s, want %s", got.Verdict, Inferior)
	}
	count, _ := ClaimByID(5)
	for value, want := range map[float64]string{12.5: HoldsByConstruction, 50: DoesNotHold} {
		if got := Judge(count, Claim{ID: 5, Value: &value}, &File{}, nil); got.Verdict != want {
			t.Errorf("claim 5 counted at %g %%: %s, want %s", value, got.Verdict, want)
		}
	}
	// Claim 15: the reach must exceed the bound (the local window's reach) at every depth.
	beyond, _ := ClaimByID(15)
	reach := Claim{ID: 15, Measured: []float64{48, 80, 96}, Bound: []float64{17, 33, 41}}
	if got := Judge(beyond, reach, &File{}, nil); got.Verdict != Holds {
		t.Errorf("beyond the local window at every depth: %s (%s), want holds", got.Verdict, got.Why)
	}
	reach.Measured[2] = 40
	if got := Judge(beyond, reach, &File{}, nil); got.Verdict != Fails || !strings.Contains(got.Why, "L = 3") {
		t.Errorf("short of the local window at L = 3: %s (%s), want fails at L = 3", got.Verdict, got.Why)
	}
	// An upper bound checked from L = 2 (the first declaration of claim 15).
	upper := beyond
	upper.Upper, upper.FromLayer = true, 2
	within := Claim{ID: 15, Measured: []float64{40, 60, 80}, Bound: []float64{16, 64, 112}}
	if got := Judge(upper, within, &File{}, nil); got.Verdict != Holds {
		t.Errorf("within the bound from L = 2: %s (%s), want holds", got.Verdict, got.Why)
	}
	within.Measured[2] = 200
	if got := Judge(upper, within, &File{}, nil); got.Verdict != Fails || !strings.Contains(got.Why, "L = 3") {
		t.Errorf("beyond the bound at L = 3: %s (%s), want fails at L = 3", got.Verdict, got.Why)
	}
}

// TestVerifyCatchesHandEdits: a judged file verifies; a value, a verdict or
// a model edited by hand afterwards does not.
func TestVerifyCatchesHandEdits(t *testing.T) {
	judged := func() []File {
		f := protocolFile(claim1([]float64{2.00, 2.01, 2.02, 2.01, 2.00}, []float64{2.30, 2.31, 2.29, 2.30, 2.32}))
		if err := JudgeFile(f, nil); err != nil {
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
	if err := JudgeFile(f, nil); err != nil {
		t.Fatal(err)
	}
	report := Report([]File{*f}, StaleSections([]File{*f}, "../notebooks"))
	for _, want := range []string{"**decidable only at the paper's scale** — pilot P1", "(stale) |", "0 of 1 notebook sections", "**Stale**: computed before results recorded their code version",
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

// TestScalingClaims: the exponent of cost ∝ n^b is fitted over the median of
// each length's runs; its 95 % interval under the declared exponent holds,
// above it fails, across it is inconclusive; one outlier among a length's
// runs does not move it; too few runs or lengths are not tested.
func TestScalingClaims(t *testing.T) {
	d := Declared{ID: 99, Kind: KindScaling, Metric: "attention_time_ms", A: "π", Threshold: 1.25}
	var lengths []float64
	for _, n := range []float64{512, 1024, 2048, 4096, 8192} {
		lengths = append(lengths, n, n, n)
	}
	runs := func(b float64, jitter float64) []float64 {
		out := make([]float64, len(lengths))
		for i, n := range lengths {
			out[i] = 3 * math.Pow(n/1024, b) * (1 + jitter*float64(i/3%2*2-1)) * (1 + 0.001*float64(i%3))
		}
		return out
	}
	fit, err := FitExponent([]float64{1024, 2048, 4096}, []float64{3, 6, 12})
	if err != nil || math.Abs(fit.B-1) > 1e-12 || fit.CI95[1]-fit.CI95[0] > 1e-12 {
		t.Fatalf("exact linear points: %+v, %v; want b = 1 with no spread", fit, err)
	}
	for _, c := range []struct {
		b, jitter float64
		want      string
	}{{1.0, 0.02, Holds}, {2.0, 0.02, Fails}, {1.25, 0.02, Inconclusive}, {1.0, 0.6, Inconclusive}} {
		got := Judge(d, Claim{ID: 99, Lengths: lengths, Measured: runs(c.b, c.jitter)}, &File{}, nil)
		if got.Verdict != c.want || !strings.Contains(got.Why, "n = 512, 1024, 2048, 4096, 8192") {
			t.Errorf("b = %g, jitter %g: %s (%s), want %s", c.b, c.jitter, got.Verdict, got.Why, c.want)
		}
	}
	outlier := runs(1.0, 0.02)
	outlier[13] *= 7 // one run at n = 8192 seven times slower than its two neighbours
	if got := Judge(d, Claim{ID: 99, Lengths: lengths, Measured: outlier}, &File{}, nil); got.Verdict != Holds {
		t.Errorf("one outlier at n = 8192: %s (%s), want holds (the median ignores it)", got.Verdict, got.Why)
	}
	if got := Judge(d, Claim{ID: 99, Lengths: lengths[:8], Measured: runs(1, 0)[:8]}, &File{}, nil); got.Verdict != NotTested {
		t.Errorf("two runs at n = 2048: %s, want %s", got.Verdict, NotTested)
	}
	if got := Judge(d, Claim{ID: 99, Lengths: []float64{1024, 1024, 1024}, Measured: []float64{1, 2, 3}}, &File{}, nil); got.Verdict != NotTested {
		t.Errorf("one length: %s, want %s", got.Verdict, NotTested)
	}
}

// TestSummaryKeepsTheGroupsApart: what holds by construction or by the
// task's design is never counted as reproduced, ecpi's own questions stand
// apart, what this scale cannot decide says why, and a stale section's claims
// are not yet measured on the current code.
func TestSummaryKeepsTheGroupsApart(t *testing.T) {
	files := []File{
		{Notebook: "current", Claims: []Claim{{ID: 5, Verdict: HoldsByConstruction}, {ID: 9, Verdict: Reproduces}, {ID: 18, Verdict: Reproduces},
			{ID: 19, Verdict: Shown}, {ID: 14, Verdict: DoesNotHold}, {ID: 22, Verdict: Opposite}, {ID: 7, Verdict: NoSignal},
			{ID: 8, Verdict: Underpowered}, {ID: 12, Verdict: PaperScaleOnly}, {ID: 1, Verdict: NotTested, Why: "PerceiverAR undertrained"}}},
		{Notebook: "old", Claims: []Claim{{ID: 4, Verdict: Reproduces}}},
	}
	summary := Summary(files, map[string]string{"old": "older code"})
	ids := func(outcome Outcome) []int {
		var out []int
		for _, s := range summary {
			if s.Outcome == outcome {
				out = append(out, s.ID)
			}
		}
		return out
	}
	for outcome, want := range map[Outcome][]int{OutcomeFor: {4, 19}, OutcomeAgainst: {14}, OutcomeByDesign: {5, 9, 18},
		OutcomeUndecided: {1, 7, 8, 12}, OutcomeOwn: {22}} {
		if got := ids(outcome); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", outcome, got, want)
		}
	}
	if notRun := ids(OutcomeNotRun); len(notRun) != len(Claims)-11 || slices.Contains(notRun, 4) {
		t.Errorf("not measured yet: %v; want every claim no file holds", notRun)
	}
	line := SummaryLine(files, map[string]string{"old": "older code"})
	for _, want := range []string{"Hold by construction or by the task's design, not reproductions: 5, 9, 18.",
		"Cannot be decided at this scale: 1 (a model under its floor); 7 (no signal beyond the window); 8 (underpowered); 12 (decidable only at the paper's scale).",
		"Questions of ecpi's own, not the papers': 22 (opposite).", "Decided for the papers by trained models or measurements: 19.",
		"On older code (stale until their notebooks run again) — Decided for the papers by trained models or measurements: 4."} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line %q lacks %q", line, want)
		}
	}
	if !strings.Contains(Report(files, nil), "## Verdicts: ecpi's own questions") {
		t.Error("EXPERIMENTS.md has no heading of its own for ecpi's questions")
	}
}

// TestUntestedPartDoesNotMix: a claim reads by its decided parts and names
// the others; it is mixed only when decided parts disagree.
func TestUntestedPartDoesNotMix(t *testing.T) {
	d, _ := ClaimByID(2)
	d.PaperScaleOnlyAgainst = nil // the reading by parts, whatever pilot P1 found of the models
	c := Claim{ID: 2}
	for _, b := range d.B {
		c.Comparisons = append(c.Comparisons, Comparison{A: "ECP", B: b, Metric: "latent_bpt", Better: Lower,
			AValues: []float64{2.00, 2.01, 2.02, 2.01, 2.00}, BValues: []float64{2.30, 2.31, 2.29, 2.30, 2.32}})
	}
	f := protocolFile(c)
	f.Sweeps = nil
	for _, model := range append([]string{"ECP"}, d.B...) {
		f.Sweeps = append(f.Sweeps, Sweep{Model: model, Steps: 100, LR: []float64{1e-3, 3e-3, 1e-2, 3e-2}, Valid: []float64{2.4, 2.3, 2.2, 2.6}, Chosen: 1e-2})
	}
	f.Sweeps[3].Valid[2], f.Sweeps[3].Floor = 2.7, 2.5 // s-Split Double did not beat its floor: not tested
	c.Comparisons[2].BValues = []float64{2.7}
	got := Judge(d, c, f, nil)
	if got.Verdict != Reproduces || !strings.Contains(got.Why, "in part: not tested against s-Split Double") {
		t.Errorf("two parts reproduce, one not tested: %s (%s), want reproduces in part, naming s-Split Double", got.Verdict, got.Why)
	}
	c.Comparisons[1].AValues, c.Comparisons[1].BValues = c.Comparisons[1].BValues, c.Comparisons[1].AValues
	if got := Judge(d, c, f, nil); got.Verdict != Mixed {
		t.Errorf("one part reproduces, one opposite, one not tested: %s, want mixed", got.Verdict)
	}
}

// TestUnderpoweredSaysHowManySeeds: an inconclusive comparison whose seeds
// could not have seen the paper's effect reads underpowered with the seeds
// per side that would; one that could have reads inconclusive.
func TestUnderpoweredSaysHowManySeeds(t *testing.T) {
	d, _ := ClaimByID(8) // the paper's effect: +3.9 points
	judge := func(pi, local []float64) Comparison {
		c := Claim{ID: 8, SkipMass: []float64{0.2}, Comparisons: []Comparison{{A: d.A, B: d.B[0], Metric: d.Metric, Better: Higher, AValues: pi, BValues: local}}}
		f := protocolFile(c)
		for i := range f.Sweeps {
			f.Sweeps[i].Model = []string{d.A, d.B[0]}[i]
		}
		return Judge(d, c, f, nil).Comparisons[0]
	}
	noisy := judge([]float64{40, 52, 45, 38, 50}, []float64{44, 39, 51, 46, 41})
	if noisy.Verdict != Underpowered || noisy.SeedsNeeded <= 5 || !strings.Contains(noisy.Why, fmt.Sprintf("%d values per side would detect the paper's effect", noisy.SeedsNeeded)) {
		t.Errorf("spread of 5 points against +3.9: %s (%s), seeds %d; want underpowered with the seeds that would do", noisy.Verdict, noisy.Why, noisy.SeedsNeeded)
	}
	more := make([]float64, 0, 2*noisy.SeedsNeeded)
	for len(more) < noisy.SeedsNeeded {
		more = append(more, 40, 52, 45, 38, 50)
	}
	if w := WelchTest(more[:noisy.SeedsNeeded], more[:noisy.SeedsNeeded]); Detectable(Welch{SE: w.SE, DF: w.DF}) > 3.9*1.2 {
		t.Errorf("at %d seeds a side the detectable difference is still %.2f", noisy.SeedsNeeded, Detectable(w))
	}
	tight := judge([]float64{45.0, 45.5, 44.5, 45.2, 44.8}, []float64{45.1, 44.6, 45.4, 44.9, 45.0})
	if tight.Verdict != Inconclusive || tight.Detectable > 3.9 {
		t.Errorf("spread of half a point, no difference: %s, detects %.2f; want inconclusive (it could have seen +3.9)", tight.Verdict, tight.Detectable)
	}
}

// wikiControlFiles is notebook 04's dense and local runs, dense minus local
// apart, as the positive control of the π claims on the WikiText stand-in.
func wikiControlFiles(denseMinusLocal float64) []File {
	f := File{Notebook: "04-pi-attention-language-modeling"}
	for i, jitter := range []float64{0, 0.004, -0.003, 0.002, -0.002} {
		f.Runs = append(f.Runs, Run{Experiment: "lm-wiki", Model: "local (RingAttention)", Seed: int64(i + 1), Metric: "valid_bpc", Value: 2.3 + jitter},
			Run{Experiment: "lm-wiki", Model: "dense", Seed: int64(i + 1), Metric: "valid_bpc", Value: 2.3 + denseMinusLocal - jitter})
	}
	return []File{f}
}

// TestPositiveControl: a π claim against the local window is judged only
// where dense attention beats the local window by the smallest effect.
func TestPositiveControl(t *testing.T) {
	d, _ := ClaimByID(7)
	d.PaperScaleOnly = "" // the mechanics, whatever pilot P2 found of the setting
	c := Claim{ID: 7, SkipMass: []float64{0.05}, Comparisons: []Comparison{{A: "π-Attention", B: "local (RingAttention)", Metric: "valid_bpc", Better: Lower,
		AValues: []float64{2.00, 2.01, 2.02, 2.01, 2.00}, BValues: []float64{2.30, 2.31, 2.29, 2.30, 2.32}}}}
	f := protocolFile(c)
	for i := range f.Sweeps {
		f.Sweeps[i].Model = []string{"π-Attention", "local (RingAttention)"}[i]
	}
	if got := Judge(d, c, f, wikiControlFiles(+0.078)); got.Verdict != NoSignal || got.Control == nil || !strings.Contains(got.Why, "not about π") {
		t.Errorf("local 0.078 better than dense: %s (%s), want %s", got.Verdict, got.Why, NoSignal)
	}
	if got := Judge(d, c, f, wikiControlFiles(-0.005)); got.Verdict != NoSignal {
		t.Errorf("dense better by 0.005, under the smallest effect: %s, want %s", got.Verdict, NoSignal)
	}
	if got := Judge(d, c, f, wikiControlFiles(-0.1)); got.Verdict != Reproduces {
		t.Errorf("dense 0.1 better than local: %s (%s), want the comparison's own verdict", got.Verdict, got.Why)
	}
	if got := Judge(d, c, f, nil); got.Verdict != NotTested || !strings.Contains(got.Why, "no positive control") {
		t.Errorf("control's results missing: %s (%s), want not tested", got.Verdict, got.Why)
	}
}

// TestPoolKeepsEveryRepeat: a second sitting of the same code on the same
// machine adds its repeats to the first's; another machine's do not mix.
func TestPoolKeepsEveryRepeat(t *testing.T) {
	sitting := func(machine string, a, b float64) File {
		return File{Notebook: "06-efficiency", CodeVersion: "v.c", Machine: machine, Mode: "full", Claims: []Claim{
			{ID: 12, Kind: KindCost, Comparisons: []Comparison{{A: "π", B: "local", AValues: []float64{a}, BValues: []float64{b}}}},
			{ID: 26, Kind: KindScaling, Lengths: []float64{1024}, Measured: []float64{a}},
			{ID: 5, Kind: KindCount}}}
	}
	next := sitting("vm", 3, 4)
	if !Pool(sitting("vm", 1, 2), &next) || next.Sittings != 2 {
		t.Fatalf("same code and machine not pooled (sittings %d)", next.Sittings)
	}
	if got := next.Claims[0].Comparisons[0]; !slices.Equal(got.AValues, []float64{1, 3}) || !slices.Equal(got.BValues, []float64{2, 4}) {
		t.Errorf("pooled comparison %v / %v, want [1 3] / [2 4]", got.AValues, got.BValues)
	}
	if got := next.Claims[1]; !slices.Equal(got.Measured, []float64{1, 3}) || !slices.Equal(got.Lengths, []float64{1024, 1024}) {
		t.Errorf("pooled scaling runs %v at %v", got.Measured, got.Lengths)
	}
	other := sitting("laptop", 3, 4)
	if Pool(sitting("vm", 1, 2), &other) || len(other.Claims[0].Comparisons[0].AValues) != 1 {
		t.Error("another machine's timings were pooled")
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

// TestRedeclaredClaimIsRetired: results that answer an older declaration of
// a claim leave the file with a note naming the dated change; the same
// mismatch with no change dated since is an error, never a silent drop.
func TestRedeclaredClaimIsRetired(t *testing.T) {
	older := func(date string) *File {
		c := Claim{ID: 22, Comparisons: []Comparison{{A: "ECP", B: "S2 (G = 2h)", Metric: "latent_bpc", Better: Lower,
			AValues: []float64{2.0, 2.1}, BValues: []float64{2.2, 2.3}}}}
		return &File{Notebook: "01-ecp-language-modeling", Date: date, Claims: []Claim{c}}
	}
	f := older("2026-12-06")
	if err := JudgeFile(f, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.Claims) != 0 || len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "Claim 22 was retired") || !strings.Contains(f.Notes[0], "2026-12-08") {
		t.Errorf("claims %v, notes %q: want claim 22 retired with a note dated 2026-12-08", f.Claims, f.Notes)
	}
	if problems := Verify([]File{*f}); len(problems) != 0 {
		t.Errorf("a file with its older claim retired: %v", problems)
	}
	undated := older("2026-12-09")
	if err := JudgeFile(undated, nil); err == nil || !strings.Contains(err.Error(), "no change in the claim's history") {
		t.Errorf("a mismatch no dated change explains: %v; want an error", err)
	}
	if len(undated.Claims) != 1 || undated.Claims[0].ID != 22 || len(undated.Notes) != 0 {
		t.Errorf("after the error: claims %v, notes %q; want the file as it was", undated.Claims, undated.Notes)
	}
}

// TestPaperScaleOnlyNeedsNoRuns: a claim nothing on this machine could
// decide reads so, with its evidence, when a notebook measured nothing for it.
func TestPaperScaleOnlyNeedsNoRuns(t *testing.T) {
	d, _ := ClaimByID(23)
	got := Judge(d, Claim{ID: 23}, &File{Notebook: d.Notebook}, nil)
	if got.Verdict != PaperScaleOnly || got.Why != d.PaperScaleOnly {
		t.Errorf("claim 23 without runs: %s (%s); want %s with its pilot's evidence", got.Verdict, got.Why, PaperScaleOnly)
	}
	d.PaperScaleOnly = ""
	if got := Judge(d, Claim{ID: 23}, &File{Notebook: d.Notebook}, nil); got.Verdict != NotTested {
		t.Errorf("a claim this machine could decide, without runs: %s; want %s", got.Verdict, NotTested)
	}
}
