package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Image-text retrieval (data=shapes, a proxy for MSCOCO and Flickr30K): a
// dual encoder, one model of the family reading the image's pixels and one
// reading the caption's bytes, trained contrastively so that an image's
// embedding is nearest its own caption's among a batch, and measured by
// recall@1 and @5 in both directions over a whole split.
func init() {
	registerDataset(Dataset{
		Names: func() []string { return []string{"shapes"} }, Kind: TaskMatch, BothWays: true,
		Summary: "image-text matching: generated shapes and their captions, a dual encoder (MSCOCO/Flickr30K stand-in)",
		Reads:   []string{"examples", "pool"},
		Build: func(o Options, cfg models.Config) (task, models.Config, error) {
			return newMatchTask(o, cfg)
		},
		Show: showShapes,
	})
}

// showShapes draws image-caption pairs.
func showShapes(_, _ string, count, pool int) ([]ShownExample, error) {
	pairs, err := data.ShapePairs(count, data.DefaultShapes, 1)
	if err != nil {
		return nil, err
	}
	side := data.DefaultShapes.Side
	var out []ShownExample
	for _, p := range pairs {
		image := p.Image
		if pool > 1 {
			if image, err = data.PoolPixels(image, side, pool); err != nil {
				return nil, err
			}
		}
		out = append(out, ShownExample{Text: p.Text, Pixels: square(image, side/max(pool, 1))})
	}
	return out, nil
}

// embedDim is the width of the shared image-text embedding.
const embedDim = 64

// matchTask keeps each pair as one example, the image's pixels then the
// caption's bytes, so the classification batcher serves it.
type matchTask struct {
	*exampleSet
	text       *models.Model // the caption encoder; the image encoder is the run's model
	pixels     int
	captionLen int
}

// newMatchTask generates the pairs (examples= training pairs, a tenth each for
// valid and test, at least 500 so recall is measured over a real pool) and
// derives the caption encoder from the image encoder's config.
func newMatchTask(o Options, cfg models.Config) (task, models.Config, error) {
	shapes := data.DefaultShapes
	side := shapes.Side
	if o.Pool > 1 {
		if side%o.Pool != 0 {
			return nil, cfg, fmt.Errorf("pool=%d must divide the %d×%d images of %s", o.Pool, side, side, o.Data)
		}
		side /= o.Pool
	}
	pixels := side * side
	if cfg.SeqLen != 0 && cfg.SeqLen != pixels {
		return nil, cfg, fmt.Errorf("option n=%d: data %s has images of %d pixels, which sets n (leave n out)", cfg.SeqLen, o.Data, pixels)
	}
	cfg.SeqLen, cfg.Vocab = pixels, 256
	count := o.Examples
	if count == 0 {
		count = defaultExamples
	}
	sizes := map[string]int{"train": count, "valid": max(500, count/10), "test": max(500, count/10)}
	all, err := data.ShapePairs(sizes["train"]+sizes["valid"]+sizes["test"], shapes, 0x5eed)
	if err != nil {
		return nil, cfg, err
	}
	splits := map[string][]data.Example{}
	next := 0
	for _, split := range data.SplitNames {
		for i := range sizes[split] {
			p := all[next]
			next++
			image := p.Image
			if o.Pool > 1 {
				if image, err = data.PoolPixels(p.Image, shapes.Side, o.Pool); err != nil {
					return nil, cfg, err
				}
			}
			splits[split] = append(splits[split], data.Example{Tokens: slices.Concat(image, p.Caption), Label: int32(i)})
		}
	}
	examples, err := newExampleSet(splits, o, pixels+shapes.CaptionLen)
	if err != nil {
		return nil, cfg, err
	}
	text, err := captionEncoder(cfg, shapes.CaptionLen)
	if err == nil {
		text.Compute = computeType(o.Precision)
	}
	return &matchTask{exampleSet: examples, text: text, pixels: pixels, captionLen: shapes.CaptionLen}, cfg, err
}

// captionEncoder is the image encoder's config at the caption's length; a
// window or block too large for it shrinks to a quarter of the caption.
func captionEncoder(cfg models.Config, length int) (*models.Model, error) {
	cfg.SeqLen = length
	if cfg.Validate() != nil {
		cfg = cfg.WithWindow(length / 4)
	}
	m, err := models.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("the caption encoder (the model at n=%d): %w", length, err)
	}
	return m, nil
}

func (t *matchTask) kind() string { return TaskMatch }
func (t *matchTask) vocab() int   { return 256 }

