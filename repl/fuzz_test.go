package repl

import (
	"context"
	"io"
	"slices"
	"strconv"
	"testing"
)

// Seeds: the quoting and option edge cases people type. The kept corpus in
// testdata/fuzz adds what fuzzing found; plain `go test` runs all of them.
var fuzzSeeds = []string{
	"", " ", "#", "help", "help bench", "help bench attention", "model ecp layers=4",
	`sample "The "`, `sample 'it''s'`, `sample "a\"b"`, `sample "unterminated`, `x "\`,
	"model pi window=", "model =3", "model ==", "set a=b=c", "unset", "mask n=0", "mask n=-8 width=3",
	"mask head=-1", "model pi heads=0", "model ecp n=7 segment=3", "status --json --help", "--json",
	"model\tecp\r", "data \x00", "model ecp n=99999999999999999999", "compare models=,,,", "bench",
}

// FuzzParse: splitting, parsing and completing any line returns (possibly an
// error) and never panics.
func FuzzParse(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	s := NewSession()
	f.Fuzz(func(t *testing.T, line string) {
		Complete(s, line)
		words, err := SplitWords(line)
		if err != nil {
			if !IsUsage(err) {
				t.Errorf("SplitWords(%q): %v is not a usage error", line, err)
			}
			return
		}
		if _, err := Parse(words); err != nil && !IsUsage(err) {
			t.Errorf("Parse(%q): %v is not a usage error", line, err)
		}
	})
}

// fuzzSafe are the commands FuzzExecute runs: those that only read and change
// the session or draw, so fuzzing never trains, downloads or installs.
var fuzzSafe = []string{"help", "model", "data", "backend", "status", "set", "unset", "quit", "exit", "mask", "models"}

// FuzzExecute runs lines through the commands themselves, without Execute's
// recover, so any panic in them fails the fuzzer instead of becoming an error.
func FuzzExecute(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitWords(line)
		if err != nil {
			return
		}
		inv, err := Parse(words)
		if err != nil || inv == nil || inv.Help || !slices.Contains(fuzzSafe, inv.Command.Name) {
			return
		}
		if n, err := strconv.Atoi(inv.Options["n"]); err == nil && n > 1024 {
			return // a big mask is slow, not wrong
		}
		s := NewSession()
		s.Set(map[string]string{"model": "pi", "n": "64"})
		c := &Call{Command: inv.Command, Session: s, Ctx: context.Background(), Out: io.Discard, JSON: inv.JSON, Args: inv.Args, given: inv.Options}
		inv.Command.Run(c)
		Complete(s, line)
	})
}
