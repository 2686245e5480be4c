package nb

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ecpi-dev/ecpi"
	"github.com/ecpi-dev/ecpi/figure"
	"github.com/ecpi-dev/ecpi/results"
)

// Variant is one model of a comparison: how the notebook names it and the
// options that make it.
type Variant struct {
	Label   string
	Options string
}

// Trained is what `train --json` reports of one run, as the notebooks read it.
type Trained struct {
	Model      string            `json:"model"`
	Config     map[string]string `json:"config"`
	Params     int64             `json:"params"`
	Steps      int               `json:"steps"`
	TrainLoss  float64           `json:"train_loss"`
	ValidLoss  float64           `json:"valid_loss"`
	ValidBPC   float64           `json:"valid_bpc"`           // bits per byte, byte tokenizer
	ValidBPB   float64           `json:"valid_bpb,omitempty"` // bits per byte of text, other tokenizers
	ValidPPL   float64           `json:"valid_ppl"`
	Tokenizer  string            `json:"tokenizer"`
	ValidAcc   *float64          `json:"valid_acc"`
	TokensPerS float64           `json:"tokens_per_s"`
	Seconds    float64           `json:"seconds"`
	Losses     []float64         `json:"losses"`
	Checkpoint string            `json:"checkpoint"`
	Backend    string            `json:"backend"`
	Eval       *struct {
		Loss          float64            `json:"loss"`
		Acc           float64            `json:"acc"`
		ByPosition    []float64          `json:"by_position"`
		FirstPosition int                `json:"first_position"`
		Recall        map[string]float64 `json:"recall"`
	} `json:"eval"`
}

// LossFrom is the mean validation loss of window positions from..n-1 (every
// model scored on the same positions: the latents of the PerceiverAR family).
func (r Trained) LossFrom(from int) float64 {
	if r.Eval == nil || from < r.Eval.FirstPosition || from-r.Eval.FirstPosition >= len(r.Eval.ByPosition) {
		return math.NaN()
	}
	var sum float64
	positions := r.Eval.ByPosition[from-r.Eval.FirstPosition:]
	for _, v := range positions {
		sum += v
	}
	return sum / float64(len(positions))
}

// Acc is the validation accuracy (NaN when the run has none).
func (r Trained) Acc() float64 {
	if r.ValidAcc == nil {
		return math.NaN()
	}
	return *r.ValidAcc
}

// Train runs `train OPTIONS` in the session, prints the run on one line and
// returns it. With reuse=true (the notebooks' default) a run already in the run
// cache is read, not trained again.
func Train(options string) Trained {
	r := Must(train(options))
	fmt.Println(r.summary())
	return r
}

// train runs `train OPTIONS` in the session without the summary line
// (progress and the live plot still show while a run trains).
func train(options string) (Trained, error) {
	results, err := run("train "+options, true)
	if err != nil {
		return Trained{}, err
	}
	if len(results) == 0 {
		return Trained{}, fmt.Errorf("train %s gave no result", options)
	}
	var r Trained
	return r, results[len(results)-1].Decode(&r)
}

// The runs of a list of variants, seeds 1..seeds each, come from one of four
// names that say what differs: TrainSeeds prints each run on one line (the
// cell that trains them), ReadSeeds reads the same runs back quietly (the
// cells after it: the run cache holds them); as methods of an Experiment,
// both train an undertrained variant's seed 1 only (Experiment.Floor).

// TrainSeeds trains each variant with seeds 1..seeds on shared options,
// prints each run on one line and returns the runs by label, each in seed
// order.
func TrainSeeds(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, func(Variant) int { return seeds }, true)
}

// ReadSeeds is TrainSeeds without the lines: for the cells after the one
// that trained, which read the same runs back from the run cache.
func ReadSeeds(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, func(Variant) int { return seeds }, false)
}

// TrainSeeds is nb.TrainSeeds for the models e tuned: one whose sweep's best
// run did not beat e.Floor trains seed 1 only (the sweep's run).
func (e *Experiment) TrainSeeds(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, e.seedsOf(seeds), true)
}

// ReadSeeds is nb.ReadSeeds for the models e tuned, as e.TrainSeeds trains them.
func (e *Experiment) ReadSeeds(shared string, variants []Variant, seeds int) map[string][]Trained {
	return trainSeeds(shared, variants, e.seedsOf(seeds), false)
}

// seedsOf is how many seeds a variant gets: seeds, or 1 when its sweep is
// undertrained.
func (e *Experiment) seedsOf(seeds int) func(Variant) int {
	return func(v Variant) int {
		for _, s := range e.Sweeps {
			if s.Model == v.Label && s.Undertrained() {
				return 1
			}
		}
		return seeds
	}
}

