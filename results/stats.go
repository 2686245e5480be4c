package results

import (
	"fmt"
	"math"
)

// Significance is the level of every test: two-sided p < 0.05, 95 %
// confidence intervals; the equivalence test's two one-sided tests each at
// 0.05 (its 90 % interval inside the margin).
const Significance = 0.05

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
	w.DF = (termA + termB) * (termA + termB) / (termA*termA/float64(len(a)-1) + termB*termB/float64(len(b)-1))
	w.P = 2 * studentTail(math.Abs(w.Diff)/w.SE, w.DF)
	half := studentQuantile(1-Significance/2, w.DF) * w.SE
	w.CI95 = [2]float64{w.Diff - half, w.Diff + half}
	return w
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

// meanVar is the mean and the sample variance (n - 1 in the denominator).
func meanVar(values []float64) (mean, variance float64) {
	for _, v := range values {
		mean += v
	}
	mean /= float64(len(values))
	if len(values) < 2 {
		return mean, 0
	}
	for _, v := range values {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(values)-1)
}

// studentTail is P(T > t) for Student's t with df degrees of freedom.
func studentTail(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return 0.5 * math.Erfc(t/math.Sqrt2)
	}
	tail := 0.5 * regularizedBeta(df/(df+t*t), df/2, 0.5)
	if t < 0 {
		return 1 - tail
	}
	return tail
}

// studentQuantile is the t with P(T <= t) = q, found by bisection (the CDF is
// monotone; 200 halvings are far below float64's resolution).
func studentQuantile(q, df float64) float64 {
	low, high := -1e6, 1e6
	for range 200 {
		mid := (low + high) / 2
		if 1-studentTail(mid, df) < q {
			low = mid
		} else {
			high = mid
		}
	}
	return (low + high) / 2
}

// regularizedBeta is I_x(a, b), the regularised incomplete beta function,
// from its continued fraction (modified Lentz), on the side where it
// converges fast.
func regularizedBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	logFront := lgamma(a+b) - lgamma(a) - lgamma(b) + a*math.Log(x) + b*math.Log1p(-x)
	if x < (a+1)/(a+b+2) {
		return math.Exp(logFront) * betaFraction(x, a, b) / a
	}
	return 1 - math.Exp(logFront)*betaFraction(1-x, b, a)/b
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// betaFraction evaluates the continued fraction of I_x(a, b).
func betaFraction(x, a, b float64) float64 {
	const tiny, epsilon = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		for _, numerator := range []float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + numerator*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + numerator/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < epsilon {
			break
		}
	}
	return h
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
	meanX, _ := meanVar(logX)
	meanY, _ := meanVar(logY)
	var sxx, sxy float64
	for i := range logX {
		sxx += (logX[i] - meanX) * (logX[i] - meanX)
		sxy += (logX[i] - meanX) * (logY[i] - meanY)
	}
	if sxx == 0 {
		return Exponent{}, fmt.Errorf("every point at x = %g: an exponent needs two lengths at least", x[0])
	}
	b := sxy / sxx
	var residuals float64
	for i := range logX {
		r := logY[i] - meanY - b*(logX[i]-meanX)
		residuals += r * r
	}
	df := float64(len(x) - 2)
	half := studentQuantile(1-Significance/2, df) * math.Sqrt(residuals/df/sxx)
	return Exponent{B: b, CI95: [2]float64{b - half, b + half}}, nil
}
