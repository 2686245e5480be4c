package models

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestCountsAtTheLargestN: at n = MaxSeqLen every family's counts are
// arithmetic (this test would run for hours otherwise) and exact: positive,
// within the dense counts, growing from n/2 as a window or a square grows,
// with FLOPs that are the pairs times 4·dh·H, never wrapped around. Windows
// are the defaults and half of n; heads 4 and 64.
func TestCountsAtTheLargestN(t *testing.T) {
	checked := 0
	for _, family := range FamilyNames() {
		for _, heads := range []int{4, 64} {
			for _, wide := range []bool{false, true} {
				at := func(n int) (Cost, bool) {
					cfg := DefaultConfig(family).MustWith("heads", strconv.Itoa(heads)).MustWith("dim", strconv.Itoa(2*heads))
					cfg.SeqLen = n
					if wide {
						cfg = cfg.WithWindow(n / 2)
					}
					return CostOf(cfg), cfg.Validate() == nil
				}
				big, ok := at(MaxSeqLen)
				half, okHalf := at(MaxSeqLen / 2)
				if !ok || !okHalf {
					continue
				}
				checked++
				name := family + " heads=" + strconv.Itoa(heads) + " wide=" + strconv.FormatBool(wide)
				if big.Pairs <= 0 || big.Pairs > 3*big.DensePairs || big.CausalPairs <= 0 || big.CausalPairs > big.DensePairs {
					t.Errorf("%s: pairs %d, causal pairs %d out of (0, 3n²] and (0, n²]", name, big.Pairs, big.CausalPairs)
				}
				for _, growth := range []float64{float64(big.Pairs) / float64(half.Pairs), float64(big.CausalPairs) / float64(half.CausalPairs)} {
					if growth < 1.5 || growth > 4.5 {
						t.Errorf("%s: counts grew x%.3f from n/2 to n, want between x2 (linear) and x4 (quadratic)", name, growth)
					}
				}
				want := 4 * float64(big.HeadDim*big.Heads) * float64(big.Pairs)
				if big.AttentionFLOPs != want || big.ModelFLOPs < big.AttentionFLOPs || big.DenseModelFLOPs <= 0 || math.IsInf(big.DenseModelFLOPs, 0) {
					t.Errorf("%s: FLOPs %g (layer 0) %g (model) %g (dense), want 4·dh·H·pairs = %g and the rest positive", name,
						big.AttentionFLOPs, big.ModelFLOPs, big.DenseModelFLOPs, want)
				}
			}
		}
	}
	if checked < 2*len(FamilyNames()) {
		t.Errorf("only %d configs valid at n=%d: the test checks too little", checked, MaxSeqLen)
	}
}

func TestExactMeanIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var m exactMean
		sum, weights := new(big.Int), int64(0)
		for range 1 + rng.IntN(64) {
			value, weight := rng.Int64N(math.MaxInt64), rng.Int64N(1<<20)+1
			m.add(value, weight)
			sum.Add(sum, new(big.Int).Mul(big.NewInt(value), big.NewInt(weight)))
			weights += weight
		}
		if want := sum.Div(sum, big.NewInt(weights)).Int64(); m.mean() != want {
			t.Fatalf("mean %d, want %d", m.mean(), want)
		}
	}
}

// TestEmptySequenceScoresNothing: a length of 0 (a config whose n is not set
// yet) has no scores, in every form of π's skips, rather than a division by a
// block of 0 rows.
func TestEmptySequenceScoresNothing(t *testing.T) {
	for _, skips := range []int{1, 15} {
		p := Pi{Window: 16, SkipPeriod: 32, Skips: skips, Heads: 4, Causal: true}
		if got := p.ScoredPairs(0); got != 0 {
			t.Errorf("π with %d skips scores %d pairs at n = 0", skips, got)
		}
	}
}