func trainSeeds(shared string, variants []Variant, seedsOf func(Variant) int, verbose bool) map[string][]Trained {
	var labels, runs []string
	var seeds []int
	for _, v := range variants {
		for seed := 1; seed <= seedsOf(v); seed++ {
			labels, seeds = append(labels, v.Label), append(seeds, seed)
			runs = append(runs, fmt.Sprintf("%s %s seed=%d", shared, v.Options, seed))
		}
	}
	read := batch(runs)
	out := map[string][]Trained{}
	for i, label := range labels {
		r := Must(read(i))
		if verbose {
			fmt.Printf("%-22s seed %d: %s\n", label, seeds[i], r.summary())
		}
		out[label] = append(out[label], r)
	}
	return out
}

// summary is a run on one line: what it reached, in how long.
func (r Trained) summary() string {
	s := fmt.Sprintf("%s, %d steps, train loss %.4f", r.Model, r.Steps, r.TrainLoss)
	switch {
	case r.ValidBPC > 0:
		s += fmt.Sprintf(", valid %.4f bits/byte", r.ValidBPC)
	case r.ValidBPB > 0:
		s += fmt.Sprintf(", valid %.4f bits/byte (%s tokens)", r.ValidBPB, r.Tokenizer)
	case r.Eval != nil && r.Eval.Recall != nil:
		s += fmt.Sprintf(", valid recall@1 %.1f%% / %.1f%%", 100*r.Eval.Recall["image_to_text@1"], 100*r.Eval.Recall["text_to_image@1"])
	case r.ValidAcc != nil:
		s += fmt.Sprintf(", valid accuracy %.1f%%", 100**r.ValidAcc)
	}
	return s + fmt.Sprintf(" (%d parameters, %.0f s)", r.Params, r.Seconds)
}

// Values maps runs to one number each.
func Values(runs []Trained, metric func(Trained) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = metric(r)
	}
	return out
}

// MeanSE formats the mean of a metric over runs with its standard error.
func MeanSE(runs []Trained, metric func(Trained) float64, unit string) string {
	if len(runs) == 1 { // a model trained no further than its sweep (Experiment.Floor)
		return fmt.Sprintf("%.4f%s (seed 1 only)", metric(runs[0]), unit)
	}
	mean, se := results.MeanSE(Values(runs, metric))
	return results.FormatSE(mean, se, unit)
}

// Experiment records a notebook's runs, tables and claims, and in full mode
// writes them to notebooks/results/<notebook>.json (ecpi experiments turns
// those files into EXPERIMENTS.md).
type Experiment struct {
	results.File
	// Floor, when set, is the figure (lower is better, in the unit Tune
	// minimises: the byte 4-gram's bits per byte, say) that a model's best
	// sweep run must beat to be worth more seeds. One that does not is
	// undertrained: the protocol tests none of its comparisons whatever its
	// other seeds say, so Tune records the floor in its sweep and
	// e.TrainSeeds trains its seed 1 only, the sweep's run.
	Floor float64
}

// NewExperiment starts the record of a notebook.
func NewExperiment(notebook, title string) *Experiment {
	host, _ := os.Hostname()
	mode := "full"
	if Quick() {
		mode = "quick"
	}
	return &Experiment{File: results.File{Notebook: notebook, Title: title, Date: time.Now().Format("2006-01-02"), Mode: mode,
		Machine:   fmt.Sprintf("%s, %d cores, %s", host, runtime.NumCPU(), cpuModel()),
		Backend:   os.Getenv("GOMLX_BACKEND"),
		Baselines: map[string]float64{}}}
}

// cpuModel is the machine's CPU as /proc/cpuinfo names it.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}

// Record adds every run of runs (labels in sorted order, so that a notebook
// run again writes the same file; seeds in order) under an experiment name,
// with one metric.
func (e *Experiment) Record(experiment string, runs map[string][]Trained, metric string, value func(Trained) float64) {
	for _, label := range slices.Sorted(maps.Keys(runs)) {
		for i, r := range runs[label] {
			e.Runs = append(e.Runs, results.Run{Experiment: experiment, Model: label, Seed: int64(i + 1), Metric: metric,
				Value: value(r), Steps: r.Steps, Params: r.Params})
		}
	}
}

