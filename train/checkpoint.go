package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// A checkpoint is a folder ckpt-<step> in the run folder holding state.json
// (this Manifest), variables.bin (every variable of the store: weights, Adam
// moments and step counters, the dropout RNG state) and SHA256SUMS, the
// SHA-256 of both in sha256sum's format. It is written into a temporary
// folder and renamed into place, so a checkpoint folder is either complete or
// absent. Loading checks both digests, the manifest's own rules, and that
// variables.bin holds exactly the variables the manifest's model needs, each
// with the shape its config implies: an edited, damaged or mismatched
// checkpoint is refused instead of loaded as some other model.
type Manifest struct {
	Format    int             `json:"format"`
	Family    string          `json:"family"`
	Config    models.Config   `json:"config"` // the resolved model config, as its options
	Task      string          `json:"task"`
	Options   Options         `json:"options"`
	Step      int             `json:"step"`
	Batcher   data.BatchState `json:"batcher"`
	Losses    []float64       `json:"losses"` // train loss of every step so far
	Eval      *Eval           `json:"eval,omitempty"`
	Variables []SavedVariable `json:"variables"`
}

// SavedVariable locates one variable in variables.bin.
type SavedVariable struct {
	Path   string       `json:"path"`
	DType  dtypes.DType `json:"dtype"`
	Dims   []int        `json:"dims"`
	Offset int64        `json:"offset"`
	Length int64        `json:"length"`
}

const (
	// manifestFormat 3: the manifest is covered by SHA256SUMS (format 2 kept
	// only variables.bin's digest, inside the manifest it could not protect);
	// format 2's models are today's.
	manifestFormat = 3
	manifestFile   = "state.json"
	variablesFile  = "variables.bin"
	sumsFile       = "SHA256SUMS"
	ckptPrefix     = "ckpt-"
)

// rngPath is the store's RNG state: restored by hand, since the store would
// mark a variable served by a loader trainable.
const rngPath = "/" + model.RNGStateVariableName

// metricsScope holds GoMLX's running training metrics, named afresh by every
// trainer: not part of a model's state, so not saved.
const metricsScope = "/metrics/"

func checkpointName(step int) string { return fmt.Sprintf("%s%08d", ckptPrefix, step) }