// embed maps pairs [B, pixels+captionLen] to unit embeddings of the images
// and of the captions, [2, B, embedDim].
func (t *matchTask) embed(m *models.Model, scope *model.Scope, pairs *graph.Node) *graph.Node {
	images := graph.SliceAxis(pairs, 1, graph.AxisRange(0, t.pixels))
	captions := graph.SliceAxis(pairs, 1, graph.AxisRangeToEnd(t.pixels))
	encode := func(name string, encoder *models.Model, tokens *graph.Node) *graph.Node {
		pooled := graph.ReduceMean(graph.ConvertDType(encoder.Trunk(scope.In("%s", name), tokens), dtypes.Float32), 1)
		projected := models.Linear(scope.In("%s_projection", name), pooled, embedDim, false)
		return graph.Div(projected, graph.Sqrt(graph.AddScalar(graph.ReduceAndKeep(graph.Square(projected), graph.ReduceSum, -1), 1e-12)))
	}
	return graph.Stack([]*graph.Node{encode("image", m, images), encode("text", t.text, captions)}, 0)
}

// predict is the batch's image-caption similarities [B images, B captions]:
// cosines times a learned scale (CLIP's temperature: initialised at 1/0.07,
// at most 100).
func (t *matchTask) predict(m *models.Model, scope *model.Scope, pairs *graph.Node) *graph.Node {
	embeddings := t.embed(m, scope, pairs)
	images := graph.Squeeze(graph.SliceAxis(embeddings, 0, graph.AxisRange(0, 1)), 0)
	captions := graph.Squeeze(graph.SliceAxis(embeddings, 0, graph.AxisRange(1, 2)), 0)
	logScale := scope.In("temperature").VariableWithValue("log_scale", float32(math.Log(1/0.07))).NodeValue(pairs.Graph())
	scale := graph.Min(graph.Exp(logScale), graph.Scalar(pairs.Graph(), dtypes.Float32, 100))
	return graph.Mul(graph.Einsum("be,ce->bc", images, captions), scale)
}

// loss is the symmetric contrastive loss (InfoNCE, as CLIP): each image must
// pick its own caption among the batch's, and each caption its image.
func (t *matchTask) loss(_ *models.Model, _, predictions []*graph.Node) *graph.Node {
	logits := predictions[0]
	batch := logits.Shape().Dim(0)
	targets := graph.Iota(logits.Graph(), shapes.Make(dtypes.Int32, 1, batch), 1)
	rows := tokenNLL(graph.InsertAxes(logits, 0), targets)
	cols := tokenNLL(graph.InsertAxes(graph.Transpose(logits, 0, 1), 0), targets)
	return graph.DivScalar(graph.Add(graph.ReduceAllMean(rows), graph.ReduceAllMean(cols)), 2)
}

// evalExec embeds pairs: images and captions [2, B, embedDim].
func (t *matchTask) evalExec(backend compute.Backend, store *model.Store, m *models.Model) *model.Exec {
	return model.MustNewExec(backend, store, func(scope *model.Scope, pairs *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		return t.embed(m, scope, pairs)
	})
}

func (t *matchTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	all, err := t.evalBatches(spec.split, spec.batches)
	if err != nil {
		return nil, err
	}
	var images, captions [][]float32
	for _, b := range all {
		outs, err := r.run(tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen))
		if err != nil {
			return nil, err
		}
		flat := tensors.MustCopyFlatData[float32](outs[0]) // [2, B, E]
		for row := range b.Batch {
			if b.Labels[row] < 0 {
				continue // a row that only fills the last batch
			}
			images = append(images, flat[row*embedDim:(row+1)*embedDim])
			captions = append(captions, flat[(b.Batch+row)*embedDim:(b.Batch+row+1)*embedDim])
		}
	}
	recall := recallAtK(images, captions)
	return &Eval{Split: spec.split, Count: int64(len(images)), Recall: recall,
		Acc: (recall["image_to_text@1"] + recall["text_to_image@1"]) / 2}, nil
}

// recallAtK measures, over the pool of pairs, how often an image's own
// caption ranks first (and within the first five) among all captions, and the
// other way round.
func recallAtK(images, captions [][]float32) map[string]float64 {
	n := len(images)
	similarity := func(i, c int) float64 {
		var dot float64
		for e := range images[i] {
			dot += float64(images[i][e]) * float64(captions[c][e])
		}
		return dot
	}
	sims := make([][]float64, n)
	for i := range n {
		sims[i] = make([]float64, n)
		for c := range n {
			sims[i][c] = similarity(i, c)
		}
	}
	rank := func(scores []float64, own int) int { // how many candidates beat the own one
		beaten := 0
		for j, s := range scores {
			if j != own && s > scores[own] {
				beaten++
			}
		}
		return beaten
	}
	out := map[string]float64{}
	column := make([]float64, n)
	for i := range n {
		forImage := rank(sims[i], i)
		for c := range n {
			column[c] = sims[c][i]
		}
		forCaption := rank(column, i)
		for _, k := range []int{1, 5} {
			out[fmt.Sprintf("image_to_text@%d", k)] += boolToFloat(forImage < k) / float64(n)
			out[fmt.Sprintf("text_to_image@%d", k)] += boolToFloat(forCaption < k) / float64(n)
		}
	}
	return out
}

func boolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
