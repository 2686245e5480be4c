package train

import (
	"fmt"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
)

// The kinds of task; the data name decides which one a run is (Dataset).
const (
	TaskLM       = "lm"       // next-token prediction on a text corpus
	TaskClassify = "classify" // sequence classification (pixel sequences, LRA tasks)
	TaskRetrieve = "retrieve" // a prompt then its answer: next-token loss on the answer only, accuracy of whole answers
	TaskMatch    = "match"    // image-text retrieval by a dual encoder (match.go)
)

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
	// evalExec compiles (lazily) the task's evaluation graph (dropout off),
	// which evaluate runs through its evaluator.
	evalExec(backend compute.Backend, store *model.Store, m *models.Model) *model.Exec
	evaluate(r *evaluator, spec evalSpec) (*Eval, error)
}

// textTask is a task on text that a model can continue (sample) and read
// (probes): its tokenizer and corpus.
type textTask interface {
	text() (data.Tokenizer, *data.Corpus)
}

// Eval is a validation or test measurement.
type Eval struct {
	Split string  `json:"split"`
	Loss  float64 `json:"loss"`          // mean nats per scored token (LM) or example
	PPL   float64 `json:"ppl,omitempty"` // exp(loss), LM
	BPC   float64 `json:"bpc,omitempty"` // bits per character, byte-level LM
	// A token-level LM's loss in bits per token, and per byte of the text.
	BitsPerToken float64 `json:"bits_per_token,omitempty"`
	BPB          float64 `json:"bpb,omitempty"`
	Acc          float64 `json:"acc,omitempty"`      // classification accuracy
	Count        int64   `json:"count"`              // scored tokens (LM) or examples
	Windows      int     `json:"windows,omitempty"`  // LM: windows of n+1 tokens scored
	Protocol     string  `json:"protocol,omitempty"` // LM: ProtocolECPI or ProtocolAuthors
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

// tokenNLL is -log softmax(logits)[target] per position: logits [B, len, V],
// targets [B, len] -> [B, len]. Gathering the target's logit avoids a
// [B, len, V] one-hot, which for GPT-2's 50k vocabulary would double the
// largest tensor of the step; indexing (batch, position, target) rather than
// flattened rows keeps the position axis whole for XLA to split across
// devices (parallel=sequence).
func tokenNLL(logits, targets *graph.Node) *graph.Node {
	dims := logits.Shape().Dimensions
	g := logits.Graph()
	positions := shapes.Make(dtypes.Int32, dims[0], dims[1], 1)
	index := graph.Concatenate([]*graph.Node{graph.Iota(g, positions, 0), graph.Iota(g, positions, 1),
		graph.InsertAxes(graph.ConvertDType(targets, dtypes.Int32), -1)}, 2)
	return graph.Neg(graph.Gather(graph.LogSoftmax(logits, -1), index))
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

// firstExample is the tokens of the first validation example, which the
// probes read when there is no text to give a model.
func (e *exampleSet) firstExample() []int32 { return e.splits["valid"][0].Tokens }

// next is the next training batch: rows padded to length and their labels
// (a retrieval task, whose labels are targets, makes its own).
func (e *exampleSet) next() train.Batch {
	b := e.nextPadded()
	return train.Batch{
		Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Inputs, b.Batch, b.SeqLen)},
		Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(b.Labels, b.Batch)},
	}
}

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
