package repl

import (
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
)

func init() {
	Register(&Command{
		Name:    "rf",
		Summary: "empirical receptive field per depth, next to the analytical bound",
		Details: "For depth 1..L, the farthest input position whose gradient reaches output position i above\n" +
			"threshold·max, measured on the model cut to its first layers. weights=trained uses the\n" +
			"checkpoint (default when the session has one), weights=random the model options.",
		Options: append(rfOptions.Declare(), modelOptions()...),
		Run:     runRF,
	})
	Register(&Command{
		Name:    "probe attention",
		Summary: "attention weights of a trained model on a text, per layer and head (summary; --json: full maps)",
		Args:    "[TEXT]",
		Options: probeOptions.Declare(),
		Run:     runProbeAttention,
	})
	Register(&Command{
		Name:    "probe gate",
		Summary: "π-Attention gate statistics: mean α per head and attention mass on skip keys",
		Args:    "[TEXT]",
		Options: probeOptions.Declare(),
		Run:     runProbeGate,
	})
}

const probeText = "Light is propagated from luminous bodies in time, and spends about seven or eight minutes of an hour in passing from the sun to the earth."

// rfArgs are rf's own options; the model's (random weights) come from ModelConfig.
type rfArgs struct {
	train.RFOptions
	Checkpoint, Weights, Backend string
}

var rfOptions = Options[rfArgs]{
	Table: option.Table[rfArgs]{
		checkpointField(func(a *rfArgs) *string { return &a.Checkpoint }),
		option.Choice("weights", "trained, random, or auto (trained when a checkpoint is set)", []string{"auto", "trained", "random"}, func(a *rfArgs) *string { return &a.Weights }),
		option.Int("position", "output position i (-1: the last)", func(a *rfArgs) *int { return &a.Position }, option.AtLeast(-1)),
		option.Float("threshold", "relative gradient norm that counts as reached, in (0, 1)", func(a *rfArgs) *float64 { return &a.Threshold },
			option.NewRule(func(v float64) bool { return v > 0 && v < 1 }, "must be in (0, 1)")),
		option.Uint64("seed", "seed of the input tokens and random weights", func(a *rfArgs) *uint64 { return &a.Seed }),
		backendField(func(a *rfArgs) *string { return &a.Backend }),
	},
	Defaults: rfArgs{RFOptions: train.RFOptions{Position: -1, Threshold: 1e-4, Seed: 1}, Weights: "auto"},
}

// probeOptions are the probes': the checkpoint to open.
var probeOptions = Options[checkpointArgs]{Table: checkpointTable}

func runRF(c *Call) error {
	args, err := rfOptions.Read(c)
	if err != nil {
		return err
	}
	o := args.RFOptions
	trained := args.Weights == "trained" || (args.Weights == "auto" && args.Checkpoint != "")
	var r *train.RFResult
	if trained {
		// model= is a model option here; typed, it still refuses another family's checkpoint.
		l, err := openCheckpoint(c, checkpointArgs{Checkpoint: args.Checkpoint, Model: c.String("model"), Backend: args.Backend})
		if err != nil {
			return err
		}
		r, err = l.ReceptiveField(c.Ctx, o)
		if err != nil {
			return err
		}
	} else {
		cfg, err := c.ModelConfig()
		if err != nil {
			return err
		}
		backend, err := train.Backend(args.Backend)
		if err != nil {
			return err
		}
		if r, err = train.ReceptiveField(c.Ctx, cfg, nil, backend, o); err != nil {
			return err
		}
	}
	c.Session.Remember("rf", r)
	showReceptiveField(c, r)
	return c.Emit(RFPicture{r})
}

// AttentionSummary is `probe attention` for humans: per layer and head, the
// mean distance attended and the weight on the query itself.
type AttentionSummary struct {
	Model string               `json:"model"`
	Maps  []train.AttentionMap `json:"maps"`
}

func (s AttentionSummary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "attention of %s: mean distance i-j attended, per layer and head\n", s.Model)
	for _, m := range s.Maps {
		var parts []string
		for _, rows := range m.Weights {
			offset := len(rows[0]) - len(rows)
			var dist float64
			for i, row := range rows {
				for j, w := range row {
					dist += float64(w) * float64(offset+i-j)
				}
			}
			parts = append(parts, fmt.Sprintf("%.1f", dist/float64(len(rows))))
		}
		fmt.Fprintf(&b, "layer %d (%s): %s\n", m.Layer, m.Pattern, strings.Join(parts, "  "))
	}
	return b.String()
}

func probeMaps(c *Call) (*train.Loaded, []train.AttentionMap, error) {
	args, err := probeOptions.Read(c)
	if err != nil {
		return nil, nil, err
	}
	l, err := openCheckpoint(c, args)
	if err != nil {
		return nil, nil, err
	}
	text := strings.Join(c.Args, " ")
	if text == "" {
		text = probeText
	}
	tokens, err := l.InputTokens(text)
	if err != nil {
		return nil, nil, err
	}
	maps, err := l.Attention(tokens)
	return l, maps, err
}

func runProbeAttention(c *Call) error {
	l, maps, err := probeMaps(c)
	if err != nil {
		return err
	}
	s := AttentionSummary{Model: l.Model().Config.Model, Maps: maps}
	c.Session.Remember("probe attention", s)
	showAttention(c, maps)
	return c.Emit(s)
}

func runProbeGate(c *Call) error {
	l, maps, err := probeMaps(c)
	if err != nil {
		return err
	}
	r, err := train.GateStatistics(l.Model().Config.Model, maps)
	if err != nil {
		return err
	}
	c.Session.Remember("probe gate", r)
	return c.Emit(r)
}
