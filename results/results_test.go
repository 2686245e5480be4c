package results

import (
	"math"
	"strings"
	"testing"
)

func TestMeanSE(t *testing.T) {
	mean, se := MeanSE([]float64{1, 2, 3})
	if mean != 2 || math.Abs(se-1/math.Sqrt(3)) > 1e-12 {
		t.Errorf("mean %v, se %v; want 2 and 1/√3", mean, se)
	}
	if _, se := MeanSE([]float64{5}); se != 0 {
		t.Errorf("one value: se %v, want 0", se)
	}
}

// TestVerdicts: the claim's direction, two standard errors, or inconclusive.
func TestVerdicts(t *testing.T) {
	cases := []struct {
		a, b          []float64
		lowerIsBetter bool
		want          string
	}{
		{[]float64{2.0, 2.1, 2.2}, []float64{3.0, 3.1, 3.2}, true, Reproduces},   // a's loss clearly lower
		{[]float64{2.0, 2.1, 2.2}, []float64{3.0, 3.1, 3.2}, false, Opposite},    // claimed higher, is lower
		{[]float64{2.0, 2.5, 3.0}, []float64{2.2, 2.6, 3.1}, true, Inconclusive}, // within the noise
		{[]float64{0.9, 0.91, 0.92}, []float64{0.5, 0.52, 0.51}, false, Reproduces},
	}
	for _, c := range cases {
		if _, _, got := Difference(c.a, c.b, c.lowerIsBetter); got != c.want {
			t.Errorf("%v vs %v (lower better %v): %s, want %s", c.a, c.b, c.lowerIsBetter, got, c.want)
		}
	}
}

// TestReportListsEveryClaim: measured claims carry their verdict, the others
// say they are not measured and which notebook measures them.
func TestReportListsEveryClaim(t *testing.T) {
	dir := t.TempDir()
	f := File{Notebook: "01-ecp-language-modeling", Title: "ECP language modelling", Mode: "full",
		Claims: []Claim{{ID: 1, Paper: ECPPaper, PaperSay: "17.82 vs 18.xx", Ours: "-0.12 ± 0.01 nats", Verdict: Reproduces}},
		Tables: []Table{{Caption: "results", Header: []string{"model", "bpc"}, Rows: [][]string{{"ecp", "2.5"}}}}}
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	files, err := Load(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("load: %v, %d files", err, len(files))
	}
	report := Report(files)
	for _, want := range []string{"| 1 | ECP | lower perplexity than PerceiverAR", "**reproduces**", "| 2 | ECP |", "not measured yet", "| ecp | 2.5 |", "02-ecp-long-books (run it in full mode)"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Count(report, "\n| ") < len(Listing)+2 {
		t.Errorf("report lists fewer than %d claims", len(Listing))
	}
}

func TestStdDev(t *testing.T) {
	if got := StdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9}); math.Abs(got-2.138089935) > 1e-6 {
		t.Errorf("StdDev = %v, want 2.138 (sample standard deviation)", got)
	}
	if got := StdDev([]float64{3}); got != 0 {
		t.Errorf("StdDev of one value = %v, want 0", got)
	}
	if _, se := MeanSE([]float64{1, 3}); math.Abs(se-1) > 1e-12 {
		t.Errorf("standard error of {1, 3} = %v, want 1", se)
	}
}
