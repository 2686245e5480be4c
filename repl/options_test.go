package repl

import (
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
)

// TestEveryOptionComesFromATable: commands declare options only through typed
// tables (a field's kind is set by nothing else), so every value is parsed,
// checked, documented and completed by the one mechanism.
func TestEveryOptionComesFromATable(t *testing.T) {
	for _, cmd := range Commands() {
		for _, opt := range cmd.AllOptions() {
			if opt.Kind == "" || opt.Help == "" {
				t.Errorf("%s: option %q is not a field of a typed table (kind %q, help %q)", cmd.Name, opt.Name, opt.Kind, opt.Help)
			}
		}
	}
}

type readArgs struct {
	Steps int
	Words []string
}

// TestOptionsReadTypedThenSessionThenDefault: a command's typed struct holds
// what was typed, else what the session set, else the default; a bad session
// value is refused with the option's rule.
func TestOptionsReadTypedThenSessionThenDefault(t *testing.T) {
	opts := Options[readArgs]{
		Table: option.Table[readArgs]{
			option.Int("steps", "steps", func(a *readArgs) *int { return &a.Steps }, option.AtLeast(1)),
			option.List("words", "words", []string{"a", "b"}, func(a *readArgs) *[]string { return &a.Words }),
		},
		Defaults: readArgs{Steps: 10, Words: []string{"a"}},
	}
	s := NewSession()
	call := func(given map[string]string) *Call {
		return &Call{Command: &Command{Name: "t", Options: opts.Declare()}, Session: s, given: given}
	}
	if got, err := opts.Read(call(nil)); err != nil || got.Steps != 10 || strings.Join(got.Words, ",") != "a" {
		t.Errorf("defaults: %+v, %v", got, err)
	}
	s.Set(map[string]string{"steps": "20"})
	if got, err := opts.Read(call(nil)); err != nil || got.Steps != 20 {
		t.Errorf("session steps=20: %+v, %v", got, err)
	}
	if got, err := opts.Read(call(map[string]string{"steps": "30", "words": "b,a"})); err != nil || got.Steps != 30 || strings.Join(got.Words, ",") != "b,a" {
		t.Errorf("typed steps=30 words=b,a: %+v, %v", got, err)
	}
	s.Set(map[string]string{"steps": "0"})
	if _, err := opts.Read(call(nil)); err == nil || !strings.Contains(err.Error(), "steps=0 must be at least 1") {
		t.Errorf("session steps=0: error %v, want the rule", err)
	}
	if opts.Defaults.Steps != 10 || len(opts.Defaults.Words) != 1 {
		t.Errorf("reading changed the defaults: %+v", opts.Defaults)
	}
}

// TestFamilyListsAreCalledModels: a list of model families is models= in
// every command; bench's older variants= still reads into it, and its help says so.
func TestFamilyListsAreCalledModels(t *testing.T) {
	families := strings.Join(models.FamilyNames(), ",")
	for _, cmd := range Commands() {
		for _, opt := range cmd.Options {
			if strings.HasPrefix(opt.Kind, "comma-separated") && strings.Join(opt.Values, ",") == families && opt.Name != "models" {
				t.Errorf("%s: the list of families is %s=, want models=", cmd.Name, opt.Name)
			}
		}
	}
	for _, name := range []string{"bench attention", "bench devices"} {
		inv, err := Parse([]string{"bench", strings.TrimPrefix(name, "bench "), "variants=full,pi"})
		if err != nil || inv.Options["models"] != "full,pi" {
			t.Errorf("%s variants=full,pi: %+v, %v; want models=full,pi", name, inv, err)
		}
		cmd, _ := Lookup(name)
		if help := HelpText(cmd); !strings.Contains(help, "(also: variants)") {
			t.Errorf("%s --help does not name variants= as models='s other name:\n%s", name, help)
		}
	}
}
