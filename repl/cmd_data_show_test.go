package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestDataShowGeneratedSets(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		images     bool
	}{
		{"shapes", " at the ", true},
		{"listops", "[", false},
		{"assoc", " ? k", false},
	} {
		var out bytes.Buffer
		if err := Execute(context.Background(), NewSession(), "data show "+tc.name+" count=3 --json", &out); err != nil {
			t.Fatalf("data show %s: %v", tc.name, err)
		}
		var shown DataExamples
		if err := json.Unmarshal(out.Bytes(), &shown); err != nil {
			t.Fatalf("data show %s --json: %v\n%s", tc.name, err, out.String())
		}
		if len(shown.Examples) != 3 {
			t.Fatalf("data show %s count=3 gave %d examples", tc.name, len(shown.Examples))
		}
		for _, e := range shown.Examples {
			if !strings.Contains(e.Text, tc.want) || (e.Pixels != nil) != tc.images {
				t.Errorf("data show %s: example %+v lacks %q or has the wrong pixels", tc.name, e.Text, tc.want)
			}
		}
	}
}

func TestDataShowRefusesUnknownNamesAndLargeCounts(t *testing.T) {
	for line, want := range map[string]string{
		"data show nowhere":            "data show takes one NAME",
		"data show shapes count=17":    "count=17 must be at most 16",
		"data show listops count=zero": "count",
	} {
		err := Execute(context.Background(), NewSession(), line, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", line, err, want)
		}
	}
}
