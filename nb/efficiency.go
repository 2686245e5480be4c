package nb

// What notebook 06 (efficiency) measures, read from the commands' JSON
// results: counted costs, attention timings and memory, whole-model speeds and
// memory per device. The notebook's cells keep only its design (lengths,
// repeats, the claims it judges).

import (
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/results"
)

// CostReport is the `cost` report of a model.
type CostReport struct {
	Pairs          float64 `json:"pairs"`
	DensePairs     float64 `json:"dense_pairs"`
	Ratio          float64 `json:"ratio"`
	ModelFLOPs     float64 `json:"model_attention_flops"`
	DenseModelFLOP float64 `json:"dense_model_attention_flops"`
}

func Cost(options string) CostReport {
	var c CostReport
	Must(0, Query("cost " + options)[0].Decode(&c))
	return c
}

// Timed is one `bench attention` measurement.
type Timed struct {
	Variant string  `json:"variant"`
	N       int     `json:"n"`
	MS      float64 `json:"ms"`
	PeakMB  float64 `json:"peak_mb"`
	// RunsMS is every timed run's milliseconds.
	RunsMS []float64 `json:"runs_ms"`
	// NotMeasured says why a memory sweep skipped this length: the machine cannot hold it.
	NotMeasured string `json:"not_measured"`
}

// BenchAttention runs `bench attention` and returns its measurements by variant, in length order; the lengths a
// memory sweep could not measure are left out (its output says why).
func BenchAttention(options string) map[string][]Timed {
	out := map[string][]Timed{}
	for _, r := range Do("bench attention " + options) {
		var t Timed
		Must(0, r.Decode(&t))
		if t.NotMeasured == "" {
			out[t.Variant] = append(out[t.Variant], t)
		}
	}
	return out
}

// LinearFLOPs is a model's forward FLOPs outside attention at length n: the q, k, v and output projections, the
// feed-forward block and the output layer (multiply-add = 2).
func LinearFLOPs(n, dim, layers, ffMult, vocab int) float64 {
	perLayer := 2 * float64(n) * float64(dim*dim) * float64(4+2*ffMult)
	return float64(layers)*perLayer + 2*float64(n)*float64(dim*vocab)
}

// Speeds are whole-model tokens per second, training (`bench train`, the small model: n = 256, d = 64, 2 layers,
// window 64) and generating (`bench generate`, one token at a time with the key/value cache), repeated to see the noise.
type Speeds struct{ Train, Generate map[string][]float64 }

// tokenRate is what `bench train` and `bench generate` report of one model.
type tokenRate struct {
	Family     string  `json:"family"`
	TokensPerS float64 `json:"tokens_per_s"`
}

// MeasureSpeeds measures the models' training and generation speeds repeats times, the models interleaved in each
// repeat so that a slow spell of a shared machine falls on all of them.
func MeasureSpeeds(models []string, repeats int) Speeds {
	s := Speeds{Train: map[string][]float64{}, Generate: map[string][]float64{}}
	for range repeats {
		for _, model := range models {
			r := Last[tokenRate](fmt.Sprintf("bench train model=%s steps=%d backends=xla", model, Pick(2, 30)))
			s.Train[model] = append(s.Train[model], r.TokensPerS)
		}
		for _, result := range Do(fmt.Sprintf("bench generate models=%s n=%s tokens=%d", strings.Join(models, ","), Pick("256", "1024"), Pick(2, 32))) {
			var g tokenRate
			Must(0, result.Decode(&g))
			s.Generate[g.Family] = append(s.Generate[g.Family], g.TokensPerS)
		}
	}
	return s
}

// Table is the speeds as a table: mean ± standard error over the repeats.
func (s Speeds) Table() figure.Table {
	t := figure.Table{Caption: "whole-model tokens per second on this machine (XLA CPU), mean ± s.e. over repeats", Header: []string{"model", "training", "generation (KV cache)"}}
	for _, model := range []string{"local", "pi", "full"} {
		tr, trSE := results.MeanSE(s.Train[model])
		gen, genSE := results.MeanSE(s.Generate[model])
		t.AddRow(model, results.FormatSE(tr, trSE, ""), results.FormatSE(gen, genSE, ""))
	}
	return t
}

