package train

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
)

// Dataset is one kind of data that train reads. The file that holds
// everything about it registers it from its init (registerDataset): its
// names, its kind of task, the data options it reads, how it builds its task
// (batches, the step's input, the scoring) and how `data show` draws it.
// Training, evaluation, `data show`, help and completion read the registry,
// so a new dataset touches its own file and one row of TestEveryKindOfRun.
type Dataset struct {
	Names   func() []string // the data= names it serves
	Kind    string          // TaskLM, TaskClassify, TaskRetrieve or TaskMatch
	Summary string          // one line for help and completion
	// Reads are the data options it reads (dataOptions); the others must keep
	// their defaults with this data.
	Reads []string
	// BothWays allows causal=false: the model sees the whole sequence, which
	// only a task that predicts no token of it allows.
	BothWays bool
	// Build loads or makes the data for o and completes the model config: n
	// where the data fixes it or the config leaves it to the data, and vocab.
	Build func(o Options, cfg models.Config) (task, models.Config, error)
	// Show returns count examples of data name as `data show` draws them
	// (pool as train's pool=; home is $ECPI_HOME).
	Show func(home, name string, count, pool int) ([]ShownExample, error)
}

// ShownExample is one example as `data show` draws it: its text and label,
// and for images the pixels row by row (0..255).
type ShownExample struct {
	Text   string  `json:"text"`
	Label  string  `json:"label,omitempty"`
	Pixels [][]int `json:"pixels,omitempty"`
}

// dataOptions are the training options that only some data read, with what
// an error calls the data that read them.
var dataOptions = map[string]string{
	"tokenizer": "text data",
	"examples":  "generated sets",
	"distance":  "the retrieval sets",
	"spread":    "the sets whose distance varies",
	"pool":      "image data",
}

var datasets []Dataset

// registerDataset adds a dataset; a missing piece or a name served twice is a
// programming error, found when the binary starts.
func registerDataset(d Dataset) {
	if d.Names == nil || d.Kind == "" || d.Summary == "" || d.Build == nil || d.Show == nil {
		panic(fmt.Sprintf("train: dataset %q lacks a piece: every dataset sets Names, Kind, Summary, Build and Show", d.Summary))
	}
	for _, option := range d.Reads {
		if _, ok := dataOptions[option]; !ok {
			panic(fmt.Sprintf("train: dataset %v reads %q, which is no data option", d.Names(), option))
		}
	}
	for _, name := range d.Names() {
		if _, err := datasetOf(name); err == nil {
			panic("train: data registered twice: " + name)
		}
	}
	datasets = append(datasets, d)
}

// datasetOf is the dataset that serves data name.
func datasetOf(name string) (Dataset, error) {
	for _, d := range datasets {
		if slices.Contains(d.Names(), name) {
			return d, nil
		}
	}
	var kinds []string
	for _, kind := range taskKinds {
		kinds = append(kinds, fmt.Sprintf("%s: %s", kindNames[kind], strings.Join(DataNamesOf(kind), ", ")))
	}
	return Dataset{}, fmt.Errorf("unknown data %q; %s", name, strings.Join(kinds, "; "))
}

// taskKinds in the order listings show them, and how they name each kind.
var (
	taskKinds = []string{TaskLM, TaskClassify, TaskRetrieve, TaskMatch}
	kindNames = map[string]string{TaskLM: "corpora", TaskClassify: "classification", TaskRetrieve: "retrieval", TaskMatch: "image-text matching"}
)

// TaskOf tells which kind of task data name is.
func TaskOf(name string) (string, error) {
	d, err := datasetOf(name)
	return d.Kind, err
}

// DataNamesOf lists the data names of one kind of task, in registration
// order within each dataset.
func DataNamesOf(kind string) []string {
	var names []string
	for _, d := range datasets {
		if d.Kind == kind {
			names = append(names, d.Names()...)
		}
	}
	return names
}

// RetrievalNames lists the retrieval sets.
func RetrievalNames() []string { return DataNamesOf(TaskRetrieve) }

// DataInfo is one data name as help and completion list it.
type DataInfo struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Summary  string `json:"summary"`
	BothWays bool   `json:"both_ways"`
}

// DataInfos lists every data name train accepts, kind by kind.
func DataInfos() []DataInfo {
	var out []DataInfo
	for _, kind := range taskKinds {
		for _, d := range datasets {
			if d.Kind != kind {
				continue
			}
			for _, name := range d.Names() {
				out = append(out, DataInfo{Name: name, Kind: d.Kind, Summary: d.Summary, BothWays: d.BothWays})
			}
		}
	}
	return out
}

// ShowData is `data show`: count examples of data name as a model sees them.
func ShowData(home, name string, count, pool int) ([]ShownExample, error) {
	d, err := datasetOf(name)
	if err != nil {
		return nil, err
	}
	return d.Show(home, name, count, pool)
}

// reads says whether the dataset reads a data option.
func (d Dataset) reads(option string) bool { return slices.Contains(d.Reads, option) }

// checkOptions refuses a data option set away from its default where the
// data does not read it, naming the data that do.
func (d Dataset) checkOptions(o Options) error {
	defaults := DefaultOptions()
	for _, option := range slices.Sorted(maps.Keys(dataOptions)) {
		value := optionTable.Get(o, option)
		if d.reads(option) || value == optionTable.Get(defaults, option) {
			continue
		}
		readers := dataReading(option)
		if len(readers) == 1 {
			return fmt.Errorf("option %s=%s applies to data %s only, not data %s", option, value, readers[0], o.Data)
		}
		return fmt.Errorf("option %s=%s applies to %s only (%s), not data %s", option, value, dataOptions[option], strings.Join(readers, ", "), o.Data)
	}
	return nil
}

// dataReading lists the data names whose dataset reads a data option.
func dataReading(option string) []string {
	var names []string
	for _, d := range datasets {
		if d.reads(option) {
			names = append(names, d.Names()...)
		}
	}
	return names
}
