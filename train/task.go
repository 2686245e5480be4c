package train

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
)

// The three kinds of task; the data name decides which one a run is.
const (
	TaskLM       = "lm"       // next-token prediction on a text corpus
	TaskClassify = "classify" // sequence classification (pixel sequences, LRA tasks)
	TaskRetrieve = "retrieve" // a prompt then its answer: next-token loss on the answer only, accuracy of whole answers
)

// TaskOf tells which kind of task data name is.
func TaskOf(name string) (string, error) {
	switch {
	case slices.Contains(data.CorpusNames(), name):
		return TaskLM, nil
	case slices.Contains(data.ImageSetNames, name):
		return TaskClassify, nil
	}
	if g, ok := generatedSets[name]; ok {
		return g.kind, nil
	}
	if name == shapesData {
		return TaskMatch, nil
	}
	return "", fmt.Errorf("unknown data %q; corpora: %s; classification: %s; retrieval: %s; image-text matching: %s", name,
		strings.Join(data.CorpusNames(), ", "), strings.Join(ClassificationNames(), ", "), strings.Join(RetrievalNames(), ", "), shapesData)
}

// ClassificationNames lists the classification sets train accepts.
func ClassificationNames() []string {
	return append(slices.Clone(data.ImageSetNames), generatedNames(TaskClassify)...)
}

// RetrievalNames lists the retrieval sets (passkey, assoc).
func RetrievalNames() []string { return generatedNames(TaskRetrieve) }

// task is what a run trains on: batches for the trainer, the model's head
// and loss, and the validation metric.
type task interface {
	kind() string
	vocab() int
	// inputLength is the length of a row of the model's input: a training
	// step is declared with it (declareStep), so it must be the one next gives.
	inputLength() int
	next() train.Batch
	state() data.BatchState
	restore(data.BatchState)
	predict(m *models.Model, scope *model.Scope, tokens *graph.Node) *graph.Node
	loss(m *models.Model, labels, predictions []*graph.Node) *graph.Node
	evaluate(r *evaluator, spec evalSpec) (*Eval, error)
}

// Eval is a validation or test measurement.
type Eval struct {
	Split    string  `json:"split"`
	Loss     float64 `json:"loss"`               // mean nats per scored token (LM) or example
	PPL      float64 `json:"ppl,omitempty"`      // exp(loss), LM
	BPC      float64 `json:"bpc,omitempty"`      // bits per character, byte-level LM
	Acc      float64 `json:"acc,omitempty"`      // classification accuracy
	Count    int64   `json:"count"`              // scored tokens (LM) or examples
	Windows  int     `json:"windows,omitempty"`  // LM: windows of n+1 tokens scored
	Protocol string  `json:"protocol,omitempty"` // LM: ProtocolECPI or ProtocolAuthors
	// ByPosition is the mean loss at each window position the model scores
	// (from FirstPosition on), over every evaluation window (ecpi's protocol).
	ByPosition []float64 `json:"by_position,omitempty"`
	// Recall is image-text retrieval's recall@1 and @5 in both directions (TaskMatch).
	Recall        map[string]float64 `json:"recall,omitempty"`
	FirstPosition int                `json:"first_position,omitempty"`
	Step          int                `json:"step,omitempty"` // the training step it measured (0: `ecpi eval` of a checkpoint)
}

// LossFrom is the mean loss of positions from..n-1 of the window: scored on
// the same positions, models trained on every position compare like for like
// with models trained on their latents (from = n - latents).
func (e *Eval) LossFrom(from int) (float64, error) {
	if len(e.ByPosition) == 0 || from < e.FirstPosition || from >= e.FirstPosition+len(e.ByPosition) {
		return 0, fmt.Errorf("no loss by position from %d (measured from %d to %d)", from, e.FirstPosition, e.FirstPosition+len(e.ByPosition)-1)
	}
	var sum float64
	for _, v := range e.ByPosition[from-e.FirstPosition:] {
		sum += v
	}
	return sum / float64(len(e.ByPosition)-(from-e.FirstPosition)), nil
}

// lmTask trains on random windows of a corpus and evaluates with ecpi's
// protocol (windows of n+1 tokens, stride n/2, every target once) or the ECP
// authors' (see authorsWindowMeans and authorsRandomWindows).
type lmTask struct {
	tok     data.Tokenizer
	corpus  *data.Corpus
	batches *data.LMBatches
	n       int
	batch   int
}

