package models

import (
	"fmt"
	"math"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/gomlx/gomlx/core/graph"
)

// BigBird (arXiv 2007.14062), a baseline the π-Attention paper compares
// against: the sequence is cut into blocks of b positions, and query block q
// attends to whole key blocks:
//
//	window: blocks q-1, q (and q+1 both ways)
//	global: the first G blocks (both ways, the G global blocks attend to everything)
//	random: R more blocks per (head, query block), drawn once from the blocks
//	        outside the window and the globals (causal: before q-1) by a hash
//	        of (seed, layer, head, q, slot): a fixed layout, no tables to store
//	K(i) = positions of those blocks (causal: j <= i)
//
// Block form: each query block scores its window blocks (neighbourBlocks),
// the global blocks and its random blocks gathered per head: (2 or 3 + G + R)
// blocks of b keys. Cost per head: n·b·(2+G+R) scores causal,
// n·b·(3+G+R) + G·b·n both ways: linear in n.
type BigBird struct {
	SeqLen int    // n: both ways the random blocks are drawn from the whole sequence
	Block  int    // b, which divides n
	Global int    // G global blocks
	Random int    // R random blocks per query block
	Heads  int    // H: each head has its own random blocks
	Seed   uint64 // the random layout of this layer
	Causal bool
}

func (bb BigBird) blocks() int { return bb.SeqLen / bb.Block }

func (bb BigBird) Name() string  { return "bigbird" }
func (bb BigBird) PerHead() bool { return bb.Random > 0 }

func (bb BigBird) windowAfter() int {
	if bb.Causal {
		return 0
	}
	return 1
}

// inWindow reports whether key block kb is in query block q's window.
func (bb BigBird) inWindow(q, kb int) bool { return kb >= q-1 && kb <= q+bb.windowAfter() }

// candidates are the blocks random blocks are drawn from, in order: not in
// the window, not global, and (causal) before the window.
func (bb BigBird) candidates(q, blocks int) []int {
	end := blocks
	if bb.Causal {
		end = max(0, q-1)
	}
	var out []int
	for kb := bb.Global; kb < end; kb++ {
		if !bb.inWindow(q, kb) {
			out = append(out, kb)
		}
	}
	return out
}

// randomBlocks are head h's random key blocks for query block q (fewer than R
// when there are not enough candidates).
func (bb BigBird) randomBlocks(head, q int) []int {
	candidates := bb.candidates(q, bb.blocks())
	picks := min(bb.Random, len(candidates))
	chosen := make([]int, 0, picks)
	taken := make(map[int]bool, picks)
	for slot := range picks {
		x := int(splitmix(bb.Seed^uint64(head)<<40^uint64(q)<<8^uint64(slot)) % uint64(len(candidates)))
		for taken[x] { // probe to the next free candidate: picks are distinct
			x = (x + 1) % len(candidates)
		}
		taken[x] = true
		chosen = append(chosen, candidates[x])
	}
	return chosen
}

// splitmix is SplitMix64's finaliser: a fixed, well-mixed hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (bb BigBird) Allows(head, query, key int) bool {
	if bb.Causal && key > query {
		return false
	}
	q, kb := query/bb.Block, key/bb.Block
	if bb.inWindow(q, kb) || kb < bb.Global || (!bb.Causal && q < bb.Global) {
		return true
	}
	for _, r := range bb.randomBlocks(head, q) {
		if r == kb {
			return true
		}
	}
	return false
}

func (bb BigBird) ScoredPairs(n int) int64 {
	scores := int64(n) * int64(bb.Block) * int64(bb.keyBlocks())
	if !bb.Causal {
		scores += int64(bb.Global*bb.Block) * int64(n)
	}
	return scores
}

// keyBlocks is the number of key blocks each query block scores.
func (bb BigBird) keyBlocks() int { return 2 + bb.windowAfter() + bb.Global + bb.Random }

// AllowedPairs: blocks are whole (b divides n), so K(i) is a union of whole
// key blocks (the query's own block causally); per query block only a few
// near the start and the end differ from the rest, which are counted at once.
func (bb BigBird) AllowedPairs(heads, n int) int64 {
	blocks, b := int64(bb.blocks()), int64(bb.Block)
	var below int64 // key blocks wholly seen, summed over query blocks
	edge := min(blocks, int64(bb.Global+2))
	for q := range edge {
		below += int64(bb.seenBlocks(int(q)))
	}
	for q := max(edge, blocks-2); q < blocks; q++ {
		below += int64(bb.seenBlocks(int(q)))
	}
	if interior := blocks - 2 - edge; interior > 0 { // query blocks edge .. blocks-3
		if bb.Causal {
			// q-1, the G globals and min(R, q-1-G) random blocks before the window
			below += interior*int64(1+bb.Global) + windowSum(int(blocks-3-int64(bb.Global)), bb.Random) - windowSum(int(edge-1-int64(bb.Global)), bb.Random)
		} else {
			below += interior * int64(3+bb.Global+min(bb.Random, int(blocks)-bb.Global-3))
		}
	}
	own := int64(0) // the causal triangle of each query block
	if bb.Causal {
		own = blocks * causalPairs(bb.Block)
	}
	return below*b*b + own
}

