package repl

import (
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
