package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// TestDecodingMatchesRecomputation: every causal family row decodes
// incrementally; prefill a prompt, then decode each following token and
// compare its logits with those of a full forward pass over the window.
func TestDecodingMatchesRecomputation(t *testing.T) {
	backend := testBackend(t)
	for _, values := range familyCases {
		cfg := caseConfig(t, values)
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if m.CanDecode() != cfg.Causal {
			t.Errorf("%s: CanDecode %v, causal %v", caseName(values), m.CanDecode(), cfg.Causal)
		}
		if !m.CanDecode() {
			continue
		}
		t.Run(caseName(values), func(t *testing.T) {
			n, vocab, start := cfg.SeqLen, cfg.Vocab, m.LossStart()
			prompt := max(n/3, start+1) // the PerceiverAR family predicts its latents only
			rng := rand.New(rand.NewPCG(5, 6))
			tokens := make([]int32, n)
			for i := range tokens {
				tokens[i] = int32(rng.IntN(vocab))
			}
			store := model.NewStore()
			full := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node { return m.Logits(scope, tokens) })
			want := tensors.MustCopyFlatData[float32](full.MustCall1(tensors.FromFlatDataAndDimensions(tokens, 1, n)))
			compare := func(position int, got []float32, what string) {
				t.Helper()
				row := want[(position-start)*vocab : (position-start+1)*vocab]
				for v := range vocab {
					if diff := math.Abs(float64(got[v] - row[v])); diff > 1e-4 {
						t.Fatalf("position %d: %s logit %d = %g, recomputed %g", position, what, v, got[v], row[v])
					}
				}
			}

			// The prefill sees only the prompt (the rest of its window is padding).
			window := make([]int32, n)
			copy(window, tokens[:prompt])
			prefill := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) []*graph.Node {
				logits, caches := m.Prefill(scope, tokens)
				return append([]*graph.Node{logits}, caches...)
			})
			outs := prefill.MustCall(tensors.FromFlatDataAndDimensions(window, 1, n))
			compare(prompt-1, tensors.MustCopyFlatData[float32](outs[0])[(prompt-1-start)*vocab:], "prefilled")
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
				window[position] = tokens[position]
				args := []any{tensors.FromFlatDataAndDimensions(window, 1, n), tensors.FromScalar(int32(position)),
					tensors.FromValue(keys.Positions), tensors.FromValue(keys.Valid), tensors.FromValue(keys.Skip)}
				for _, c := range caches {
					args = append(args, c)
				}
				outs := step.MustCall(args...)
				compare(position, tensors.MustCopyFlatData[float32](outs[0]), "decoded")
				caches = outs[1:]
			}
		})
	}
}
