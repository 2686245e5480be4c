package repl

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/cluster"
	"github.com/ecpi-dev/ecpi/cluster/runcache"
	"github.com/ecpi-dev/ecpi/train"
)

// executeElsewhere hands a command's runs (their options, and each as a train
// line) to the executor spec names ("": $ECPI_EXECUTOR's) when it is not the
// local one (those not already in the run cache), and makes each run
// reuse=true, to be read from the run cache it was trained into. names name
// the runs in a failure. Ctrl-C cancels the batch.
func executeElsewhere(c *Call, spec string, runs []train.Options, lines, names []string) error {
	e, err := cluster.FromEnv()
	if spec != "" {
		if e, err = cluster.Parse(spec); err != nil {
			return Usagef("executor=%q: %v", spec, err)
		}
	}
	if err != nil {
		return err
	}
	if _, local := e.(cluster.Local); local {
		return nil
	}
	if s, ok := e.(*cluster.Slurm); ok {
		s.Out = callWriter{c}
		if self, err := os.Executable(); err == nil && s.Binary == "" {
			s.Binary = self // the tasks run this ecpi, unless ECPI_BIN names another
		}
	}
	batch := make([]string, len(lines))
	for i, line := range lines {
		batch[i], runs[i].Reuse = line+" reuse=true", true
	}
	failed, err := cluster.ExecuteUncached(c.Ctx, e, batch, func(i int) bool {
		_, cached, err := runcache.Cached(runs[i])
		return err == nil && cached
	})
	if err != nil {
		return err
	}
	for i, err := range failed {
		if err != nil {
			return fmt.Errorf("training %s: %w", names[i], err)
		}
	}
	return nil
}

// optionsLine writes options as a train line's words, in name order.
func optionsLine(values map[string]string) string {
	words := make([]string, 0, len(values))
	for name, value := range values {
		words = append(words, name+"="+value)
	}
	slices.Sort(words)
	return strings.Join(words, " ")
}

// callWriter writes a command's progress text (Call.Printf).
type callWriter struct{ c *Call }

func (w callWriter) Write(p []byte) (int, error) {
	w.c.Printf("%s", p)
	return len(p), nil
}
