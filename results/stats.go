package results

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The tests, intervals and power below take Student's t distribution from
// gonum (stat/distuv), the well-kept library a reviewer can check them
// against; only the arithmetic of Welch's test and of the power rule is ours.

// Significance is the level of every test: two-sided p < 0.05, 95 %
// confidence intervals; the equivalence test's two one-sided tests and the
// non-inferiority test each at 0.05 one-sided.
const Significance = 0.05

// Power is the chance a comparison's design must have of seeing an effect of
// the size it is judged against (the paper's, or the smallest that counts)
// for an inconclusive result to say anything about that effect.
const Power = 0.8

// Welch is Welch's two-sample t-test of mean(a) - mean(b), which does not
// assume the two sides have the same variance (two models' seed-to-seed
// noise seldom is).
type Welch struct {
	Diff float64    `json:"diff"` // mean(a) - mean(b)
	SE   float64    `json:"se"`   // its standard error
	DF   float64    `json:"df"`   // Welch–Satterthwaite degrees of freedom
	P    float64    `json:"p"`    // two-sided p-value of "no difference"
	CI95 [2]float64 `json:"ci95"` // 95 % confidence interval of the difference
}

// WelchTest compares a with b. Each side needs two values at least (the
// caller says "not tested" otherwise); two sides without any spread give p 0
// when their means differ and 1 when they do not.
func WelchTest(a, b []float64) Welch {
	meanA, varA := meanVar(a)
	meanB, varB := meanVar(b)
	termA, termB := varA/float64(len(a)), varB/float64(len(b))
	w := Welch{Diff: meanA - meanB, SE: math.Sqrt(termA + termB)}
	if w.SE == 0 {
		w.DF, w.P = math.Inf(1), 1
		if w.Diff != 0 {
			w.P = 0
		}
		w.CI95 = [2]float64{w.Diff, w.Diff}
		return w
	}
	w.DF = welchDF(termA, termB, len(a), len(b))
	w.P = 2 * studentTail(math.Abs(w.Diff)/w.SE, w.DF)
	half := studentQuantile(1-Significance/2, w.DF) * w.SE
	w.CI95 = [2]float64{w.Diff - half, w.Diff + half}
	return w
}

// welchDF is the Welch–Satterthwaite degrees of freedom of two variance
// terms (variance over count) from samples of countA and countB.
func welchDF(termA, termB float64, countA, countB int) float64 {
	return (termA + termB) * (termA + termB) / (termA*termA/float64(countA-1) + termB*termB/float64(countB-1))
}

// EquivalenceP is the p-value of the two one-sided tests (TOST) that the
// true difference lies inside (-margin, margin): the larger of the two
// one-sided p-values. Below Significance, the two are shown equivalent.
func EquivalenceP(w Welch, margin float64) float64 {
	if w.SE == 0 {
		if math.Abs(w.Diff) < margin {
			return 0
		}
		return 1
	}
	lower := studentTail((w.Diff+margin)/w.SE, w.DF) // H0: diff <= -margin
	upper := studentTail((margin-w.Diff)/w.SE, w.DF) // H0: diff >= margin
	return max(lower, upper)
}

// NonInferiorityP is the one-sided p-value that A is worse than B by the
// margin or more (better says which way is better): below Significance, A is
// shown not worse than B by as much as the margin. Being better passes.
func NonInferiorityP(w Welch, margin float64, better string) float64 {
	return oneSidedP(worseBy(w.Diff, better)-margin, w)
}

// InferiorityP is the one-sided p-value that A is worse than B by no more
// than the margin: below Significance, A is shown worse by more than it.
func InferiorityP(w Welch, margin float64, better string) float64 {
	return oneSidedP(margin-worseBy(w.Diff, better), w)
}

// worseBy is how much worse A is than B, whichever way is better.
func worseBy(diff float64, better string) float64 {
	if better == Lower {
		return diff
	}
	return -diff
}

// oneSidedP is P(T <= shift/SE), the p-value of a one-sided test whose null
// hypothesis lies at shift = 0 and above.
func oneSidedP(shift float64, w Welch) float64 {
	if w.SE == 0 {
		if shift < 0 {
			return 0
		}
		return 1
	}
	return 1 - studentTail(shift/w.SE, w.DF)
}

// Detectable is the smallest true difference w's design sees with chance
// Power in a two-sided test at Significance: (t₁₋α/₂ + t_power) standard
// errors, at the observed spreads and Welch's degrees of freedom.
func Detectable(w Welch) float64 {
	if w.SE == 0 || math.IsInf(w.DF, 1) {
		return 0
	}
	return (studentQuantile(1-Significance/2, w.DF) + studentQuantile(Power, w.DF)) * w.SE
}

// maxSeeds bounds SeedsFor's search: past it the answer is "more than".
const maxSeeds = 10000

// SeedsFor is the number of values per side that would make an effect of that
// size detectable (Detectable at most effect) at the spreads of a and b;
// false when even maxSeeds would not.
func SeedsFor(a, b []float64, effect float64) (int, bool) {
	_, varA := meanVar(a)
	_, varB := meanVar(b)
	for n := 2; n <= maxSeeds; n++ {
		termA, termB := varA/float64(n), varB/float64(n)
		w := Welch{SE: math.Sqrt(termA + termB), DF: math.Inf(1)}
		if w.SE > 0 {
			w.DF = welchDF(termA, termB, n, n)
		}
		if Detectable(w) <= effect {
			return n, true
		}
	}
	return maxSeeds, false
}

// meanVar is the mean and the sample variance (n - 1 in the denominator).
func meanVar(values []float64) (mean, variance float64) {
	if len(values) < 2 {
		return stat.Mean(values, nil), 0
	}
	return stat.MeanVariance(values, nil)
}

// studentTail is P(T > t) for Student's t with df degrees of freedom (the
// normal distribution at infinite df).
func studentTail(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Survival(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// studentQuantile is the t with P(T <= t) = q.
func studentQuantile(q, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Quantile(q)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(q)
}

// Exponent is the growth exponent b of y ∝ x^b, fitted by least squares on
// log y against log x, with its 95 % confidence interval (Student's t on the
// points' residual spread, points − 2 degrees of freedom).
type Exponent struct {
	B    float64    `json:"b"`
	CI95 [2]float64 `json:"ci95"`
}

// FitExponent fits y ∝ x^b to positive points; it needs three of them at
// least, at two or more distinct x.
func FitExponent(x, y []float64) (Exponent, error) {
	if len(x) != len(y) || len(x) < 3 {
		return Exponent{}, fmt.Errorf("%d x and %d y values: an exponent needs 3 points at least", len(x), len(y))
	}
	logX, logY := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			return Exponent{}, fmt.Errorf("point (%g, %g): an exponent needs positive values", x[i], y[i])
		}
		logX[i], logY[i] = math.Log(x[i]), math.Log(y[i])
	}
	_, varX := stat.MeanVariance(logX, nil)
	if varX == 0 {
		return Exponent{}, fmt.Errorf("every point at x = %g: an exponent needs two lengths at least", x[0])
	}
	intercept, b := stat.LinearRegression(logX, logY, nil, false)
	var residuals float64
	for i := range logX {
		r := logY[i] - intercept - b*logX[i]
		residuals += r * r
	}
	df := float64(len(x) - 2)
	sxx := varX * float64(len(x)-1)
	half := studentQuantile(1-Significance/2, df) * math.Sqrt(residuals/df/sxx)
	return Exponent{B: b, CI95: [2]float64{b - half, b + half}}, nil
}
