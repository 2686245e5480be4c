package train

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
// (this Manifest) and variables.bin (every variable of the store: weights,
// Adam moments and step counters, the dropout RNG state). It is written into
// a temporary folder and renamed into place, so a checkpoint folder is either
// complete or absent; state.json records variables.bin's SHA-256, so a
// damaged file is refused instead of loaded.
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
	SHA256    string          `json:"sha256"`
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
	// manifestFormat 2: the models follow the ECP authors' code (shared
	// key/value projections, LayerNorm ε 1e-5, PyTorch's initialisation), so
	// format-1 weights belong to other networks.
	manifestFormat = 2
	manifestFile   = "state.json"
	variablesFile  = "variables.bin"
	ckptPrefix     = "ckpt-"
)

// rngPath is the store's RNG state: restored by hand, since the store would
// mark a variable served by a loader trainable.
const rngPath = "/" + model.RNGStateVariableName

func checkpointName(step int) string { return fmt.Sprintf("%s%08d", ckptPrefix, step) }

// saveCheckpoint writes the store and m as checkpoint m.Step of runDir and
// deletes all but the newest keep checkpoints.
func saveCheckpoint(runDir string, m *Manifest, store *model.Store, keep int) (string, error) {
	final := filepath.Join(runDir, checkpointName(m.Step))
	tmp, err := os.MkdirTemp(runDir, "."+checkpointName(m.Step)+".tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := writeVariables(filepath.Join(tmp, variablesFile), m, store); err != nil {
		return "", fmt.Errorf("saving checkpoint %s: %w", final, err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeSynced(filepath.Join(tmp, manifestFile), manifest); err != nil {
		return "", err
	}
	if err := os.RemoveAll(final); err != nil { // a checkpoint of the same step from an earlier, abandoned attempt
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, pruneCheckpoints(runDir, keep)
}

func writeVariables(path string, m *Manifest, store *model.Store) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	hash := sha256.New()
	m.Variables = nil
	var offset int64
	for v := range store.IterVariables() {
		value, err := v.Value()
		if err != nil || value == nil {
			continue // declared but never initialised: nothing to save
		}
		var writeErr error
		var length int64
		if err := value.ConstBytes(func(raw []byte) {
			length = int64(len(raw))
			hash.Write(raw)
			_, writeErr = f.Write(raw)
		}); err != nil {
			return fmt.Errorf("variable %s: %w", v.Path(), err)
		}
		if writeErr != nil {
			return writeErr
		}
		shape := value.Shape()
		m.Variables = append(m.Variables, SavedVariable{Path: v.Path(), DType: shape.DType, Dims: slices.Clone(shape.Dimensions), Offset: offset, Length: length})
		offset += length
	}
	m.SHA256 = hex.EncodeToString(hash.Sum(nil))
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
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

func pruneCheckpoints(runDir string, keep int) error {
	all, err := Checkpoints(runDir)
	if err != nil {
		return err
	}
	for _, old := range all[:max(0, len(all)-keep)] {
		if err := os.RemoveAll(old); err != nil {
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
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("run folder %s has no checkpoint", path)
	}
	return all[len(all)-1], nil
}

// LoadManifest reads a checkpoint's state.json (path: a checkpoint or a run
// folder) and checks variables.bin against its digest.
func LoadManifest(path string) (*Manifest, string, error) {
	dir, err := FindCheckpoint(path)
	if err != nil {
		return nil, "", err
	}
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint %s is corrupt: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", fmt.Errorf("checkpoint %s is corrupt: state.json: %v", dir, err)
	}
	if m.Format == 1 {
		return nil, "", fmt.Errorf("checkpoint %s was saved by an older ecpi whose models differ from today's (format 1); train it again", dir)
	}
	if m.Format != manifestFormat || m.Family == "" {
		return nil, "", fmt.Errorf("checkpoint %s is corrupt or not an ecpi checkpoint (format %d, family %q)", dir, m.Format, m.Family)
	}
	bin, err := os.ReadFile(filepath.Join(dir, variablesFile))
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint %s is corrupt: %w", dir, err)
	}
	if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != m.SHA256 {
		return nil, "", fmt.Errorf("checkpoint %s is corrupt: variables.bin does not match its SHA-256 in state.json", dir)
	}
	return &m, dir, nil
}

// readVariables returns the saved values by variable path.
func readVariables(dir string, m *Manifest) (map[string]*tensors.Tensor, error) {
	bin, err := os.ReadFile(filepath.Join(dir, variablesFile))
	if err != nil {
		return nil, err
	}
	out := make(map[string]*tensors.Tensor, len(m.Variables))
	for _, v := range m.Variables {
		if v.Offset < 0 || v.Offset+v.Length > int64(len(bin)) {
			return nil, fmt.Errorf("checkpoint %s is corrupt: variable %s lies outside variables.bin", dir, v.Path)
		}
		t := tensors.FromShape(shapes.Make(v.DType, v.Dims...))
		var sizeErr error
		if err := t.MutableBytes(func(raw []byte) {
			if int64(len(raw)) != v.Length {
				sizeErr = fmt.Errorf("checkpoint %s is corrupt: variable %s has %d bytes, its shape needs %d", dir, v.Path, v.Length, len(raw))
				return
			}
			copy(raw, bin[v.Offset:v.Offset+v.Length])
		}); err != nil {
			return nil, err
		}
		if sizeErr != nil {
			return nil, sizeErr
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