// Tune gives every variant the same tuning budget, as the protocol asks of
// the models of a comparison: seed 1 of each at every learning rate of grid
// (at least 4, log-spaced) on the shared options, then, while the best rate
// is the highest (or lowest) tried, up to results.MaxExtension more rates a
// grid step past that edge; the rate whose run has the lowest loss (the
// metric, on validation) is kept. It records each variant's sweep (replacing
// one of the same model and steps: notebooks call Tune in several cells) and
// returns the variants with their rates.
func (e *Experiment) Tune(shared string, variants []Variant, grid []float64, loss func(Trained) float64) []Variant {
	var runs []string // every variant's grid, one batch
	for _, v := range variants {
		for _, lr := range grid {
			runs = append(runs, sweepOptions(shared, v, lr))
		}
	}
	read := batch(runs)
	tuned := make([]Variant, len(variants))
	for i, v := range variants {
		sweep := results.Sweep{Model: v.Label}
		for j, lr := range grid {
			r, err := read(i*len(grid) + j)
			sweepRun(&sweep, v.Label, lr, loss, r, err)
		}
		for range results.MaxExtension {
			lr, beyond := sweep.Beyond()
			if !beyond {
				break
			}
			r, err := batch([]string{sweepOptions(shared, v, lr)})(0)
			sweepRun(&sweep, v.Label, lr, loss, r, err)
		}
		if sweep.Chosen == 0 {
			Must(0, fmt.Errorf("%s diverged at every learning rate of %s", v.Label, list(sweep.LR)))
		}
		sweep.Floor = e.Floor
		e.keepSweep(sweep)
		fmt.Printf("%-22s learning rate %g (of %s)%s\n", v.Label, sweep.Chosen, list(sweep.LR), sweep.FloorNote())
		tuned[i] = Variant{Label: v.Label, Options: fmt.Sprintf("%s lr=%g", v.Options, sweep.Chosen)}
	}
	return tuned
}

// sweepOptions are the options of variant v's sweep run at rate lr: seed 1.
func sweepOptions(shared string, v Variant, lr float64) string {
	return fmt.Sprintf("%s %s lr=%g seed=1", shared, v.Options, lr)
}

// sweepRun adds the loss of a sweep's run at rate lr (r, or its error err) to sweep.
func sweepRun(sweep *results.Sweep, label string, lr float64, loss func(Trained) float64, r Trained, err error) {
	if err != nil && strings.Contains(err.Error(), "not finite") {
		// A rate that diverges is one answer of the sweep, not the end of the cell.
		sweep.Add(lr, 0, true)
		fmt.Printf("%-22s lr=%g diverged\n", label, lr)
		return
	}
	Must(0, err)
	sweep.Steps = r.Steps
	sweep.Add(lr, loss(r), false)
}

// keepSweep records sweep in e, in place of an earlier one of the same model
// and steps.
func (e *Experiment) keepSweep(sweep results.Sweep) {
	for i, s := range e.Sweeps {
		if s.Model == sweep.Model && s.Steps == sweep.Steps {
			e.Sweeps[i] = sweep
			return
		}
	}
	e.Sweeps = append(e.Sweeps, sweep)
}

// SweepTable is the learning-rate sweeps Tune recorded in e: a row per model
// with its validation figure (seed 1) at every rate of the grid and the rate
// it keeps ("—" at a rate that only other models' sweeps tried past the
// grid's edge). show writes the loss the sweep minimised as the table gives it
// (an error rate as an accuracy, say); a rate that diverged reads
// "diverged". The notebooks show it (.Show()); it is not one of the
// experiment's tables (the results file keeps the sweeps themselves).
func (e *Experiment) SweepTable(caption string, show func(loss float64) string) figure.Table {
	var rates []float64 // every rate some sweep tried: the grid and each one's extensions
	for _, s := range e.Sweeps {
		rates = append(rates, s.LR...)
	}
	slices.Sort(rates)
	rates = slices.Compact(rates)
	t := figure.Table{Caption: caption, Header: []string{"model"}}
	for _, lr := range rates {
		t.Header = append(t.Header, fmt.Sprintf("lr = %g", lr))
	}
	t.Header = append(t.Header, "chosen")
	for _, s := range e.Sweeps {
		row := []any{s.Model}
		for _, lr := range rates {
			switch i := slices.Index(s.LR, lr); {
			case i < 0:
				row = append(row, "—")
			case s.DivergedAt(i):
				row = append(row, "diverged")
			default:
				row = append(row, show(s.Valid[i]))
			}
		}
		t.AddRow(append(row, fmt.Sprintf("%g", s.Chosen))...)
	}
	return t
}