func newLMTask(o Options, n int) (*lmTask, error) {
	tok, err := data.NewTokenizer(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	corpus, err := data.LoadCorpus(o.Home, o.Data)
	if err != nil {
		return nil, err
	}
	t := &lmTask{tok: tok, corpus: corpus, n: n, batch: o.Batch}
	if n > 0 {
		tokens, err := corpus.Tokens(tok, "train")
		if err != nil {
			return nil, err
		}
		if t.batches, err = data.NewLMBatches(tokens, o.Batch, n, uint64(o.Seed)); err != nil {
			return nil, fmt.Errorf("corpus %s, train split: %w", o.Data, err)
		}
	}
	return t, nil
}

func (t *lmTask) kind() string              { return TaskLM }
func (t *lmTask) vocab() int                { return t.tok.VocabSize() }
func (t *lmTask) inputLength() int          { return t.n }
func (t *lmTask) state() data.BatchState    { return t.batches.State() }
func (t *lmTask) restore(s data.BatchState) { t.batches.Restore(s) }

func (t *lmTask) next() train.Batch {
	b := t.batches.Next()
	return train.Batch{
		Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen)},
		Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Targets, b.Batch, b.SeqLen)},
	}
}

func (t *lmTask) predict(m *models.Model, scope *model.Scope, tokens *graph.Node) *graph.Node {
	return m.Logits(scope, tokens)
}

func (t *lmTask) loss(m *models.Model, labels, predictions []*graph.Node) *graph.Node {
	targets := graph.SliceAxis(labels[0], 1, graph.AxisRangeToEnd(m.LossStart()))
	return graph.ReduceAllMean(tokenNLL(predictions[0], targets))
}

// tokenNLL is -log softmax(logits)[target] per position: logits [B, len, V],
// targets [B, len] -> [B, len]. Gathering the target's logit avoids a
// [B, len, V] one-hot, which for GPT-2's 50k vocabulary would double the
// largest tensor of the step.
func tokenNLL(logits, targets *graph.Node) *graph.Node {
	dims := logits.Shape().Dimensions
	rows := dims[0] * dims[1]
	flat := graph.Reshape(logits, rows, dims[2])
	g := logits.Graph()
	rowIndex := graph.Iota(g, shapes.Make(dtypes.Int32, rows, 1), 0)
	index := graph.Concatenate([]*graph.Node{rowIndex, graph.Reshape(graph.ConvertDType(targets, dtypes.Int32), rows, 1)}, 1)
	logProbs := graph.Gather(graph.LogSoftmax(flat, -1), index)
	return graph.Reshape(graph.Neg(logProbs), dims[0], dims[1])
}

