package repl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
)

// Session commands: they change or show what later commands fall back on, so
// `model ecp layers=4`, `data foldoc`, `train steps=200` follow on from each
// other without repeating options.

func init() {
	Register(&Command{
		Name:    "model",
		Summary: "choose the model family and options the following commands use",
		Args:    "[FAMILY]",
		Details: "`model FAMILY key=value ...` replaces the session's model; `model key=value ...` changes\n" +
			"options of the current one; `model` alone shows it. The config is validated now, so a\n" +
			"bad combination is reported here rather than when training starts.",
		Options: modelOptions(),
		Run:     runModel,
	})
	Register(&Command{
		Name:    "data",
		Summary: "choose the dataset the following commands use",
		Args:    "NAME",
		Details: "Names come from `data list`; a dataset that is not prepared yet is prepared by `data prepare NAME`.",
		Run:     runData,
	})
	Register(&Command{
		Name:    "backend",
		Summary: "choose the compute backend the following commands use",
		Args:    "NAME",
		Details: "go, xla, xla:cpu, xla:cuda, xla:rocm, xla:tpu or xla:/abs/plugin.so; `doctor` shows what is installed.\n" +
			"The backend is opened by the first command that computes.",
		Run: runBackend,
	})
	Register(&Command{
		Name:    "status",
		Summary: "show the session: model, data, backend, checkpoint, other settings and last results",
		Run:     runStatus,
	})
	Register(&Command{
		Name:      "set",
		Summary:   "set session defaults for any command option (set steps=200 lr=3e-4)",
		AnyOption: true,
		Run:       runSet,
	})
	Register(&Command{
		Name:    "unset",
		Summary: "remove session settings (unset steps; unset model clears every model option)",
		Args:    "KEY ...",
		Run:     runUnset,
	})
	for _, name := range []string{"quit", "exit"} {
		Register(&Command{Name: name, Summary: "leave the session (Ctrl-D too)", Run: runQuit})
	}
}

func runQuit(*Call) error { return ErrQuit }

// ModelChoice is what `model` prints: the family and every option's value.
type ModelChoice struct {
	Model   string            `json:"model"`
	Options map[string]string `json:"options"`
	Typed   map[string]string `json:"typed"` // what the session holds; the rest are the family's defaults
}

func (m ModelChoice) Text() string {
	typed, _ := models.ParseConfig(m.Typed)
	cfg := typed.Resolved() // n and the family's derived options, as training would use them
	pairs, dense := cfg.Pattern().ScoredPairs(cfg.SeqLen), int64(cfg.SeqLen)*int64(cfg.SeqLen)
	return fmt.Sprintf("model %s\n  %s\n  first-layer attention scores per head: %d of %d dense (%.1f%%)",
		m.Model, cfg.String(), pairs, dense, 100*float64(pairs)/float64(dense))
}

func runModel(c *Call) error {
	if len(c.Args) > 1 {
		return Usagef("model takes one FAMILY (got %s); options are key=value", strings.Join(c.Args, " "))
	}
	typed := c.Given()
	values := map[string]string{}
	if len(c.Args) == 1 {
		if family, ok := typed["model"]; ok && family != c.Args[0] {
			return Usagef("model %s contradicts model=%s", c.Args[0], family)
		}
		typed["model"] = c.Args[0]
	} else if _, ok := typed["model"]; !ok {
		// No family named: the options change the current model.
		values = sessionModelOptions(c.Session)
	}
	maps.Copy(values, typed)
	if values["model"] == "" {
		values["model"] = models.DefaultFamily()
	}
	if _, err := models.ParseConfig(values); err != nil {
		return Usagef("%v", err)
	}
	clearModel(c.Session)
	c.Session.Set(values)
	return c.Emit(modelChoice(values))
}

func modelChoice(typed map[string]string) ModelChoice {
	cfg, _ := models.ParseConfig(typed)
	return ModelChoice{Model: cfg.Model, Options: cfg.Options(), Typed: typed}
}

// sessionModelOptions are the model options the session holds.
func sessionModelOptions(s *Session) map[string]string {
	out := map[string]string{}
	for name, value := range s.Settings() {
		if models.IsOption(name) {
			out[name] = value
		}
	}
	return out
}

func clearModel(s *Session) {
	clear := map[string]string{}
	for _, name := range models.AllOptionNames() {
		clear[name] = ""
	}
	s.Set(clear)
}

func runData(c *Call) error {
	if len(c.Args) != 1 {
		return Usagef("data takes one NAME: %s (or `data list`, `data prepare NAME`)", strings.Join(data.DatasetNames(), ", "))
	}
	name := c.Args[0]
	if !slices.Contains(data.DatasetNames(), name) {
		msg := fmt.Sprintf("unknown dataset %q", name)
		if near := Nearest(name, append(data.DatasetNames(), "list", "prepare")); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return Usagef("%s; datasets: %s", msg, strings.Join(data.DatasetNames(), ", "))
	}
	c.Session.Set(map[string]string{"data": name})
	c.Printf("data=%s", name)
	if !datasetPrepared(name) {
		c.Printf(" (not prepared yet: `data prepare %s` gets it)", name)
	}
	c.Printf("\n")
	return nil
}

