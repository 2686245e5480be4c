package train

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// AttentionMap is one layer's attention for one input: Weights[head][query][key]
// over absolute positions (queries of PerceiverAR's layer 0 are its latents,
// the last len(Weights[h]) positions). Alpha[head][query] is π-Attention's gate
// (nil for patterns without a gate).
type AttentionMap struct {
	Layer    int           `json:"layer"`
	Pattern  string        `json:"pattern"`
	Weights  [][][]float32 `json:"weights"`
	Alpha    [][]float32   `json:"alpha,omitempty"`
	pattern  models.Pattern
	hasAlpha bool
}

// Attention runs the loaded model on tokens (n of them; see InputTokens) and
// returns the attention weights of every layer and head: softmax(q·kᵀ/√dh)
// over K(i), shaped by the gate of a gated pattern (models.DenseWeights). The
// graph is compiled once per Loaded.
func (l *Loaded) Attention(tokens []int32) ([]AttentionMap, error) {
	if l.probe == nil {
		probe, err := newAttentionProbe(l)
		if err != nil {
			return nil, err
		}
		l.probe = probe
	}
	outs, err := l.probe.exec.Exec(tensors.FromFlatDataAndDimensions(tokens, 1, len(tokens)))
	if err != nil {
		return nil, err
	}
	maps := slices.Clone(l.probe.layers)
	next := 0
	for i := range maps {
		dims := outs[next].Shape().Dimensions // [1, H, queries, keys]
		maps[i].Weights = rows3(tensors.MustCopyFlatData[float32](outs[next]), dims[1], dims[2], dims[3])
		next++
		if maps[i].hasAlpha {
			maps[i].Alpha = rows3(tensors.MustCopyFlatData[float32](outs[next]), 1, dims[1], dims[2])[0]
			next++
		}
	}
	return maps, nil
}

// attentionProbe is the compiled graph of Attention and what its outputs are.
type attentionProbe struct {
	exec   *model.Exec
	layers []AttentionMap // per layer: pattern and whether a gate output follows
}

func newAttentionProbe(l *Loaded) (*attentionProbe, error) {
	m := *l.model              // a copy, so the probe does not stay on the shared model
	m.Compute = dtypes.Float32 // attention maps of the float32 master weights
	probe := &attentionProbe{}
	var nodes []*graph.Node
	m.Probe = &models.Probe{Attention: func(layer int, p models.Pattern, q, k, alpha *graph.Node) {
		probe.layers = append(probe.layers, AttentionMap{Layer: layer, Pattern: p.Name(), pattern: p, hasAlpha: alpha != nil})
		nodes = append(nodes, models.DenseWeights(p, q, k, alpha))
		if alpha != nil {
			nodes = append(nodes, alpha)
		}
	}}
	var err error
	probe.exec, err = model.NewExec(l.backend.Backend, l.store, func(scope *model.Scope, input *graph.Node) []*graph.Node {
		defer models.RaiseAsError()
		probe.layers, nodes = nil, nil
		m.Trunk(scope, input)
		return nodes
	})
	return probe, err
}

// rows3 cuts a flat [a, b, c] array into nested slices.
func rows3(flat []float32, a, b, c int) [][][]float32 {
	out := make([][][]float32, a)
	for i := range out {
		out[i] = make([][]float32, b)
		for j := range out[i] {
			at := (i*b + j) * c
			out[i][j] = flat[at : at+c]
		}
	}
	return out
}

// InputTokens turns a text (LM) into the model's n input tokens, as sample
// does; a classifier or retrieval model takes the first validation example.
func (l *Loaded) InputTokens(text string) ([]int32, error) {
	n := l.model.Config.SeqLen
	if tok := l.Tokenizer(); tok != nil {
		ids := tok.Encode(text)
		if len(ids) == 0 {
			return nil, errors.New("the probe text is empty")
		}
		window, _ := sampleWindow(ids, n, l.model.LossStart(), padToken(tok))
		return window, nil
	}
	examples, ok := l.task.(interface{ firstExample() []int32 })
	if !ok {
		return nil, fmt.Errorf("data %s gives the probes no text or example to read", l.opts.Data)
	}
	first := examples.firstExample()
	first = first[:min(len(first), n)] // a retrieval example's last token is the answer's end
	return padTo(first, 1, len(first), n), nil
}

// GateLayer is a gated attention's gate in one layer: the mean α of each head
// and the share of each head's attention mass that lands on skip keys.
type GateLayer struct {
	Layer     int       `json:"layer"`
	MeanAlpha []float64 `json:"mean_alpha"`
	SkipMass  []float64 `json:"skip_mass"`
}

// GateReport is `probe gate`.
type GateReport struct {
	Model  string      `json:"model"`
	Layers []GateLayer `json:"layers"`
}

// Text is one line per layer.
func (r *GateReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate of %s: mean α per head (local share of the prior), attention mass on skip keys\n", r.Model)
	for _, l := range r.Layers {
		fmt.Fprintf(&b, "layer %d  α %s  skip mass %s\n", l.Layer, floats(l.MeanAlpha), floats(l.SkipMass))
	}
	return b.String()
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " ")
}

// GateStatistics summarises a gated attention from its maps: mean α over
// queries (1/2 where the gate is off), and the mean over queries of the weight
// on skip keys.
func GateStatistics(model string, maps []AttentionMap) (*GateReport, error) {
	r := &GateReport{Model: model}
	for _, m := range maps {
		_, gated := m.pattern.(models.Gated)
		skips, hasSkips := m.pattern.(models.SkipKeys)
		if !gated || !hasSkips {
			return nil, fmt.Errorf("probe gate needs a model whose attention has a gate and skip keys; layer %d is %s", m.Layer, m.Pattern)
		}
		offset := len(m.Weights[0][0]) - len(m.Weights[0]) // queries are the last positions
		gl := GateLayer{Layer: m.Layer}
		for h, rows := range m.Weights {
			var alpha, mass float64
			for i, row := range rows {
				if m.Alpha != nil {
					alpha += float64(m.Alpha[h][i])
				} else {
					alpha += 0.5
				}
				for j, w := range row {
					if skips.IsSkip(h, offset+i, j) {
						mass += float64(w)
					}
				}
			}
			gl.MeanAlpha = append(gl.MeanAlpha, alpha/float64(len(rows)))
			gl.SkipMass = append(gl.SkipMass, mass/float64(len(rows)))
		}
		r.Layers = append(r.Layers, gl)
	}
	return r, nil
}