func (t *lmTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	tokens, err := t.corpus.Tokens(t.tok, spec.split)
	if err != nil {
		return nil, err
	}
	var e *Eval
	switch {
	case spec.protocol == ProtocolAuthors && t.tok.Name() == "byte":
		e, err = t.authorsRandomWindows(r, tokens, spec)
	case spec.protocol == ProtocolAuthors:
		e, err = t.authorsWindowMeans(r, tokens, spec)
	default:
		e, err = t.everyTargetOnce(r, tokens, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus %s, %s split: %w", t.corpus.Name, spec.split, err)
	}
	e.Split, e.Protocol = spec.split, spec.protocol
	e.PPL = math.Exp(e.Loss)
	if t.tok.Name() == "byte" {
		e.BPC = e.Loss / math.Ln2
	}
	return e, nil
}

// everyTargetOnce is ecpi's protocol: windows of n+1 tokens at stride n/2,
// every target of the split scored once (with at least n/2 tokens of context
// after the first window), by the positions that carry the model's loss. It
// also measures the loss by position within the window (every window, every
// scored position), where ECP's refined history should show.
func (t *lmTask) everyTargetOnce(r *evaluator, tokens []int32, spec evalSpec) (*Eval, error) {
	windows, err := data.EvalWindows(tokens, t.n)
	if err != nil {
		return nil, err
	}
	if spec.batches > 0 {
		windows = windows[:min(len(windows), spec.batches*t.batch)]
	}
	start := r.model.LossStart()
	byPosition := make([]float64, t.n)
	var sumNLL, count float64
	err = t.scoreWindows(r, windows, func(w data.EvalWindow, nll []float32) {
		for j, v := range nll {
			position := start + j
			byPosition[position] += float64(v) / float64(len(windows))
			if position >= w.FirstCounted {
				sumNLL, count = sumNLL+float64(v), count+1
			}
		}
	})
	return &Eval{Loss: sumNLL / max(count, 1), Count: int64(count), Windows: len(windows), ByPosition: byPosition[start:], FirstPosition: start}, err
}

// authorsWindowMeans is the ECP authors' perplexity (ECPTransformer_main.py,
// compute_perplexity_huggingface): windows of n+1 tokens at stride n/2 from
// the start, a tail that does not fill a window dropped; each window's mean
// loss over all the positions the model scores (so overlapping targets count
// twice), then the mean of the window means.
func (t *lmTask) authorsWindowMeans(r *evaluator, tokens []int32, spec evalSpec) (*Eval, error) {
	var windows []data.EvalWindow
	for start := 0; start+t.n+1 <= len(tokens); start += max(1, t.n/2) {
		windows = append(windows, data.EvalWindow{Start: start, Inputs: tokens[start : start+t.n], Targets: tokens[start+1 : start+t.n+1]})
	}
	if len(windows) == 0 {
		return nil, fmt.Errorf("token stream of %d tokens is shorter than one window of n+1 = %d", len(tokens), t.n+1)
	}
	if spec.batches > 0 {
		windows = windows[:min(len(windows), spec.batches*t.batch)]
	}
	return t.meanOfWindowMeans(r, windows)
}

// authorsRandomWindows is the ECP authors' character-level measurement
// (MyNLPDataSet and the validation loop of ECPTransformer_main.py): batches of
// windows of n+1 tokens at random starts (1000 batches; fewer with
// eval_batches), the mean of the batch losses. The seed is fixed, so two
// models see the same windows.
func (t *lmTask) authorsRandomWindows(r *evaluator, tokens []int32, spec evalSpec) (*Eval, error) {
	if len(tokens) < t.n+2 {
		return nil, fmt.Errorf("token stream of %d tokens is shorter than one window of n+1 = %d", len(tokens), t.n+1)
	}
	batches := cmp.Or(spec.batches, authorsBatches)
	rng := rand.New(rand.NewPCG(0xec9, uint64(t.n)))
	windows := make([]data.EvalWindow, batches*t.batch)
	for i := range windows {
		start := rng.IntN(len(tokens) - t.n - 1)
		windows[i] = data.EvalWindow{Start: start, Inputs: tokens[start : start+t.n], Targets: tokens[start+1 : start+t.n+1]}
	}
	return t.meanOfWindowMeans(r, windows) // every batch is full, so the mean of window means is the mean of batch means
}

// authorsBatches is the number of random batches the authors average.
const authorsBatches = 1000

func (t *lmTask) meanOfWindowMeans(r *evaluator, windows []data.EvalWindow) (*Eval, error) {
	var sumMeans, count float64
	err := t.scoreWindows(r, windows, func(_ data.EvalWindow, nll []float32) {
		var sum float64
		for _, v := range nll {
			sum += float64(v)
		}
		sumMeans, count = sumMeans+sum/float64(len(nll)), count+float64(len(nll))
	})
	return &Eval{Loss: sumMeans / float64(len(windows)), Count: int64(count), Windows: len(windows)}, err
}

// scoreWindows runs the evaluation graph over windows in batches and hands
// each real window with the loss of each position its model scores to add.
func (t *lmTask) scoreWindows(r *evaluator, windows []data.EvalWindow, add func(w data.EvalWindow, nll []float32)) error {
	scored := t.n - r.model.LossStart()
	for i := 0; i < len(windows); i += t.batch {
		group := windows[i:min(i+t.batch, len(windows))]
		inputs, targets, _ := data.EvalBatch(padWindows(group, t.batch))
		outs, err := r.run(r.lmExec,
			tensors.FromFlatDataAndDimensions(inputs, t.batch, t.n),
			tensors.FromFlatDataAndDimensions(targets, t.batch, t.n))
		if err != nil {
			return err
		}
		nll := tensors.MustCopyFlatData[float32](outs[0])
		for w := range group {
			add(group[w], nll[w*scored:(w+1)*scored])
		}
	}
	return nil
}

// padWindows fills a last, short group up to the batch size with copies of
// its first window whose targets are all context (weight 0).
func padWindows(ws []data.EvalWindow, batch int) []data.EvalWindow {
	out := slices.Clone(ws)
	for len(out) < batch {
		w := ws[0]
		w.FirstCounted = len(w.Targets)
		out = append(out, w)
	}
	return out
}

// exampleSet is a dataset of examples (images, generated tasks): its splits
// and the shuffling training batcher; every sequence is padded to length.
type exampleSet struct {
	splits        map[string][]data.Example
	batches       *data.ClassBatches
	batch, length int
}

func newExampleSet(splits map[string][]data.Example, o Options, length int) (*exampleSet, error) {
	batches, err := data.NewClassBatches(splits["train"], o.Batch, 0, uint64(o.Seed))
	return &exampleSet{splits: splits, batches: batches, batch: o.Batch, length: length}, err
}

func (e *exampleSet) inputLength() int          { return e.length }
func (e *exampleSet) state() data.BatchState    { return e.batches.State() }
func (e *exampleSet) restore(s data.BatchState) { e.batches.Restore(s) }

// nextPadded is the next training batch with its rows padded to length.
func (e *exampleSet) nextPadded() data.ClassBatch {
	b := e.batches.Next()
	b.Inputs, b.SeqLen = padTo(b.Inputs, b.Batch, b.SeqLen, e.length), e.length
	return b
}

// evalBatches goes through a split once (at most batches batches; 0: all),
// rows padded to length.
func (e *exampleSet) evalBatches(split string, batches int) ([]data.ClassBatch, error) {
	examples, ok := e.splits[split]
	if !ok {
		return nil, fmt.Errorf("split %q unknown (valid: %s)", split, strings.Join(data.SplitNames, ", "))
	}
	all := data.ClassEvalBatches(examples, e.batch, 0)
	if batches > 0 {
		all = all[:min(len(all), batches)]
	}
	for i, b := range all {
		all[i].Inputs, all[i].SeqLen = padTo(b.Inputs, b.Batch, b.SeqLen, e.length), e.length
	}
	return all, nil
}

// padTo widens rows of a row-major [rows, from] matrix to `to` columns with 0
// (the batcher pads to its split's longest example, the model needs one n).
func padTo(x []int32, rows, from, to int) []int32 {
	if from == to {
		return x
	}
	out := make([]int32, rows*to)
	for r := range rows {
		copy(out[r*to:], x[r*from:(r+1)*from])
	}
	return out
}

// longest is the length of the longest example of any split.
func longest(splits map[string][]data.Example) int {
	n := 0
	for _, examples := range splits {
		for _, e := range examples {
			n = max(n, len(e.Tokens))
		}
	}
	return n
}

// classTask trains a classifier on token sequences (pixels, ListOps, Pathfinder).
type classTask struct {
	*exampleSet
	classes, voc int
}

// newImageTask reads an image set as pixel sequences; their length is the model's n.
func newImageTask(o Options) (*classTask, error) {
	set, err := data.LoadImages(o.Home, o.Data)
	if err != nil {
		return nil, err
	}
	if o.Pool > 1 {
		if set, err = set.Pooled(o.Pool); err != nil {
			return nil, err
		}
	}
	splits := map[string][]data.Example{}
	for _, split := range data.SplitNames {
		if splits[split], err = set.Sequences(split, false); err != nil {
			return nil, err
		}
	}
	examples, err := newExampleSet(splits, o, longest(splits))
	return &classTask{exampleSet: examples, classes: 10, voc: 256}, err
}

func (t *classTask) kind() string { return TaskClassify }
func (t *classTask) vocab() int   { return t.voc }

func (t *classTask) next() train.Batch {
	b := t.nextPadded()
	return train.Batch{
		Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen)},
		Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Labels, b.Batch)},
	}
}

func (t *classTask) predict(m *models.Model, scope *model.Scope, tokens *graph.Node) *graph.Node {
	return m.ClassLogits(scope, tokens, t.classes)
}

func (t *classTask) loss(_ *models.Model, labels, predictions []*graph.Node) *graph.Node {
	logits := graph.InsertAxes(predictions[0], 1) // [B, 1, classes]
	return graph.ReduceAllMean(tokenNLL(logits, graph.InsertAxes(labels[0], 1)))
}

func (t *classTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	split := spec.split
	all, err := t.evalBatches(split, spec.batches)
	if err != nil {
		return nil, err
	}
	var sumNLL float64
	var correct, count int64
	for _, b := range all {
		outs, err := r.run(r.classExec,
			tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen),
			tensors.FromFlatDataAndDimensions(b.Labels, b.Batch))
		if err != nil {
			return nil, err
		}
		sumNLL += float64(outs[0].Value().(float32))
		correct += int64(outs[1].Value().(float32))
		count += int64(outs[2].Value().(float32))
	}
	n := float64(max(count, 1))
	return &Eval{Split: split, Loss: sumNLL / n, Acc: float64(correct) / n, Count: count}, nil
}
