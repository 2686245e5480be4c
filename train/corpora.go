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
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
)

func init() {
	registerDataset(Dataset{
		Names: data.CorpusNames, Kind: TaskLM,
		Summary: "language model: next-token prediction on a text corpus (WikiText-103 and PG-19 stand-ins); n= is the window",
		Reads:   []string{"tokenizer"},
		Build:   buildCorpus,
		Show:    showCorpus,
	})
}

// buildCorpus cuts the corpus into windows of n (0: models.DefaultSeqLen).
func buildCorpus(o Options, cfg models.Config) (task, models.Config, error) {
	cfg.SeqLen = cmp.Or(cfg.SeqLen, models.DefaultSeqLen)
	if err := cfg.Validate(); err != nil { // before reading the corpus
		return nil, cfg, err
	}
	t, err := newLMTask(o, cfg.SeqLen)
	return t, cfg, err
}

// showCorpus shows excerpts of the validation split, evenly spaced.
func showCorpus(home, name string, count, _ int) ([]ShownExample, error) {
	corpus, err := data.LoadCorpus(home, name)
	if err != nil {
		return nil, err
	}
	const excerpt = 240
	var out []ShownExample
	for i := range count {
		start := (i + 1) * len(corpus.Valid) / (count + 1)
		out = append(out, ShownExample{Text: strings.ToValidUTF8(corpus.Valid[start:min(start+excerpt, len(corpus.Valid))], "")})
	}
	return out, nil
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
	corpus, err := data.LoadCorpus(o.Home, o.Data)
	if err != nil {
		return nil, err
	}
	tok, err := data.CorpusTokenizer(o.Home, o.Data, o.Tokenizer)
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

func (t *lmTask) text() (data.Tokenizer, *data.Corpus) { return t.tok, t.corpus }

// evalExec: (tokens [B,n], targets [B,n]) -> the loss of every scored position [B, n-start].
func (t *lmTask) evalExec(backend compute.Backend, store *model.Store, m *models.Model) *model.Exec {
	return model.MustNewExec(backend, store, func(scope *model.Scope, tokens, targets *graph.Node) *graph.Node {
		defer models.RaiseAsError()
		logits := m.Logits(scope, tokens)
		return tokenNLL(logits, graph.SliceAxis(targets, 1, graph.AxisRangeToEnd(m.LossStart())))
	})
}

func (t *lmTask) evaluate(r *evaluator, spec evalSpec) (*Eval, error) {
	text, err := t.corpus.Split(spec.split)
	if err != nil {
		return nil, err
	}
	tokens := t.tok.Encode(text)
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
	if ppl := math.Exp(e.Loss); !math.IsInf(ppl, 0) { // a loss past 709 nats has no float64 perplexity
		e.PPL = ppl
	}
	if t.tok.Name() == "byte" {
		e.BPC = e.Loss / math.Ln2
	} else {
		// Per byte of the split's own text: a lossy tokenizer's decoded tokens
		// lack its white space. Where eval_batches scores part of the split,
		// its tokens are taken to cover the split's mean bytes each.
		e.BitsPerToken = e.Loss / math.Ln2
		e.BPB = data.BitsPerByte(e.BitsPerToken, len(tokens), len(text))
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
		outs, err := r.run(
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