// saveCheckpoint writes the store and m as checkpoint m.Step of runDir (the
// caller holds its lock) and deletes all but the newest keep checkpoints. It
// never replaces a checkpoint: one of the same step is an error.
func saveCheckpoint(runDir string, m *Manifest, store *model.Store, keep int) (string, error) {
	final := filepath.Join(runDir, checkpointName(m.Step))
	if _, err := os.Stat(final); err == nil {
		return "", fmt.Errorf("checkpoint %s exists already; ecpi never overwrites a checkpoint", final)
	}
	tmp, err := os.MkdirTemp(runDir, "."+checkpointName(m.Step)+".tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	variablesSum, err := writeVariables(filepath.Join(tmp, variablesFile), m, store)
	if err != nil {
		return "", fmt.Errorf("saving checkpoint %s: %w", final, err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	sums := fmt.Sprintf("%x  %s\n%s  %s\n", sha256.Sum256(manifest), manifestFile, variablesSum, variablesFile)
	for name, content := range map[string][]byte{manifestFile: manifest, sumsFile: []byte(sums)} {
		if err := writeSynced(filepath.Join(tmp, name), content); err != nil {
			return "", fmt.Errorf("saving checkpoint %s: %w", final, err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return "", err
	}
	// Renaming onto an existing empty folder would succeed: the check above
	// and the run folder's lock make sure there is none.
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	if err := syncDir(runDir); err != nil {
		return "", err
	}
	return final, pruneCheckpoints(runDir, keep)
}

// writeVariables writes every initialised variable of the store but GoMLX's
// metrics, records where each lies in m.Variables, and returns the file's
// SHA-256 in hex.
func writeVariables(path string, m *Manifest, store *model.Store) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hash := sha256.New()
	m.Variables = nil
	var offset int64
	for v := range store.IterVariables() {
		value, err := v.Value()
		if err != nil || value == nil || strings.HasPrefix(v.Path(), metricsScope) {
			continue // declared but never initialised, or bookkeeping: nothing to save
		}
		var writeErr error
		var length int64
		if err := value.ConstBytes(func(raw []byte) {
			length = int64(len(raw))
			hash.Write(raw)
			_, writeErr = f.Write(raw)
		}); err != nil {
			return "", fmt.Errorf("variable %s: %w", v.Path(), err)
		}
		if writeErr != nil {
			return "", writeErr
		}
		shape := value.Shape()
		m.Variables = append(m.Variables, SavedVariable{Path: v.Path(), DType: shape.DType, Dims: slices.Clone(shape.Dimensions), Offset: offset, Length: length})
		offset += length
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return hex.EncodeToString(hash.Sum(nil)), f.Close()
}

func writeSynced(path string, content []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a folder's entries (a file created, a folder renamed) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Checkpoints lists the checkpoint folders of a run, oldest first.
func Checkpoints(runDir string) ([]string, error) {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ckptPrefix) {
			out = append(out, filepath.Join(runDir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// pruneCheckpoints deletes all but the newest keep checkpoints. Each is first
// renamed to a temporary name, so a process killed while deleting leaves a
// temporary folder (removed when the run is next locked), never a checkpoint
// folder with files missing.
func pruneCheckpoints(runDir string, keep int) error {
	all, err := Checkpoints(runDir)
	if err != nil {
		return err
	}
	for _, old := range all[:max(0, len(all)-keep)] {
		doomed := filepath.Join(runDir, "."+filepath.Base(old)+".tmp-pruned")
		if err := os.Rename(old, doomed); err != nil {
			return err
		}
		if err := os.RemoveAll(doomed); err != nil {
			return err
		}
	}
	return nil
}

// FindCheckpoint resolves path to a checkpoint folder: path itself when it
// holds a state.json, else the newest checkpoint of the run folder path.
func FindCheckpoint(path string) (string, error) {
	if _, err := os.Stat(filepath.Join(path, manifestFile)); err == nil {
		return path, nil
	}
	all, err := Checkpoints(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no run folder or checkpoint at %s", path)
	}
	if err != nil {
		return "", fmt.Errorf("no run folder or checkpoint at %s: %w", path, err)
	}
	if len(all) == 0 {
		return "", fmt.Errorf("run folder %s has no checkpoint", path)
	}
	return all[len(all)-1], nil
}

// LoadManifest reads a checkpoint's state.json (path: a checkpoint or a run
// folder) after checking both files against SHA256SUMS and the manifest
// against its rules.
func LoadManifest(path string) (*Manifest, string, error) {
	c, err := readCheckpoint(path)
	if err != nil {
		return nil, "", err
	}
	return c.manifest, c.dir, nil
}

// checkpointFiles is a checkpoint read into memory and verified on its own:
// the same bytes are checked and then loaded, so a file replaced in between
// cannot slip through.
type checkpointFiles struct {
	dir       string
	manifest  *Manifest
	variables []byte
}

func readCheckpoint(path string) (*checkpointFiles, error) {
	dir, err := FindCheckpoint(path)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, name := range []string{manifestFile, variablesFile, sumsFile} {
		if files[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			if errors.Is(err, fs.ErrNotExist) && name == sumsFile {
				return nil, fmt.Errorf("checkpoint %s has no %s: an older ecpi saved it without protecting its manifest, or a file was removed; train it again", dir, sumsFile)
			}
			return nil, fmt.Errorf("checkpoint %s is corrupt: %w", dir, err)
		}
	}
	return verifyCheckpoint(dir, files)
}

// verifyCheckpoint checks a checkpoint's files (by name) against SHA256SUMS
// and the manifest against its rules.
func verifyCheckpoint(dir string, files map[string][]byte) (*checkpointFiles, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint %s is corrupt: %s", dir, fmt.Sprintf(format, args...))
	}
	sums, err := parseSums(files[sumsFile])
	if err != nil {
		return nil, corrupt("%s: %v", sumsFile, err)
	}
	for _, name := range []string{manifestFile, variablesFile} {
		if sum := sha256.Sum256(files[name]); hex.EncodeToString(sum[:]) != sums[name] {
			return nil, corrupt("%s does not match its SHA-256 in %s (changed after it was saved)", name, sumsFile)
		}
	}
	m, err := parseManifest(files[manifestFile])
	if err != nil {
		return nil, corrupt("%s: %v", manifestFile, err)
	}
	if err := m.check(int64(len(files[variablesFile]))); err != nil {
		return nil, corrupt("%s: %v", manifestFile, err)
	}
	return &checkpointFiles{dir: dir, manifest: m, variables: files[variablesFile]}, nil
}

// parseSums reads sha256sum's format: one "<hex digest>  <file>" line per
// file, exactly state.json and variables.bin.
func parseSums(raw []byte) (map[string]string, error) {
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		digest, name, ok := strings.Cut(line, "  ")
		if _, err := hex.DecodeString(digest); !ok || err != nil || len(digest) != 2*sha256.Size {
			return nil, fmt.Errorf("line %q is not \"<sha256>  <file>\"", line)
		}
		if name != manifestFile && name != variablesFile || sums[name] != "" {
			return nil, fmt.Errorf("lists %q unexpectedly", name)
		}
		sums[name] = digest
	}
	if len(sums) != 2 {
		return nil, fmt.Errorf("must list %s and %s", manifestFile, variablesFile)
	}
	return sums, nil
}

// parseManifest decodes state.json strictly: a field it does not know is an
// error, not ignored.
func parseManifest(raw []byte) (*Manifest, error) {
	var head struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	if head.Format != manifestFormat {
		return nil, fmt.Errorf("format %d, this ecpi reads format %d", head.Format, manifestFormat)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the manifest")
	}
	return &m, nil
}

// check enforces the rules every manifest ecpi writes follows, and that the
// variables tile variables.bin (size bytes) exactly.
func (m *Manifest) check(size int64) error {
	if m.Family == "" || m.Family != m.Config.Model || m.Family != m.Options.Model.Model {
		return fmt.Errorf("family %q disagrees with its config (%q) or options (%q)", m.Family, m.Config.Model, m.Options.Model.Model)
	}
	if err := m.Config.Validate(); err != nil {
		return fmt.Errorf("config: %v", err)
	}
	if m.Config.SeqLen == 0 {
		return errors.New("config: n is not set")
	}
	if err := savedOptions(m).Validate(); err != nil {
		return fmt.Errorf("options: %v", err)
	}
	if kind, err := TaskOf(m.Options.Data); err != nil || kind != m.Task {
		return fmt.Errorf("task %q does not fit data %q", m.Task, m.Options.Data)
	}
	if m.Step < 0 || m.Step > m.Options.Steps || len(m.Losses) != m.Step || m.Batcher.Step < 0 {
		return fmt.Errorf("step %d with %d losses, %d batches drawn and steps=%d do not fit together", m.Step, len(m.Losses), m.Batcher.Step, m.Options.Steps)
	}
	if slices.ContainsFunc(m.Losses, isNotFinite) || m.Eval != nil && (isNotFinite(m.Eval.Loss) || m.Eval.Count < 0) {
		return errors.New("a recorded loss is not a finite number")
	}
	return checkLayout(m.Variables, size)
}

func isNotFinite(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// checkLayout: each variable once, its bytes what its shape needs, one after
// the other from the start of variables.bin to its end.
func checkLayout(vars []SavedVariable, size int64) error {
	seen := map[string]bool{}
	var offset int64
	for _, v := range vars {
		if v.Path == "" || seen[v.Path] {
			return fmt.Errorf("variable %q is listed twice or has no name", v.Path)
		}
		seen[v.Path] = true
		need, ok := shapeBytes(v.DType, v.Dims)
		if !ok || need != v.Length || v.Offset != offset {
			return fmt.Errorf("variable %s: %d bytes at offset %d do not fit its shape %s%v and its place", v.Path, v.Length, v.Offset, v.DType, v.Dims)
		}
		offset += v.Length
	}
	if offset != size {
		return fmt.Errorf("the variables take %d bytes, variables.bin has %d", offset, size)
	}
	return nil
}

// shapeBytes is the size of a dense tensor; ok is false for an invalid dtype,
// a negative dimension or a size beyond any file.
func shapeBytes(dtype dtypes.DType, dims []int) (int64, bool) {
	if !dtype.IsSupported() || dtype.Size() <= 0 {
		return 0, false
	}
	size := int64(dtype.Size())
	for _, d := range dims {
		if d < 0 || d > 0 && size > math.MaxInt64/int64(d) {
			return 0, false
		}
		size *= int64(d)
	}
	return size, true
}

// checkVariables compares the saved variables with those the model's
// training step uses (want: path -> shape): every one present with its shape
// and dtype, none missing, none left over.
func checkVariables(dir string, m *Manifest, want map[string]shapes.Shape) error {
	seen := map[string]bool{}
	for _, v := range m.Variables {
		shape, ok := want[v.Path]
		if !ok {
			return fmt.Errorf("checkpoint %s holds variable %s, which its %s model does not have", dir, v.Path, m.Family)
		}
		if got := shapes.Make(v.DType, v.Dims...); !got.Equal(shape) {
			return fmt.Errorf("checkpoint %s: variable %s is %s, its model needs %s", dir, v.Path, got, shape)
		}
		seen[v.Path] = true
	}
	for _, path := range slices.Sorted(maps.Keys(want)) {
		if !seen[path] {
			return fmt.Errorf("checkpoint %s lacks variable %s, which its model needs", dir, path)
		}
	}
	return nil
}

// readVariables returns the saved values by variable path.
func readVariables(c *checkpointFiles) (map[string]*tensors.Tensor, error) {
	out := make(map[string]*tensors.Tensor, len(c.manifest.Variables))
	for _, v := range c.manifest.Variables {
		t := tensors.FromShape(shapes.Make(v.DType, v.Dims...))
		if err := t.MutableBytes(func(raw []byte) { copy(raw, c.variables[v.Offset:v.Offset+v.Length]) }); err != nil {
			return nil, fmt.Errorf("checkpoint %s: variable %s: %w", c.dir, v.Path, err)
		}
		out[v.Path] = t
	}
	return out, nil
}

// loader serves saved values to the store as the graph creates its variables,
// so a resumed model gets its variables in the same order, with the same
// trainable flags, as the run that saved them.
type loader struct{ values map[string]*tensors.Tensor }

func (l *loader) LoadVariable(_ *model.Store, path string) (*tensors.Tensor, bool) {
	if path == rngPath {
		return nil, false
	}
	t, ok := l.values[path]
	return t, ok
}

func (l *loader) DeleteVariable(_ *model.Store, path string) error {
	delete(l.values, path)
	return nil
}

func sameVariable(a, b SavedVariable) bool {
	return a.Path == b.Path && a.DType == b.DType && slices.Equal(a.Dims, b.Dims) && a.Offset == b.Offset && a.Length == b.Length
}
