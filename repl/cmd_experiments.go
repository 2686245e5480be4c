package repl

import (
	"fmt"
	"os"

	"github.com/ecpi-dev/ecpi/results"
)

func init() {
	Register(&Command{
		Name:    "experiments",
		Summary: "rebuild EXPERIMENTS.md from the notebooks' results files (verdicts on every claim of both papers)",
		Details: "Reads every results file the notebooks wrote in full mode (notebooks/results/NN-name.json:\n" +
			"runs, trivial baselines, claims with computed verdicts) and writes the report: the verdict on\n" +
			"each claim of the ECP and π-Attention papers, then each notebook's tables.",
		Options: []Option{
			{Name: "results", Default: "notebooks/results", Help: "folder of the results files"},
			{Name: "out", Default: "EXPERIMENTS.md", Help: "the report to write (- for standard output)"},
		},
		Run: runExperiments,
	})
}

// ExperimentsReport is what `experiments` did.
type ExperimentsReport struct {
	Files  int    `json:"files"`
	Claims int    `json:"claims"`
	Out    string `json:"out"`
}

func (r ExperimentsReport) Text() string {
	return fmt.Sprintf("wrote %s from %d results files (%d claims measured)", r.Out, r.Files, r.Claims)
}

func runExperiments(c *Call) error {
	files, err := results.Load(c.String("results"))
	if err != nil {
		return err
	}
	report := results.Report(files)
	out := c.String("out")
	if out == "-" {
		_, err := c.Out.Write([]byte(report))
		return err
	}
	if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
		return err
	}
	claims := 0
	for _, f := range files {
		claims += len(f.Claims)
	}
	return c.Emit(ExperimentsReport{Files: len(files), Claims: claims, Out: out})
}
