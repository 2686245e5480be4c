package repl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/option"

	"github.com/ecpi-dev/ecpi"
	"github.com/ecpi-dev/ecpi/results"
)

// experimentsArgs are the options of the experiments commands.
type experimentsArgs struct{ Results, Notebooks, Out, Readme string }

var experimentsOptions = Options[experimentsArgs]{
	Table: option.Table[experimentsArgs]{
		option.Text("results", "folder of the results files", func(a *experimentsArgs) *string { return &a.Results }, option.NotEmpty()),
		option.Text("notebooks", "folder of the notebooks (their code cells are part of the code version)", func(a *experimentsArgs) *string { return &a.Notebooks }, option.NotEmpty()),
		option.Text("out", "the report to write (- for standard output)", func(a *experimentsArgs) *string { return &a.Out }, option.NotEmpty()),
		option.Text("readme", "the file whose status line to update (- for none)", func(a *experimentsArgs) *string { return &a.Readme }, option.NotEmpty()),
	},
	Defaults: experimentsArgs{Results: "notebooks/results", Notebooks: "notebooks", Out: "EXPERIMENTS.md", Readme: "README.md"},
}

func init() {
	Register(&Command{
		Name:    "experiments",
		Summary: "rebuild EXPERIMENTS.md from the notebooks' results files (verdicts on every claim of both papers)",
		Details: "Reads every results file the notebooks wrote in full mode (notebooks/results/NN-name.json:\n" +
			"values per seed, sweeps, trivial baselines, claims) and writes the report: the protocol, the verdict\n" +
			"on each declared claim of the ECP and π-Attention papers with its test, interval and history of\n" +
			"changes, then each notebook's tables, stale sections marked. The README's line between\n" +
			"<!-- experiments:status --> markers gets the count of current sections.",
		Options: experimentsOptions.Declare(),
		Run:     runExperiments,
	})
	Register(&Command{
		Name:    "experiments verify",
		Summary: "recompute every verdict of the results files from their stored values; fails on any mismatch",
		Details: "Each claim must be declared (results.Claims) and tested in its declared notebook, compare the\n" +
			"declared models on the declared metric, and carry exactly the verdict, p-value and interval that its\n" +
			"values give under the protocol. A file edited by hand fails. EXPERIMENTS.md and the README's\n" +
			"status line must be what `experiments` writes from them now (out=- and readme=- skip those checks).\n" +
			"Also prints the current code version.",
		Options: experimentsOptions.Declare(),
		Run:     runExperimentsVerify,
	})
	Register(&Command{
		Name:    "experiments judge",
		Summary: "judge every claim of the results files again under the current registry and protocol",
		Details: "For a change to results.Claims or to the verdict protocol: each results file keeps its stored values\n" +
			"(runs, sweeps, baselines, measurements) and gets every verdict, statistic and positive control\n" +
			"recomputed, as `experiments verify` would recompute them. Its code version stays: the values are\n" +
			"still that code's. Then run `experiments` to rebuild EXPERIMENTS.md and the README's status line.",
		Options: experimentsOptions.Only("results").Declare(),
		Run:     runExperimentsJudge,
	})
	Register(&Command{
		Name:    "experiments status",
		Summary: "the current code version, and which notebooks' results are of the current code",
		Options: experimentsOptions.Only("results", "notebooks").Declare(),
		Run:     runExperimentsStatus,
	})
}

// ExperimentsReport is what `experiments` did.
type ExperimentsReport struct {
	Files   int    `json:"files"`
	Claims  int    `json:"claims"`
	Current int    `json:"current"` // sections whose results are of the current code
	Out     string `json:"out"`
}

func (r ExperimentsReport) Text() string {
	return fmt.Sprintf("wrote %s from %d results files (%d claims measured; %d of %d sections of the current code)", r.Out, r.Files, r.Claims, r.Current, r.Files)
}

func runExperiments(c *Call) error {
	args, err := experimentsOptions.Read(c)
	if err != nil {
		return err
	}
	files, err := results.Load(args.Results)
	if err != nil {
		return err
	}
	status := experimentsStatus(files, args.Notebooks)
	report := results.Report(files, status.Stale)
	if readme := args.Readme; readme != "-" {
		if err := writeStatusLine(readme, status.Line()); err != nil {
			return err
		}
	}
	out := args.Out
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
	return c.Emit(ExperimentsReport{Files: len(files), Claims: claims, Current: status.Current, Out: out})
}

// JudgedFiles is what `experiments judge` did.
type JudgedFiles struct {
	Files   int      `json:"files"`
	Changed []string `json:"changed"` // notebooks whose verdicts changed
}

func (j JudgedFiles) Text() string {
	if len(j.Changed) == 0 {
		return fmt.Sprintf("judged %d results files again: no verdict changed", j.Files)
	}
	return fmt.Sprintf("judged %d results files again; rewrote %s", j.Files, strings.Join(j.Changed, ", "))
}

func runExperimentsJudge(c *Call) error {
	args, err := experimentsOptions.Only("results").Read(c)
	if err != nil {
		return err
	}
	files, err := results.Load(args.Results)
	if err != nil {
		return err
	}
	judged := JudgedFiles{Files: len(files)}
	for i := range files {
		before, _ := json.Marshal(files[i])
		if err := results.JudgeFile(&files[i], files); err != nil {
			return fmt.Errorf("%s: %w", files[i].Notebook, err)
		}
		if after, _ := json.Marshal(files[i]); bytes.Equal(before, after) {
			continue
		}
		if err := files[i].Write(args.Results); err != nil {
			return err
		}
		judged.Changed = append(judged.Changed, files[i].Notebook)
	}
	return c.Emit(judged)
}