// Compare judges claim id of results.Claims from each model's values (one
// per seed or measurement), looked up by the labels its declaration names,
// then shows and records the verdict. The declaration decides the test.
func (e *Experiment) Compare(id int, values map[string][]float64) results.Claim {
	return e.ComparePi(id, values, nil)
}

// ComparePi is Compare for a claim on a trained π model (declared with
// Skips): skipMass is that model's attention mass on its skip keys per layer
// (SkipMass), stored and shown with the verdict.
func (e *Experiment) ComparePi(id int, values map[string][]float64, skipMass []float64) results.Claim {
	d := Must(results.ClaimByID(id))
	c := results.Claim{ID: id, SkipMass: skipMass}
	for _, b := range d.B {
		c.Comparisons = append(c.Comparisons, results.Comparison{A: d.A, B: b, Metric: d.Metric, Better: d.Better, AValues: values[d.A], BValues: values[b]})
	}
	return e.judge(d, c)
}

// SkipMass is a trained π model's attention mass on its skip keys in each
// layer, the mean over heads of `probe gate` on its checkpoint: under
// results.MinSkipMass in every layer, π computed local attention.
func SkipMass(checkpoint string) []float64 {
	var report struct {
		Layers []struct {
			SkipMass []float64 `json:"skip_mass"`
		} `json:"layers"`
	}
	found := Query("probe gate checkpoint=" + checkpoint)
	Must(0, found[len(found)-1].Decode(&report))
	mass := make([]float64, len(report.Layers))
	for i, layer := range report.Layers {
		for _, head := range layer.SkipMass {
			mass[i] += head / float64(len(layer.SkipMass))
		}
	}
	return mass
}

// Count records claim id, a count (in its declaration's unit); ours says
// what was counted.
func (e *Experiment) Count(id int, value float64, ours string) results.Claim {
	d := Must(results.ClaimByID(id))
	return e.judge(d, results.Claim{ID: id, Value: &value, Ours: ours})
}

// Bound records claim id, a quantity measured per layer (L = 1, 2, ...)
// against the paper's bound at each; ours says what was measured.
func (e *Experiment) Bound(id int, measured, bound []float64, ours string) results.Claim {
	d := Must(results.ClaimByID(id))
	return e.judge(d, results.Claim{ID: id, Measured: measured, Bound: bound, Ours: ours})
}

// Scaling records claim id, a cost measured at each run's sequence length
// (every run: the fit takes the median of each length's runs, and a later
// sitting of the same code pools its runs with these); ours says what was
// measured.
func (e *Experiment) Scaling(id int, lengths, costs []float64, ours string) results.Claim {
	d := Must(results.ClaimByID(id))
	return e.judge(d, results.Claim{ID: id, Lengths: lengths, Measured: costs, Ours: ours})
}

// PaperScaleOnly records claim id, declared decidable only at the paper's
// scale (results.Declared.PaperScaleOnly), with nothing measured for it: its
// pilot's evidence is its record.
func (e *Experiment) PaperScaleOnly(id int) results.Claim {
	d := Must(results.ClaimByID(id))
	if d.PaperScaleOnly == "" {
		Must(0, fmt.Errorf("claim %d is not declared decidable only at the paper's scale: it needs its runs (Compare)", id))
	}
	return e.judge(d, results.Claim{ID: id})
}

// Untestable records claim id as untestable on this machine, and why.
func (e *Experiment) Untestable(id int, why string) results.Claim {
	d := Must(results.ClaimByID(id))
	return e.judge(d, results.Claim{ID: id, Verdict: results.Untestable, Why: why})
}

func (e *Experiment) judge(d results.Declared, c results.Claim) results.Claim {
	if d.Notebook != e.Notebook {
		Must(0, fmt.Errorf("claim %d is declared for notebook %s, not %s (results.Claims)", d.ID, d.Notebook, e.Notebook))
	}
	c = results.Judge(d, c, &e.File, savedResults())
	e.Claims = append(e.Claims, c)
	ours := "Ours: " + c.Ours + " "
	if c.Ours == "" { // an untestable claim measured nothing
		ours = ""
	}
	text := fmt.Sprintf("**Claim %d** (%s, %s): %s. Paper: %s. %s→ **%s**", c.ID, short(c.Paper), c.Kind, c.Claim, c.PaperSay, ours, c.Verdict)
	if c.Why != "" {
		text += " (" + c.Why + ")"
	}
	figure.ShowMarkdown(text + ".")
	return c
}

func short(paper string) string {
	name, _, _ := strings.Cut(paper, " (")
	return name
}

