package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// TestDecodingMatchesRecomputation: for every family row that decodes
// incrementally, prefill a prompt, then decode each following token and
// compare its logits with those of a full forward pass over the window.
func TestDecodingMatchesRecomputation(t *testing.T) {
	backend := testBackend(t)
	decoded := 0
	for _, values := range familyCases {
		cfg := caseConfig(t, values)
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !m.CanDecode() {
			continue
		}
		decoded++
		t.Run(caseName(values), func(t *testing.T) {
			n, vocab, prompt := cfg.SeqLen, cfg.Vocab, cfg.SeqLen/3
			rng := rand.New(rand.NewPCG(5, 6))
			tokens := make([]int32, n)
			for i := range tokens {
				tokens[i] = int32(rng.IntN(vocab))
			}
			store := model.NewStore()
			full := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node { return m.Logits(scope, tokens) })
			want := tensors.MustCopyFlatData[float32](full.MustCall1(tensors.FromFlatDataAndDimensions(tokens, 1, n)))

			// The prefill sees only the prompt (the rest of its window is padding).
			window := make([]int32, n)
			copy(window, tokens[:prompt])
			prefill := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) []*graph.Node {
				logits, caches := m.Prefill(scope, tokens)
				return append([]*graph.Node{logits}, caches...)
			})
			outs := prefill.MustCall(tensors.FromFlatDataAndDimensions(window, 1, n))
			caches := outs[1:]
			step := model.MustNewExec(backend, store, func(scope *model.Scope, inputs []*graph.Node) []*graph.Node {
				logits, updated := m.DecodeStep(scope, inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], inputs[5:])
				return append([]*graph.Node{logits}, updated...)
			})
			for position := prompt; position < n; position++ {
				keys, err := m.KeysAt(position)
				if err != nil {
					t.Fatal(err)
				}
				args := []any{tensors.FromFlatDataAndDimensions([]int32{tokens[position]}, 1), tensors.FromScalar(int32(position)),
					tensors.FromValue(keys.Positions), tensors.FromValue(keys.Valid), tensors.FromValue(keys.Skip)}
				for _, c := range caches {
					args = append(args, c)
				}
				outs := step.MustCall(args...)
				got := tensors.MustCopyFlatData[float32](outs[0])
				caches = outs[1:]
				for v := range vocab {
					if diff := math.Abs(float64(got[v] - want[position*vocab+v])); diff > 1e-4 {
						t.Fatalf("position %d: decoded logit %d = %g, recomputed %g", position, v, got[v], want[position*vocab+v])
					}
				}
			}
		})
	}
	if decoded < 7 {
		t.Errorf("%d family rows decode incrementally; want at least full, local, s2, ecp, pi, longformer, bigbird", decoded)
	}
}
