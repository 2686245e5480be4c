package models

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Preset is a model configuration that one of the papers states, by name:
// `preset=NAME` sets its options (an option typed beside it overrides one),
// and `ecpi models preset=NAME` counts its parameters against the paper's.
// What a paper leaves open is ecpi's choice, and Summary says which.
type Preset struct {
	Name    string
	Paper   string
	Summary string            // what the paper trained it on and reported, and ecpi's choices
	Options map[string]string // the model options it sets, model= included
	// Vocab is the paper's vocabulary, which the parameter count uses; a run
	// takes its vocabulary from its tokenizer (Tokenizer) instead.
	Vocab     int
	Tokenizer string // what ecpi trains it with: gpt2 where the paper used subword tokens
	Classes   int    // a classifier's classes (0: a language model)
	// Params is the paper's parameter count (0: the paper gives none); where
	// the paper names a GPT-2 size, GPT-2's exact count.
	Params int64
	// Steps and Batch are the schedule paper mode trains it on (notebooks
	// 01-04's recipe, in bfloat16 without dropout): neither paper states a
	// total, so these are ecpi's choice, which `bench train preset=` prices.
	Steps, Batch int
}

// The ECP paper's model: d = 768, 6 heads, n = 2048, h = 256, BERT-cased
// WordPiece (28,996 tokens); its code's choices (shared key-value projection,
// RoPE in the first layer) are the family's defaults.
var ecpPaper = map[string]string{"model": "ecp", "n": "2048", "dim": "768", "heads": "6", "half_segment": "256"}

// GPT-2's sizes, which π-Attention's 125M-1.5B models follow (tied input and
// output embeddings); k = 128 is ecpi's choice, the paper's summary gives none.
func piPaper(layers, dim, heads string) map[string]string {
	return map[string]string{"model": "pi", "n": "1024", "dim": dim, "heads": heads, "layers": layers, "tied": "true", "window": "128"}
}

// Presets are the papers' configurations, in `ecpi models` order.
var Presets = []Preset{
	{Name: "ecp-wikitext103", Paper: "ECP (arXiv 2412.06106)", Options: with(ecpPaper, "layers", "18"), Vocab: 28996, Tokenizer: "gpt2", Params: 172_000_000, Steps: 20000, Batch: 8,
		Summary: "ECP on WikiText-103: 18 layers, 17.82 perplexity with 172M parameters"},
	{Name: "ecp-pg19", Paper: "ECP (arXiv 2412.06106)", Options: with(ecpPaper, "layers", "24"), Vocab: 28996, Tokenizer: "gpt2", Steps: 20000, Batch: 8,
		Summary: "ECP on PG-19: 24 layers, 18.83 perplexity (no parameter count given)"},
	{Name: "ecp-scifar10", Paper: "ECP (arXiv 2412.06106)", Classes: 10, Vocab: 256, Steps: 20000, Batch: 50,
		Options: map[string]string{"model": "ecp", "n": "1024", "dim": "768", "heads": "6", "layers": "12", "half_segment": "128"},
		Summary: "ECP on sCIFAR-10: 12 layers over 1,024 pixels, 64.42 % accuracy (width and h = 128 are ecpi's choice)"},
	{Name: "perceiverar-wikitext103", Paper: "ECP (arXiv 2412.06106)", Vocab: 28996, Tokenizer: "gpt2", Steps: 20000, Batch: 8,
		Options: map[string]string{"model": "perceiverar", "n": "2048", "dim": "768", "heads": "6", "layers": "18", "latents": "1024"},
		Summary: "PerceiverAR as ECP compared it: ECP's sizes, 1,024 latents (ecpi's choice: the summary gives none)"},
	{Name: "pi-125m", Paper: "π-Attention (arXiv 2511.10696)", Options: piPaper("12", "768", "12"), Vocab: 50257, Tokenizer: "gpt2", Steps: 20000, Batch: 16, Params: 124_439_808,
		Summary: "π-Attention at 125M parameters: GPT-2 small's shape, whose exact count (124.4M) stands for the paper's nominal 125M"},
	{Name: "pi-350m", Paper: "π-Attention (arXiv 2511.10696)", Options: piPaper("24", "1024", "16"), Vocab: 50257, Tokenizer: "gpt2", Steps: 20000, Batch: 16,
		Summary: "π-Attention at GPT-2 medium's shape (between the paper's 125M and 1.5B)"},
	{Name: "pi-760m", Paper: "π-Attention (arXiv 2511.10696)", Options: piPaper("24", "1536", "16"), Vocab: 50257, Tokenizer: "gpt2", Steps: 20000, Batch: 16,
		Summary: "π-Attention at GPT-2 large's shape (between the paper's 125M and 1.5B)"},
	{Name: "pi-1.5b", Paper: "π-Attention (arXiv 2511.10696)", Options: piPaper("48", "1600", "25"), Vocab: 50257, Tokenizer: "gpt2", Steps: 20000, Batch: 16, Params: 1_557_611_200,
		Summary: "π-Attention at 1.5B parameters: GPT-2 XL's shape, whose exact count (1.558B) stands for the paper's nominal 1.5B; the same π as at 125M"},
}

func with(options map[string]string, name, value string) map[string]string {
	out := maps.Clone(options)
	out[name] = value
	return out
}

// PresetNames lists the presets in order.
func PresetNames() []string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	return names
}

// PresetByName finds a preset.
func PresetByName(name string) (Preset, error) {
	i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, fmt.Errorf("unknown preset %q; choose one of: %s", name, strings.Join(PresetNames(), ", "))
	}
	return Presets[i], nil
}

// withPreset expands preset=NAME into the preset's options at the paper's
// vocabulary, under the options typed beside it.
func withPreset(values map[string]string) (map[string]string, error) {
	name := values["preset"]
	if name == "" {
		return values, nil
	}
	p, err := PresetByName(name)
	if err != nil {
		return nil, err
	}
	if family := values["model"]; family != "" && family != p.Options["model"] {
		return nil, fmt.Errorf("preset %s is a %s model, not model=%s", name, p.Options["model"], family)
	}
	merged := with(p.Options, "vocab", strconv.Itoa(p.Vocab))
	maps.Copy(merged, values)
	return merged, nil
}