// Table shows a table and records it for EXPERIMENTS.md.
func (e *Experiment) Table(t figure.Table) {
	t.Show()
	e.Tables = append(e.Tables, results.Table{Caption: t.Caption, Header: t.Header, Rows: t.Rows, Notes: t.Notes})
}

// PilotSelected says whether this sitting runs pilot id: every pilot, or
// those ECPI_PILOTS names (comma-separated), so that pilots can run in
// separate sittings; Save keeps the records of the others.
func PilotSelected(id string) bool {
	selected := os.Getenv("ECPI_PILOTS")
	if selected == "" || slices.Contains(strings.Split(selected, ","), id) {
		return true
	}
	fmt.Printf("pilot %s not run in this sitting (ECPI_PILOTS=%s)\n", id, selected)
	return false
}

// Pilot applies pilot r.ID's declared rule (results.Pilots) to what it
// measured, shows the values and the decision, and records them.
func (e *Experiment) Pilot(r results.PilotRecord) results.PilotRecord {
	p := Must(results.PilotByID(r.ID))
	r.Decision = Must(p.Decide(r))
	r.Date, r.Machine = e.Date, e.Machine
	if !Quick() {
		r.CodeVersion = TrainedVersion(filepath.Join(repo(), "notebooks"), e.Notebook)
	}
	t := figure.Table{Caption: fmt.Sprintf("pilot %s: %s", p.ID, p.Question), Header: []string{"value", "measured"}}
	for _, v := range r.Values {
		t.AddRow(v.Name, fmt.Sprintf("%.4g%s", v.Value, v.Unit))
	}
	t.Show()
	rule := fmt.Sprintf("**Rule** (declared %s): %s", p.Declared, p.Rule)
	if changes := p.Changes(); changes != "" {
		rule += "\n\n" + changes
	}
	figure.ShowMarkdown(rule + "\n\n**Decision**: " + r.Decision + ".")
	e.Pilots = append(slices.DeleteFunc(e.Pilots, func(old results.PilotRecord) bool { return old.ID == r.ID }), r)
	return r
}

// Save writes the record in full mode (quick mode is a smoke test, not a
// result) to notebooks/results of the repository the kernel uses.
func (e *Experiment) Save() {
	if Quick() {
		fmt.Println("quick mode: results not saved (run the notebook in full mode to record them)")
		return
	}
	notebooks := filepath.Join(repo(), "notebooks")
	e.CodeVersion = TrainedVersion(notebooks, e.Notebook)
	saved := savedResults()
	for _, prev := range saved {
		results.KeepPilots(prev, &e.File)
		if results.Pool(prev, &e.File) {
			fmt.Printf("repeated measurements pooled with %d earlier sittings of this code version on this machine\n", e.Sittings-1)
		}
	}
	Must(0, results.JudgeFile(&e.File, saved)) // with every sweep and baseline recorded by now
	dir := filepath.Join(notebooks, "results")
	Must(0, e.Write(dir))
	fmt.Printf("results saved to %s/%s.json\n", dir, e.Notebook)
}

// savedResults is every results file in notebooks/results: the other
// notebooks' results, where a claim's positive control may live, and this
// one's earlier sitting; none where the folder cannot be read.
func savedResults() []results.File {
	files, err := results.Load(filepath.Join(repo(), "notebooks", "results"))
	if err != nil {
		return nil
	}
	return files
}

// TrainedVersion is the code version a results file carries: the session
// server's code, which trained and measured its runs (`experiments status`),
// and the notebook's cells. The cell's own build may be newer, when the
// sources changed during a long run: the results are still the server's.
func TrainedVersion(notebooks, notebook string) string {
	var server struct {
		CodeVersion string `json:"code_version"`
	}
	dir := filepath.Join(notebooks, "results") // where Save writes; `experiments status` reads it
	Must(0, os.MkdirAll(dir, 0o755))
	found := Query(fmt.Sprintf("experiments status results=%s notebooks=%s", dir, notebooks))
	Must(0, found[len(found)-1].Decode(&server))
	cells := Must(results.NotebookVersion(filepath.Join(notebooks, notebook+".ipynb")))
	if built := ecpi.CodeVersion(); built != server.CodeVersion {
		fmt.Printf("note: the runs come from code version %s (the session server's), these cells were built from %s\n", server.CodeVersion, built)
	}
	return server.CodeVersion + "." + cells
}

// repo is ecpi's repository (the kernel sets ECPI_REPO), else the working directory's.
func repo() string {
	if dir := os.Getenv("ECPI_REPO"); dir != "" {
		return dir
	}
	dir, _ := os.Getwd()
	return filepath.Dir(dir)
}
