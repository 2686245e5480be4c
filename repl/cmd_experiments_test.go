package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStatusLineSaysWhenNoneIsStale: the README's status line speaks of
// stale sections only when some are.
func TestStatusLineSaysWhenNoneIsStale(t *testing.T) {
	current := ExperimentsStatus{CodeVersion: "abc", Current: 9, Files: 9, Claims: "Of the 26 claims: …"}
	if line := current.Line(); strings.Contains(line, "stale") || !strings.HasPrefix(line, "All 9 notebook sections") {
		t.Errorf("every section current: %q", line)
	}
	partly := ExperimentsStatus{CodeVersion: "abc", Current: 8, Files: 9, Stale: map[string]string{"02": "older code"}}
	if line := partly.Line(); !strings.Contains(line, "8 of 9") || !strings.Contains(line, "the others are marked stale") {
		t.Errorf("one section stale: %q", line)
	}
}

// TestVerifyFindsAReportLeftBehind: a report or status line that differs from
// what `experiments` writes now is named; once written, nothing is.
func TestVerifyFindsAReportLeftBehind(t *testing.T) {
	dir := t.TempDir()
	args := experimentsArgs{Out: filepath.Join(dir, "EXPERIMENTS.md"), Readme: filepath.Join(dir, "README.md")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(args.Out, []byte("an older report\n"), 0o644))
	must(os.WriteFile(args.Readme, []byte("intro "+statusMarker+"3 of 9 current"+statusEnd+" more\n"), 0o644))
	behind, err := outOfDate(args, "the report\n", "9 of 9 current")
	must(err)
	if want := []string{args.Out, args.Readme + "'s status line"}; !slices.Equal(behind, want) {
		t.Errorf("out of date: %q, want %q", behind, want)
	}
	must(os.WriteFile(args.Out, []byte("the report\n"), 0o644))
	must(writeStatusLine(args.Readme, "9 of 9 current"))
	if behind, err = outOfDate(args, "the report\n", "9 of 9 current"); err != nil || len(behind) > 0 {
		t.Errorf("after writing: out of date %q (%v), want none", behind, err)
	}
	if behind, err = outOfDate(experimentsArgs{Out: "-", Readme: "-"}, "anything", "anything"); err != nil || len(behind) > 0 {
		t.Errorf("out=- readme=-: out of date %q (%v), want none", behind, err)
	}
}