// seenBlocks is the number of key blocks query block q sees whole: causal, the
// blocks before it; both ways, every block of its K.
func (bb BigBird) seenBlocks(q int) int {
	blocks := bb.blocks()
	if !bb.Causal && q < bb.Global {
		return blocks
	}
	seen := map[int]bool{}
	for kb := max(0, q-1); kb <= min(blocks-1, q+bb.windowAfter()); kb++ {
		seen[kb] = true
	}
	for kb := range min(bb.Global, blocks) {
		seen[kb] = true
	}
	for _, kb := range bb.randomBlocks(0, q) {
		seen[kb] = true
	}
	if bb.Causal {
		delete(seen, q) // counted as a triangle
		for kb := range seen {
			if kb > q {
				delete(seen, kb)
			}
		}
	}
	return len(seen)
}

func (bb BigBird) spec() blockSpec {
	return blockSpec{size: bb.Block, before: 1, after: bb.windowAfter()}
}

// Attend scores, per query block, its window, the global blocks and its
// random blocks in one softmax; both ways the global query blocks then
// replace their rows with attention to every position.
func (bb BigBird) Attend(q, k, v *graph.Node, drop Dropout) *graph.Node {
	g := q.Graph()
	n, headDim := q.Shape().Dim(2), q.Shape().Dim(3)
	spec := bb.spec()
	scaled := graph.MulScalar(q, 1/math.Sqrt(float64(headDim)))
	queries := toBlocks(scaled, spec) // [B, H, nb, b, d]
	keyBlocks, valueBlocks := toBlocks(k, spec), toBlocks(v, spec)
	keys, values := bb.gatherKeys(keyBlocks), bb.gatherKeys(valueBlocks)
	out := fromBlocks(attendBlocks(queries, keys, values, bb.mask(g, spec, n), drop), n)
	if bb.Causal || bb.Global == 0 {
		return out
	}
	globalRows := bb.Global * bb.Block
	global := graph.Einsum("bhqd,bhkd->bhqk", graph.SliceAxis(scaled, 2, graph.AxisRange(0, globalRows)), k)
	globalOut := graph.Einsum("bhqk,bhkd->bhqd", drop.apply(graph.Softmax(global, -1)), v)
	return graph.Concatenate([]*graph.Node{globalOut, graph.SliceAxis(out, 2, graph.AxisRangeToEnd(globalRows))}, 2)
}

// gatherKeys lays out each query block's key blocks [B, H, nb, keyBlocks·b, d]:
// its window, the G global blocks, then its R random blocks (a missing random
// block, where there are too few candidates, is a zero block the mask hides).
func (bb BigBird) gatherKeys(blocks *graph.Node) *graph.Node {
	dims := blocks.Shape().Dimensions
	batch, heads, nb, b, d := dims[0], dims[1], dims[2], dims[3], dims[4]
	parts := []*graph.Node{neighbourBlocks(blocks, bb.spec())}
	if bb.Global > 0 {
		global := graph.Reshape(graph.SliceAxis(blocks, 2, graph.AxisRange(0, bb.Global)), batch, heads, 1, bb.Global*b, d)
		parts = append(parts, graph.BroadcastToDims(global, batch, heads, nb, bb.Global*b, d))
	}
	if bb.Random > 0 {
		withZero := padSeq(blocks, 2, 0, 1)                                              // block nb is zeros
		byHead := graph.TransposeAllAxes(withZero, 1, 2, 0, 3, 4)                        // [H, nb+1, B, b, d]
		random := graph.Gather(byHead, graph.Const(blocks.Graph(), bb.table(heads, nb))) // [H, nb, R, B, b, d]
		random = graph.TransposeAllAxes(random, 3, 0, 1, 2, 4, 5)
		parts = append(parts, graph.Reshape(random, batch, heads, nb, bb.Random*b, d))
	}
	return graph.Concatenate(parts, 3)
}

// table is the random layout as Gather indices [H, nb, R, 2] of (head, block);
// block nb (zeros) fills the slots of query blocks with too few candidates.
func (bb BigBird) table(heads, nb int) [][][][]int32 {
	out := make([][][][]int32, heads)
	for h := range heads {
		out[h] = make([][][]int32, nb)
		for q := range nb {
			out[h][q] = make([][]int32, bb.Random)
			picks := bb.randomBlocks(h, q)
			for r := range bb.Random {
				block := nb
				if r < len(picks) {
					block = picks[r]
				}
				out[h][q][r] = []int32{int32(h), int32(block)}
			}
		}
	}
	return out
}

