package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/compute/dtypes"
)

func main() {
	choice, err := train.Backend(os.Getenv("BK"))
	if err != nil {
		panic(err)
	}
	backend := choice.Backend
	for _, family := range os.Args[1:] {
		cfg, err := train.BenchConfig(family, "small")
		if err != nil {
			panic(err)
		}
		m, err := models.New(cfg)
		if err != nil {
			panic(err)
		}
		store := model.NewStore()
		var count map[string]int
		var total int
		exec := model.MustNewExec(backend, store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
			logits := m.Logits(scope, tokens)
			loss := graph.ReduceAllSum(logits)
			grads := scope.BuildTrainableVariablesGradientsGraph(loss)
			out := loss
			for _, g := range grads {
				out = graph.Add(out, graph.ReduceAllSum(g))
			}
			count = map[string]int{}
			for _, n := range tokens.Graph().Nodes() {
				count[n.Type().String()]++
			}
			total = len(tokens.Graph().Nodes())
			return out
		})
		tok := make([]int32, 8*cfg.SeqLen)
		start := time.Now()
		exec.MustCall1(tensors.FromFlatDataAndDimensions(tok, 8, cfg.SeqLen))
		el := time.Since(start)
		type kv struct{ k string; v int }
		var kvs []kv
		for k, v := range count { kvs = append(kvs, kv{k, v}) }
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v })
		fmt.Printf("%s: %d nodes, first call %v; top:", family, total, el)
		for _, e := range kvs[:min(12, len(kvs))] { fmt.Printf(" %s=%d", e.k, e.v) }
		fmt.Println()
		_ = dtypes.Int32
	}
}
