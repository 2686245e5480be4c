package train

import "math"

// LearningRate is the rate of optimizer step `step` (1-based): a linear
// warm-up to o.LR over o.Warmup steps, then
//   - cosine: half a cosine from LR down to LR/10 at the last step;
//   - step: LR halved every HalveEvery steps (steps/4 when 0), as the ECP
//     paper does every 100k steps;
//   - constant: LR.
func (o Options) LearningRate(step int) float64 {
	if step <= o.Warmup {
		return o.LR * float64(step) / float64(o.Warmup)
	}
	after := step - o.Warmup
	switch o.Schedule {
	case "cosine":
		span := max(o.Steps-o.Warmup, 1)
		progress := min(float64(after)/float64(span), 1)
		const floor = 0.1
		return o.LR * (floor + (1-floor)*0.5*(1+math.Cos(math.Pi*progress)))
	case "step":
		every := o.HalveEvery
		if every == 0 {
			every = max(o.Steps/4, 1)
		}
		return o.LR * math.Pow(0.5, float64(after/every))
	}
	return o.LR
}