// mask is K(i) over the gathered key slots: the window's exact positions
// (causal: j <= i), global blocks not already in the window, random blocks
// that exist.
func (bb BigBird) mask(g *graph.Graph, spec blockSpec, n int) *graph.Node {
	query, windowKey := spec.positions(g, n) // [1,1,nb,b,1], [1,1,nb,1,window·b]
	window := graph.LogicalAnd(within(windowKey, n), graph.GreaterOrEqual(windowKey, int32Scalar(g, 0)))
	if bb.Causal {
		window = graph.LogicalAnd(window, graph.LessOrEqual(windowKey, query))
	}
	parts := []*graph.Node{graph.BroadcastToDims(window, 1, 1, n/bb.Block, bb.Block, windowKey.Shape().Dim(4))}
	queryBlock := graph.Div(query, int32Scalar(g, bb.Block))
	if bb.Global > 0 {
		globalKey := graph.Iota(g, shapeInt32(1, 1, 1, 1, bb.Global*bb.Block), 4)
		globalBlock := graph.Div(globalKey, int32Scalar(g, bb.Block))
		notWindow := graph.LogicalOr(graph.LessThan(globalBlock, graph.AddScalar(queryBlock, -1)),
			graph.GreaterThan(globalBlock, graph.AddScalar(queryBlock, bb.windowAfter())))
		parts = append(parts, graph.BroadcastToDims(notWindow, 1, 1, n/bb.Block, bb.Block, bb.Global*bb.Block))
	}
	if bb.Random > 0 {
		exists := make([][]bool, 0) // [H·nb, R·b]: the slot holds a drawn block
		heads := bb.Heads
		for h := range heads {
			for q := range n / bb.Block {
				row := make([]bool, bb.Random*bb.Block)
				for r := range len(bb.randomBlocks(h, q)) {
					for j := range bb.Block {
						row[r*bb.Block+j] = true
					}
				}
				exists = append(exists, row)
			}
		}
		random := graph.Reshape(graph.Const(g, exists), 1, heads, n/bb.Block, 1, bb.Random*bb.Block)
		parts = append(parts, graph.BroadcastToDims(random, 1, heads, n/bb.Block, bb.Block, bb.Random*bb.Block))
		for i := range len(parts) - 1 {
			dims := parts[i].Shape().Dimensions
			parts[i] = graph.BroadcastToDims(parts[i], 1, heads, dims[2], dims[3], dims[4])
		}
	}
	return graph.Concatenate(parts, 4)
}

// bigbirdOptions are the BigBird family's own options.
type bigbirdOptions struct {
	Block  int
	Global int
	Random int
	Seed   int64
}

func init() {
	Register(Spec[bigbirdOptions]{
		Name: "bigbird", Order: 101, Bidirectional: true, Benchmark: true,
		Paper:    "BigBird (arXiv 2007.14062), a π-Attention baseline",
		Summary:  "blocks attending to their neighbours, a few global blocks and random blocks",
		Defaults: bigbirdOptions{Block: 64, Global: 1, Random: 2, Seed: 1},
		Options: option.Table[bigbirdOptions]{
			option.Int("block", "block size b (must divide n)", func(o *bigbirdOptions) *int { return &o.Block }, option.AtLeast(1)),
			option.Int("global_blocks", "global blocks G: the first G blocks, seen by every query", func(o *bigbirdOptions) *int { return &o.Global }, option.AtLeast(0)),
			option.Int("random_blocks", "random key blocks R per query block and head", func(o *bigbirdOptions) *int { return &o.Random }, option.AtLeast(0)),
			option.Int64("layout_seed", "seed of the random layout (each layer and head draws its own from it)", func(o *bigbirdOptions) *int64 { return &o.Seed }),
		},
		Validate: func(c Config, o bigbirdOptions) error {
			if c.SeqLen%o.Block != 0 {
				return fmt.Errorf("block size block=%d must divide sequence length n=%d", o.Block, c.SeqLen)
			}
			if blocks := c.SeqLen / o.Block; o.Global >= blocks {
				return fmt.Errorf("global blocks global_blocks=%d must be fewer than the n/b=%d blocks", o.Global, blocks)
			}
			return nil
		},
		Layers: func(c Config, o bigbirdOptions) []Layer {
			layers := make([]Layer, c.Layers)
			for i := range layers {
				pattern := BigBird{SeqLen: c.SeqLen, Block: o.Block, Global: o.Global, Random: o.Random, Heads: c.Heads,
					Seed: splitmix(uint64(o.Seed) + uint64(i)), Causal: c.Causal}
				layers[i] = Layer{Pattern: pattern, SeqLen: c.SeqLen, RoPE: true}
			}
			return layers
		},
		BenchWindow: func(o *bigbirdOptions, w int) { o.Block = w },
	})
}