func datasetPrepared(name string) bool {
	for _, d := range append(data.Corpora(data.Home()), data.ImageSets(data.Home())...) {
		if d.Name == name {
			return d.Prepared
		}
	}
	return false
}

func runBackend(c *Call) error {
	if len(c.Args) != 1 {
		return Usagef("backend takes one NAME: %s", strings.Join(backendNames(), ", "))
	}
	name := c.Args[0]
	if err := checkBackendName(name); err != nil || name == "" {
		return Usagef("unknown backend %q: use go, xla, xla:cpu, xla:cuda, xla:rocm, xla:tpu or xla:/abs/plugin.so", name)
	}
	c.Session.Set(map[string]string{"backend": name})
	c.Printf("backend=%s (opened by the first command that computes)\n", name)
	return nil
}

// Status is what `status` prints.
type Status struct {
	Model    *ModelChoice      `json:"model,omitempty"`
	Settings map[string]string `json:"settings"` // everything the session holds besides model options
	Results  map[string]string `json:"results"`  // command -> one-line summary of its last result
}

// statusKeys are the settings status shows on their own line, in this order.
var statusKeys = []string{"data", "backend", "checkpoint"}

func (st Status) Text() string {
	var b strings.Builder
	if st.Model != nil {
		fmt.Fprintf(&b, "%-11s %s\n", "model", cfgLine(st.Model.Typed))
	} else {
		fmt.Fprintf(&b, "%-11s (not set: %s with its defaults)\n", "model", models.DefaultFamily())
	}
	for _, key := range statusKeys {
		value, ok := st.Settings[key]
		if !ok {
			value = "(not set)"
		}
		fmt.Fprintf(&b, "%-11s %s\n", key, Printable(value)) // set takes any text
	}
	var others []string
	for _, key := range slices.Sorted(maps.Keys(st.Settings)) {
		if !slices.Contains(statusKeys, key) {
			others = append(others, key+"="+st.Settings[key])
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "%-11s %s\n", "settings", Printable(strings.Join(others, " ")))
	}
	if len(st.Results) == 0 {
		b.WriteString("no results yet")
	} else {
		b.WriteString("last results:")
		for _, cmd := range slices.Sorted(maps.Keys(st.Results)) {
			fmt.Fprintf(&b, "\n  %-10s %s", cmd, st.Results[cmd])
		}
	}
	return b.String()
}

// cfgLine shows the options the session set, then the family's defaults.
func cfgLine(typed map[string]string) string {
	cfg, err := models.ParseConfig(typed)
	if err != nil {
		return fmt.Sprintf("%v (invalid: %v)", typed, err)
	}
	var set []string
	for _, name := range slices.Sorted(maps.Keys(typed)) {
		if name != "model" {
			set = append(set, name+"="+typed[name])
		}
	}
	line := cfg.Model
	if len(set) > 0 {
		line += " " + strings.Join(set, " ")
	}
	return line + "   [" + cfg.Resolved().String() + "]"
}

func runStatus(c *Call) error {
	st := Status{Settings: map[string]string{}, Results: map[string]string{}}
	if typed := sessionModelOptions(c.Session); len(typed) > 0 {
		choice := modelChoice(typed)
		st.Model = &choice
	}
	for name, value := range c.Session.Settings() {
		if !models.IsOption(name) {
			st.Settings[name] = value
		}
	}
	for cmd, result := range c.Session.lastResults() {
		st.Results[cmd] = summarize(result)
	}
	return c.Emit(st)
}

// results copies the last result of every command.
func (s *Session) lastResults() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.results)
}

// summarize is a result's first line of text, or its JSON, cut to fit a line.
func summarize(result any) string {
	var line string
	if t, ok := result.(Texter); ok {
		line = firstLine(strings.TrimSpace(t.Text()))
	} else {
		line = fmt.Sprintf("%+v", result)
	}
	if len(line) > 100 {
		line = line[:97] + "..."
	}
	return line
}

func runSet(c *Call) error {
	typed := c.Given()
	if len(typed) == 0 {
		return Usagef("set needs key=value options, e.g. set steps=200 (see `help set` for the keys)")
	}
	modelValues := sessionModelOptions(c.Session)
	changesModel := false
	for name, value := range typed {
		if models.IsOption(name) {
			modelValues[name] = value
			changesModel = true
		}
	}
	if changesModel {
		if _, err := models.ParseConfig(modelValues); err != nil {
			return Usagef("%v", err)
		}
	}
	c.Session.Set(typed)
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(typed)) {
		parts = append(parts, name+"="+typed[name])
	}
	c.Printf("set %s\n", Printable(strings.Join(parts, " "))) // AnyOption: the values are any text
	return nil
}

func runUnset(c *Call) error {
	if len(c.Args) == 0 {
		return Usagef("unset needs the keys to remove (set now: %s)", strings.Join(c.Session.SettingNames(), ", "))
	}
	for _, key := range c.Args {
		if _, ok := c.Session.Get(key); !ok {
			return Usagef("%s is not set (set now: %s)", key, strings.Join(c.Session.SettingNames(), ", "))
		}
	}
	for _, key := range c.Args {
		if key == "model" {
			clearModel(c.Session)
		}
		c.Session.Set(map[string]string{key: ""})
	}
	return nil
}
