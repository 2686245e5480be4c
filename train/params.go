package train

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// CountParams counts the trainable parameters of cfg's model, with a class
// head of classes (0: the language model's head), by building its graph on
// the Go backend without running it: no weight is allocated, so a model of
// billions of parameters counts on a laptop.
func CountParams(cfg models.Config, classes int) (int64, error) {
	m, err := models.New(cfg)
	if err != nil {
		return 0, err
	}
	goBackend, err := Backend("go")
	if err != nil {
		return 0, err
	}
	store := model.NewStore()
	exec, err := model.NewExec(goBackend.Backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		if classes > 0 {
			return m.ClassLogits(scope, tokens, classes)
		}
		return m.Logits(scope, tokens)
	})
	if err != nil {
		return 0, err
	}
	defer exec.Finalize()
	if _, err := exec.Compile(shapes.Make(dtypes.Int32, 1, cfg.SeqLen)); err != nil {
		return 0, fmt.Errorf("building model %s: %w", cfg.Model, err)
	}
	return countParams(store), nil
}

// PresetCount is a preset's parameter count beside the paper's.
type PresetCount struct {
	Preset     string  `json:"preset"`
	Paper      string  `json:"paper"`
	Summary    string  `json:"summary"`
	Options    string  `json:"options"`
	Params     int64   `json:"params"`              // at the paper's vocabulary
	PaperSays  int64   `json:"paper_params"`        // 0: the paper gives none
	Off        float64 `json:"off,omitempty"`       // (params - paper) / paper
	Tokenizer  string  `json:"tokenizer,omitempty"` // what ecpi trains it with
	Trained    int64   `json:"trained_params"`      // with that tokenizer's vocabulary
	TrainVocab int     `json:"trained_vocab,omitempty"`
}

// CountPreset counts a preset's parameters at the paper's vocabulary and at
// the vocabulary of the tokenizer ecpi trains it with.
func CountPreset(name string) (*PresetCount, error) {
	p, err := models.PresetByName(name)
	if err != nil {
		return nil, err
	}
	cfg, err := models.ParseConfig(map[string]string{"preset": name})
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	r := &PresetCount{Preset: name, Paper: p.Paper, Summary: p.Summary, Options: presetOptions(p), PaperSays: p.Params, Tokenizer: p.Tokenizer}
	if r.Params, err = CountParams(cfg, p.Classes); err != nil {
		return nil, err
	}
	if p.Params > 0 {
		r.Off = float64(r.Params-p.Params) / float64(p.Params)
	}
	r.Trained, r.TrainVocab = r.Params, cfg.Vocab
	if p.Tokenizer != "" {
		tok, err := data.NewTokenizer(p.Tokenizer)
		if err != nil {
			return nil, err
		}
		if r.TrainVocab = tok.VocabSize(); r.TrainVocab != cfg.Vocab {
			cfg.Vocab = r.TrainVocab
			if r.Trained, err = CountParams(cfg, p.Classes); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func presetOptions(p models.Preset) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(p.Options)) {
		parts = append(parts, name+"="+p.Options[name])
	}
	return strings.Join(parts, " ")
}

// Text is the count beside the paper's.
func (r *PresetCount) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n  %s\n  %s parameters at the paper's vocabulary", r.Preset, r.Paper, r.Summary, r.Options, millions(r.Params))
	if r.PaperSays > 0 {
		fmt.Fprintf(&b, "; the paper: %s (%+.1f %%)", millions(r.PaperSays), 100*r.Off)
	}
	if r.Tokenizer != "" && r.Trained != r.Params {
		fmt.Fprintf(&b, "\n  %s with tokenizer=%s (%d tokens), as ecpi trains it", millions(r.Trained), r.Tokenizer, r.TrainVocab)
	}
	return b.String()
}

func millions(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.3fB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