// statusMarker and its closing twin enclose the README's line that
// `experiments` rewrites.
const statusMarker, statusEnd = "<!-- experiments:status -->", "<!-- /experiments:status -->"

// readOptional is path's contents, nothing when it does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// writeStatusLine puts line between the status markers of path, when it has them.
func writeStatusLine(path, line string) error {
	b, err := readOptional(path)
	if err != nil {
		return err
	}
	if updated := withStatusLine(b, line); !bytes.Equal(updated, b) {
		return os.WriteFile(path, updated, 0o644)
	}
	return nil
}

// withStatusLine is b with line between its status markers (b itself when it has none).
func withStatusLine(b []byte, line string) []byte {
	start, end := bytes.Index(b, []byte(statusMarker)), bytes.Index(b, []byte(statusEnd))
	if start < 0 || end < start {
		return b
	}
	return slices.Concat(b[:start+len(statusMarker)], []byte(line), b[end:])
}

// outOfDate names the files that `experiments` would write differently now: the
// report out (unless "-") and the README's status line (unless readme is "-"),
// so that a change to the registry or the results cannot leave them behind.
func outOfDate(args experimentsArgs, report, line string) ([]string, error) {
	var behind []string
	if args.Out != "-" {
		b, err := readOptional(args.Out)
		if err != nil {
			return nil, err
		}
		if string(b) != report {
			behind = append(behind, args.Out)
		}
	}
	if args.Readme != "-" {
		b, err := readOptional(args.Readme)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(withStatusLine(b, line), b) {
			behind = append(behind, args.Readme+"'s status line")
		}
	}
	return behind, nil
}

// ExperimentsStatus says which notebooks' results are of the current code.
type ExperimentsStatus struct {
	CodeVersion string            `json:"code_version"` // ecpi.CodeVersion: models, training and data
	Current     int               `json:"current"`
	Files       int               `json:"files"`
	Stale       map[string]string `json:"stale,omitempty"` // notebook: why
	Claims      string            `json:"claims"`          // the claims by outcome, in one line
}

func experimentsStatus(files []results.File, notebooks string) ExperimentsStatus {
	stale := results.StaleSections(files, notebooks)
	return ExperimentsStatus{CodeVersion: ecpi.CodeVersion(), Current: len(files) - len(stale), Files: len(files), Stale: stale,
		Claims: results.SummaryLine(files, stale)}
}

// Line is the README's status line.
func (s ExperimentsStatus) Line() string {
	sections := fmt.Sprintf("%d of %d notebook sections of EXPERIMENTS.md are results of the current code (code version %s); the others are marked stale.",
		s.Current, s.Files, s.CodeVersion)
	if s.Current == s.Files {
		sections = fmt.Sprintf("All %d notebook sections of EXPERIMENTS.md are results of the current code (code version %s).", s.Files, s.CodeVersion)
	}
	return sections + " " + s.Claims
}

func (s ExperimentsStatus) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "code version %s (models, training, data); %d of %d results files of the current code", s.CodeVersion, s.Current, s.Files)
	for _, notebook := range slices.Sorted(maps.Keys(s.Stale)) {
		fmt.Fprintf(&b, "\n  stale %s: %s", notebook, s.Stale[notebook])
	}
	return b.String()
}

func runExperimentsStatus(c *Call) error {
	args, err := experimentsOptions.Only("results", "notebooks").Read(c)
	if err != nil {
		return err
	}
	files, err := results.Load(args.Results)
	if err != nil {
		return err
	}
	return c.Emit(experimentsStatus(files, args.Notebooks))
}

// VerifyReport is what `experiments verify` recomputed.
type VerifyReport struct {
	CodeVersion string `json:"code_version"`
	Files       int    `json:"files"`
	Claims      int    `json:"claims"`
	Comparisons int    `json:"comparisons"`
}

func (r VerifyReport) Text() string {
	return fmt.Sprintf("verified %d claims (%d comparisons) of %d results files: every verdict follows from its values; code version %s",
		r.Claims, r.Comparisons, r.Files, r.CodeVersion)
}

func runExperimentsVerify(c *Call) error {
	args, err := experimentsOptions.Read(c)
	if err != nil {
		return err
	}
	files, err := results.Load(args.Results)
	if err != nil {
		return err
	}
	if problems := results.Verify(files); len(problems) > 0 {
		return fmt.Errorf("%d verdicts do not follow from their values:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	status := experimentsStatus(files, args.Notebooks)
	behind, err := outOfDate(args, results.Report(files, status.Stale), status.Line())
	if err != nil {
		return err
	}
	if len(behind) > 0 {
		verb := "are"
		if len(behind) == 1 {
			verb = "is"
		}
		return fmt.Errorf("%s %s not what `ecpi experiments` writes from these results files, the claims' registry and the current code: run `ecpi experiments` and commit what it writes",
			strings.Join(behind, " and "), verb)
	}
	r := VerifyReport{CodeVersion: ecpi.CodeVersion(), Files: len(files)}
	for _, f := range files {
		r.Claims += len(f.Claims)
		for _, claim := range f.Claims {
			r.Comparisons += len(claim.Comparisons)
		}
	}
	return c.Emit(r)
}
