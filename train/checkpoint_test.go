package train

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// trained runs a tiny model for steps steps, checkpointing every step, and
// returns its newest checkpoint.
func trained(t *testing.T, extra map[string]string) string {
	t.Helper()
	values := map[string]string{"steps": "2", "eval_every": "1", "eval_batches": "1", "keep": "10"}
	for k, v := range extra {
		values[k] = v
	}
	r, err := Run(context.Background(), tiny(t, values), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Checkpoint
}

// copyCheckpoint copies a checkpoint folder into a fresh run folder.
func copyCheckpoint(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run", filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{manifestFile, variablesFile, sumsFile} {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, name), raw)
	}
	return dst
}

func writeFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rehash rewrites SHA256SUMS for the files as they are now: a forger's
// edit, which the digests alone cannot see.
func rehash(t *testing.T, dir string) {
	t.Helper()
	var sums string
	for _, name := range []string{manifestFile, variablesFile} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sums += fmt.Sprintf("%x  %s\n", sha256.Sum256(raw), name)
	}
	writeFile(t, filepath.Join(dir, sumsFile), []byte(sums))
}

// refused asserts that eval's, sample's and resume's way in all refuse the
// checkpoint with one line naming it.
func refused(t *testing.T, dir, what string) {
	t.Helper()
	if _, err := Open(dir, "go"); err == nil || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: Open: %v, want a one-line error naming %s", what, err, dir)
	}
	if _, err := Resume(context.Background(), dir, map[string]string{"steps": "5"}, nil); err == nil {
		t.Errorf("%s: Resume loaded it", what)
	}
}

// leaves lists the paths of every scalar in a JSON value: ["options","lr"], ["variables",3,"dims",0].
func leaves(v any, path []any) [][]any {
	switch v := v.(type) {
	case map[string]any:
		var out [][]any
		for _, k := range sortedKeys(v) {
			out = append(out, leaves(v[k], append(slices.Clone(path), k))...)
		}
		return out
	case []any:
		var out [][]any
		for i, e := range v {
			out = append(out, leaves(e, append(slices.Clone(path), i))...)
		}
		return out
	}
	return [][]any{path}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// changeLeaf returns a copy of the JSON value with the scalar at path changed.
func changeLeaf(v any, path []any) any {
	if len(path) == 0 {
		switch v := v.(type) {
		case float64:
			return v + 1
		case string:
			return v + "x"
		case bool:
			return !v
		case nil:
			return 1.0
		}
		panic(fmt.Sprintf("not a scalar: %v", v))
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = e
		}
		out[path[0].(string)] = changeLeaf(v[path[0].(string)], path[1:])
		return out
	case []any:
		out := slices.Clone(v)
		out[path[0].(int)] = changeLeaf(v[path[0].(int)], path[1:])
		return out
	}
	panic("bad path")
}

func readManifestJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeManifestJSON(t *testing.T, dir string, m any) {
	t.Helper()
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, manifestFile), raw)
}

// TestEveryManifestFieldIsProtected changes every scalar of state.json in
// turn (and removes every field, and adds one): each edit is refused by
// LoadManifest, which eval, sample, probes and resume all go through.
func TestEveryManifestFieldIsProtected(t *testing.T) {
	original := trained(t, nil)
	dir := copyCheckpoint(t, original)
	m := readManifestJSON(t, dir)
	if _, _, err := LoadManifest(dir); err != nil {
		t.Fatalf("the untouched copy does not load: %v", err)
	}
	edits := map[string]any{"an added field": withKey(m, "extra", 1.0)}
	for _, key := range sortedKeys(m) {
		edits["without "+key] = withKey(m, key, nil)
	}
	for _, path := range leaves(m, nil) {
		edits[fmt.Sprint("changed ", path)] = changeLeaf(m, path)
	}
	if len(edits) < 100 {
		t.Fatalf("only %d edits: the manifest should have many fields", len(edits))
	}
	for what, edited := range edits {
		writeManifestJSON(t, dir, edited)
		if _, _, err := LoadManifest(dir); err == nil || !strings.Contains(err.Error(), "state.json does not match its SHA-256") {
			t.Errorf("%s: %v, want the digest mismatch", what, err)
		}
	}
	refused(t, dir, "an edited manifest")
}

// withKey returns a copy of m with key set (nil: removed).
func withKey(m map[string]any, key string, value any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	if value == nil {
		delete(out, key)
	} else {
		out[key] = value
	}
	return out
}

