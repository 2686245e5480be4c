package repl

import (
	"slices"
	"strings"
	"testing"
)

func texts(sgs []Suggestion) []string {
	out := make([]string, len(sgs))
	for i, sg := range sgs {
		out[i] = sg.Text
	}
	return out
}

func TestCompleteCommandsOptionsAndValues(t *testing.T) {
	s := NewSession()
	cases := []struct {
		line       string
		want       []string // must all be offered
		notWant    []string // must not be offered
		exactCount int      // when > 0, the number of suggestions
	}{
		{line: "mo", want: []string{"model", "models"}, notWant: []string{"status"}},
		{line: "sta", want: []string{"status"}, exactCount: 1},
		{line: "bench ", want: []string{"attention"}},
		{line: "data ", want: []string{"list", "prepare", "foldoc", "opticks"}},
		{line: "model p", want: []string{"pi", "perceiverar"}, notWant: []string{"ecp"}},
		{line: "model pi win", want: []string{"window="}, exactCount: 1},
		{line: "model pi fusion=", want: []string{"prior", "mix"}, exactCount: 2},
		{line: "model pi head_phase=t", want: []string{"true"}, exactCount: 1},
		{line: "model model=", want: []string{"ecp", "pi", "full"}},
		{line: "mask n=256 ", want: []string{"head=", "width=", "window="}, notWant: []string{"n="}},
		{line: "compare models=ecp,", want: []string{"local", "pi"}, notWant: []string{"ecp"}},
		{line: "help mo", want: []string{"model", "models"}},
		{line: "help bench a", want: []string{"attention"}},
		{line: "status --j", want: []string{"--json"}, exactCount: 1},
		{line: "backend ", want: []string{"go"}},
	}
	for _, tc := range cases {
		got := texts(Complete(s, tc.line))
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %v, missing %q", tc.line, got, w)
			}
		}
		for _, w := range tc.notWant {
			if slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %v, should not offer %q", tc.line, got, w)
			}
		}
		if tc.exactCount > 0 && len(got) != tc.exactCount {
			t.Errorf("Complete(%q) = %v, want %d suggestions", tc.line, got, tc.exactCount)
		}
	}
}

func TestCompleteOffersNothingInsideQuotesCommentsOrUnknownCommands(t *testing.T) {
	s := NewSession()
	for _, line := range []string{"", "   ", `sample "The `, "status # mo", "nosuch ", "nosuch x=", "model pi nosuch="} {
		if got := Complete(s, line); len(got) != 0 {
			t.Errorf("Complete(%q) = %v, want nothing", line, texts(got))
		}
	}
}

func TestCompleteDescribesEverySuggestion(t *testing.T) {
	s := NewSession()
	for _, line := range []string{"m", "model ", "model pi ", "model pi fusion=", "data "} {
		for _, sg := range Complete(s, line) {
			if strings.TrimSpace(sg.Description) == "" {
				t.Errorf("Complete(%q): %q has no description", line, sg.Text)
			}
		}
	}
}

func TestCompleteShowsSessionValuesAndUsesSessionFamily(t *testing.T) {
	s := NewSession()
	s.Set(map[string]string{"model": "pi", "layers": "3"})
	var layers Suggestion
	for _, sg := range Complete(s, "model lay") {
		if sg.Text == "layers=" {
			layers = sg
		}
	}
	if !strings.Contains(layers.Description, "now 3") {
		t.Errorf("layers= description %q should show the session value 3", layers.Description)
	}
	// fusion belongs to pi: the session's family decides its values in `mask`.
	if got := texts(Complete(s, "mask fusion=")); !slices.Equal(got, []string{"prior", "mix"}) {
		t.Errorf("mask fusion= with model pi in the session: %v", got)
	}
}

func TestCompletePaths(t *testing.T) {
	dir := t.TempDir()
	if got := pathSuggestions(dir + "/"); len(got) != 0 {
		t.Fatalf("empty folder: %v", texts(got))
	}
	if err := writeFile(dir+"/ckpt-000010/state.json", "{}"); err != nil {
		t.Fatal(err)
	}
	got := texts(pathSuggestions(dir + "/ck"))
	if !slices.Equal(got, []string{dir + "/ckpt-000010/"}) {
		t.Errorf("pathSuggestions = %v", got)
	}
}
