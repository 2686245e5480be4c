package repl

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
)

func init() {
	Register(&Command{
		Name:    "retrieval",
		Summary: "passkey retrieval or associative recall at growing distances: one model per distance, test accuracy",
		Details: "Trains the model (model options and training options as for `train`) once per distance\n" +
			"on data=passkey or data=assoc, with the next-token loss on the answer only, and reports the\n" +
			"share of test answers predicted whole (what greedy decoding would answer). The distance is\n" +
			"the number of tokens between the fact and the end of the prompt. Runs go to\n" +
			"<run>/distance-<d> (default run: $ECPI_HOME/runs/retrieval-<model>-<data>-<time>).\n" +
			"Notebooks run this command through nb.Do and nb.Query.",
		Options: retrievalOptions(),
		Run:     runRetrieval,
	})
}

func retrievalOptions() []Option {
	opts := trainOptions()
	for i, o := range opts {
		if o.Name == "data" {
			opts[i].Default = "passkey"
			opts[i].Help = "retrieval set"
			opts[i].Values = train.RetrievalNames()
		}
	}
	return append(retrievalDistances.Declare(), opts...)
}

// retrievalDistances is retrieval's own option; the rest are train's, forwarded by name.
var retrievalDistances = Options[retrievalArgs]{
	Table: option.Table[retrievalArgs]{option.Ints("distances", "comma-separated distances, one trained model each",
		func(a *retrievalArgs) *[]int { return &a.Distances }, option.AtLeast(1))},
	Defaults: retrievalArgs{Distances: []int{64, 128, 256}},
}

type retrievalArgs struct{ Distances []int }

func runRetrieval(c *Call) error {
	args, err := retrievalDistances.Read(c)
	if err != nil {
		return err
	}
	distances := args.Distances
	values, err := runValues(c)
	if err != nil {
		return err
	}
	delete(values, "distances")
	o, err := train.ParseOptions(values)
	if err != nil {
		return Usagef("%v", err)
	}
	var line *LossLine
	current := -1
	progress := func(d int, p train.Progress) {
		if d != current {
			line, current = NewLossLine(c, fmt.Sprintf("distance %d", d)), d
		}
		line.Update(p)
	}
	var emitErr error
	results, err := train.Retrieval(c.Ctx, o, distances, progress, func(r *train.RetrievalResult) {
		if line != nil {
			line.End()
		}
		if emitErr == nil {
			emitErr = c.Emit(r)
		}
	})
	if err != nil {
		return err
	}
	c.Session.Remember("retrieval", results)
	return emitErr
}