// TestForgedCheckpointsAreRefused: even with SHA256SUMS recomputed, a
// checkpoint loads only if its variables are exactly those its model needs.
func TestForgedCheckpointsAreRefused(t *testing.T) {
	ecp := trained(t, nil)
	local := trained(t, map[string]string{"model": "local", "segment": "", "window": "8"})
	cases := []struct {
		name   string
		forge  func(t *testing.T, dir string)
		reason string
	}{
		{"variable entry removed", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Variables = m.Variables[:len(m.Variables)-1] })
			fitVariables(t, dir)
		}, "lacks variable"},
		{"variable added", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) {
				last := m.Variables[len(m.Variables)-1]
				m.Variables = append(m.Variables, SavedVariable{Path: "/extra/weights", DType: last.DType, Dims: last.Dims, Offset: last.Offset + last.Length, Length: last.Length})
			})
			fitVariables(t, dir)
		}, "which its ecp model does not have"},
		{"variable reshaped", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) {
				for i, v := range m.Variables {
					if len(v.Dims) == 2 && v.Dims[0] != v.Dims[1] {
						m.Variables[i].Dims = []int{v.Dims[1], v.Dims[0]}
						return
					}
				}
			})
		}, "its model needs"},
		{"layers changed", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Config = m.Config.MustWith("layers", "3") })
		}, "lacks variable"},
		{"dim changed", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Config = m.Config.MustWith("dim", "32") })
		}, "its model needs"},
		{"another family's variables.bin and list", func(t *testing.T, dir string) {
			other := readManifest(t, local)
			editManifest(t, dir, func(m *Manifest) { m.Variables = other.Variables })
			copyFile(t, filepath.Join(local, variablesFile), filepath.Join(dir, variablesFile))
		}, "which its ecp model does not have"},
		{"another family's variables.bin", func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(local, variablesFile), filepath.Join(dir, variablesFile))
		}, "variables.bin has"},
		{"family changed", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Family = "local" })
		}, "disagrees with its config"},
		{"a loss dropped", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Losses = m.Losses[1:] })
		}, "do not fit together"},
		{"no SHA256SUMS", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, sumsFile))
		}, "has no SHA256SUMS"},
	}
	for _, c := range cases {
		dir := copyCheckpoint(t, ecp)
		c.forge(t, dir)
		if c.name != "no SHA256SUMS" {
			rehash(t, dir)
		}
		_, err := Open(dir, "go")
		if err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.reason)
		}
		refused(t, dir, c.name)
	}
}

func readManifest(t *testing.T, dir string) *Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func editManifest(t *testing.T, dir string, edit func(m *Manifest)) {
	t.Helper()
	m := readManifest(t, dir)
	edit(m)
	writeManifestJSON(t, dir, m)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, raw)
}

// fitVariables cuts or extends variables.bin to what the manifest lists.
func fitVariables(t *testing.T, dir string) {
	t.Helper()
	m := readManifest(t, dir)
	last := m.Variables[len(m.Variables)-1]
	if err := os.Truncate(filepath.Join(dir, variablesFile), last.Offset+last.Length); err != nil {
		t.Fatal(err)
	}
}

// TestResumingAnOlderCheckpointBranches: resuming ckpt-3 of a run that has
// reached step 6 continues in a new folder; the run keeps every checkpoint,
// byte for byte, and its newest stays its own.
func TestResumingAnOlderCheckpointBranches(t *testing.T) {
	newest := trained(t, map[string]string{"steps": "6"})
	run := filepath.Dir(newest)
	before := folderDigest(t, run)
	r, err := Resume(context.Background(), filepath.Join(run, checkpointName(3)), map[string]string{"steps": "8"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := folderDigest(t, run); after != before {
		t.Errorf("the resumed run's folder changed")
	}
	if r.Run != run+"-from-3" || r.BranchedFrom != filepath.Join(run, checkpointName(3)) || !strings.Contains(r.Text(), "new run folder") {
		t.Errorf("run %s, branched from %q; want %s-from-3 from its ckpt-3, and the text to say so", r.Run, r.BranchedFrom, run)
	}
	if got, _ := FindCheckpoint(run); got != newest {
		t.Errorf("the run's newest checkpoint is %s, want %s", got, newest)
	}
	again, err := Resume(context.Background(), newest, map[string]string{"steps": "7"}, nil)
	if err != nil || again.Run != run || again.BranchedFrom != "" {
		t.Errorf("resuming the newest checkpoint should continue in place: %v, run %s", err, again.Run)
	}
}

// folderDigest hashes the names and contents of a folder's files.
func folderDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == lockFile {
			return err
		}
		raw, err := os.ReadFile(path)
		fmt.Fprintf(h, "%s %x\n", path, sha256.Sum256(raw))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestARunFolderHasOneWriter: while a run trains, another run into its folder
// is refused, naming the process; a lock file left by a dead process does not
// block; temporary folders of killed saves are removed.
func TestARunFolderHasOneWriter(t *testing.T) {
	o := tiny(t, map[string]string{"steps": "3", "eval_every": "0"})
	var second error
	_, err := Run(context.Background(), o, func(p Progress) {
		if p.Step == 1 {
			_, second = Run(context.Background(), o, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if second == nil || !strings.Contains(second.Error(), fmt.Sprintf("another ecpi (process %d)", os.Getpid())) {
		t.Errorf("a second run into the same folder: %v, want refused naming process %d", second, os.Getpid())
	}
	run := filepath.Join(t.TempDir(), "stale")
	leftover := filepath.Join(run, "."+checkpointName(2)+".tmp123")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run, lockFile), []byte("999999999\n"))
	d, err := claimRunDir(run)
	if err != nil {
		t.Fatalf("a lock file of a dead process blocked: %v", err)
	}
	defer d.release()
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the temporary folder of an interrupted save is still there")
	}
}

// TestFailedOrStoppedRuns: a run that fails before its first checkpoint
// leaves no run folder; one stopped before its first evaluation says it was
// not evaluated instead of reporting a loss of 0.
func TestFailedOrStoppedRuns(t *testing.T) {
	o := tiny(t, map[string]string{"lr": "1e30", "warmup": "0", "clip": "0", "steps": "20", "eval_every": "0"})
	if _, err := Run(context.Background(), o, nil); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Fatalf("lr=1e30: %v, want the loss to diverge", err)
	}
	if _, err := os.Stat(o.RunDir); !os.IsNotExist(err) {
		t.Errorf("the failed run left its folder %s", o.RunDir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Run(ctx, tiny(t, map[string]string{"eval_every": "0"}), func(p Progress) {
		if p.Step == 2 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ValidStep != 0 || !strings.Contains(r.Text(), "no evaluation yet") || strings.Contains(r.Text(), "valid loss") {
		t.Errorf("stopped before any evaluation, the result says:\n%s", r.Text())
	}
}
