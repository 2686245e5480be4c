package train

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/shapes"
)

// seedCheckpoint is a checkpoint of a tiny ECP model (testdata/checkpoint,
// written by ecpi) and its variables, which are the ones its model needs
// (TestForgedCheckpointsAreRefused checks that saved and needed agree).
func seedCheckpoint(t testing.TB) (map[string][]byte, map[string]shapes.Shape) {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{manifestFile, variablesFile, sumsFile} {
		raw, err := os.ReadFile(filepath.Join("testdata", "checkpoint", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = raw
	}
	c, err := verifyCheckpoint("seed", files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]shapes.Shape{}
	for _, v := range c.manifest.Variables {
		want[v.Path] = shapes.Make(v.DType, v.Dims...)
	}
	return files, want
}

// FuzzCheckpointReader feeds the checkpoint reader arbitrary manifests,
// variable files and digest files, with digests that match (a forger's) or
// as given: it returns an error or a checkpoint whose variables can be read
// and checked, and never panics.
func FuzzCheckpointReader(f *testing.F) {
	files, want := seedCheckpoint(f)
	f.Add(files[manifestFile], files[variablesFile], files[sumsFile], true)
	f.Add(files[manifestFile], files[variablesFile][:len(files[variablesFile])/2], files[sumsFile], true)
	f.Add([]byte(strings.Replace(string(files[manifestFile]), `"layers": "1"`, `"layers": "2"`, 1)), files[variablesFile], files[sumsFile], true)
	f.Add([]byte(`{"format": 3}`), []byte{}, []byte("x  state.json\n"), false)
	f.Fuzz(func(t *testing.T, manifest, variables, sums []byte, rehash bool) {
		if rehash {
			sums = fmt.Appendf(nil, "%x  %s\n%x  %s\n", sha256.Sum256(manifest), manifestFile, sha256.Sum256(variables), variablesFile)
		}
		c, err := verifyCheckpoint("fuzzed", map[string][]byte{manifestFile: manifest, variablesFile: variables, sumsFile: sums})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "checkpoint fuzzed is corrupt: ") {
				t.Errorf("error %q does not say which checkpoint is corrupt", err)
			}
			return
		}
		if err := checkVariables(c.dir, c.manifest, want); err != nil {
			return
		}
		if _, err := readVariables(c); err != nil {
			t.Errorf("a checkpoint that passed every check could not be read: %v", err)
		}
	})
}

// FuzzOptionValues gives every training and model option arbitrary text: a
// value is refused with an error naming the option, or accepted, and then it
// reads back as a value that is accepted again to the same effect.
func FuzzOptionValues(f *testing.F) {
	infos := slices.Concat(OptionInfos(), models.AllOptions())
	for _, v := range []string{"", "0", "-1", "1e400", "nan", "abc", "3", "1,2", "true", "ecp", " 7 ", "99999999999999999999"} {
		f.Add(uint8(0), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		info := infos[int(which)%len(infos)]
		if err := info.Check(value); err != nil {
			if !strings.Contains(err.Error(), info.Name) {
				t.Errorf("%s=%q: error %q does not name the option", info.Name, value, err)
			}
			return
		}
		if info.Name == "vocab" || info.Name == "model" {
			return // set by the tokenizer; a family name, checked against the registry by ParseOptions
		}
		values := map[string]string{info.Name: value}
		if !IsOption(info.Name) {
			values["model"] = modelReading(info.Name)
		}
		o, err := ParseOptions(values)
		if err != nil {
			return // a rule between options (n and the window, ...): refused, named
		}
		again := maps.Clone(values)
		again[info.Name] = readBack(o, info.Name)
		if o2, err := ParseOptions(again); err != nil || readBack(o2, info.Name) != again[info.Name] {
			t.Errorf("%s=%q read back as %q, which does not read the same: %v", info.Name, value, again[info.Name], err)
		}
	})
}

// modelReading is a family that reads the model option name.
func modelReading(name string) string {
	for _, f := range models.Families() {
		if f.Reads(name) {
			return f.Name
		}
	}
	return ""
}

func readBack(o Options, name string) string {
	if IsOption(name) {
		return o.Get(name)
	}
	return o.Model.Get(name)
}