// PaperModel is the paper-scale model both papers count at: n = 4096, d = 768, 6 heads, 18 layers (the ECP paper's WikiText-103 model).
const PaperModel = "n=4096 dim=768 heads=6 layers=18"

// RunsAgainstN is every timed run of one variant beside its sequence length: a growth exponent's fit takes the median
// of each length's runs.
func RunsAgainstN(measured []Timed) (lengths, ms []float64) {
	for _, m := range measured {
		for _, run := range m.RunsMS {
			lengths, ms = append(lengths, float64(m.N)), append(ms, run)
		}
	}
	return lengths, ms
}

// DeviceMemory is one line of `bench devices`: a measurement (variant, n, devices, MiB per device) or, last, its
// summary (claim 14's ratio and the longest context within the budget).
type DeviceMemory struct {
	Variant          string                    `json:"variant"`
	N                int                       `json:"n"`
	Devices          int                       `json:"devices"`
	MiB              float64                   `json:"mib_per_device"`
	HalfDevicesRatio float64                   `json:"half_devices_ratio"`
	AtN              int                       `json:"at_n"`
	AtDevices        int                       `json:"at_devices"`
	BudgetMiB        float64                   `json:"budget_mib"`
	Longest          map[string]map[string]int `json:"longest"`
}

// DevicesTable is memory per device by variant and device count against n, with the longest n within the budget.
func DevicesTable(split []DeviceMemory, summary DeviceMemory) figure.Table {
	type setting struct {
		variant string
		devices int
	}
	var lengths []int
	var order []setting
	memory := map[setting]map[int]float64{}
	for _, m := range split {
		at := setting{m.Variant, m.Devices}
		if memory[at] == nil {
			memory[at] = map[int]float64{}
			order = append(order, at)
		}
		memory[at][m.N] = m.MiB
		if len(lengths) == 0 || lengths[len(lengths)-1] < m.N {
			lengths = append(lengths, m.N)
		}
	}
	t := figure.Table{Caption: fmt.Sprintf("memory per device (MiB) of one layer's training step, each sequence split across the devices; the longest n within %.0f MiB", summary.BudgetMiB),
		Header: []string{"variant", "devices"}}
	for _, n := range lengths {
		t.Header = append(t.Header, fmt.Sprintf("n = %d", n))
	}
	t.Header = append(t.Header, "longest n within budget")
	for _, at := range order {
		row := []any{at.variant, at.devices}
		for _, n := range lengths {
			row = append(row, fmt.Sprintf("%.1f", memory[at][n]))
		}
		longest := "none measured"
		if n := summary.Longest[at.variant][fmt.Sprint(at.devices)]; n > 0 {
			longest = fmt.Sprint(n)
		}
		t.AddRow(append(row, longest)...)
	}
	t.Notes = "XLA CPU plugin's host devices; dense attention is full, π-Attention pi (k = 64, π = 2k); devices = 1: the whole sequence on one device."
	return t
}

// DevicesPlot is memory per device against n, a line per variant and device count.
func DevicesPlot(split []DeviceMemory) figure.Plot {
	p := figure.Plot{Title: "memory per device, each sequence split across the devices", XLabel: "n", YLabel: "MiB per device", LogX: true, LogY: true}
	line := map[string]int{}
	for _, m := range split {
		name := fmt.Sprintf("%s on %d", m.Variant, m.Devices)
		i, ok := line[name]
		if !ok {
			i, line[name] = len(p.Series), len(p.Series)
			p.Series = append(p.Series, figure.Series{Name: name})
		}
		p.Series[i].X, p.Series[i].Y = append(p.Series[i].X, float64(m.N)), append(p.Series[i].Y, m.MiB)
	}
	return p
}
