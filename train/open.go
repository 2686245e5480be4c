package train

import (
	"fmt"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
)

// Loaded is a trained model opened from a checkpoint, for evaluation,
// sampling and probes (notebooks use it directly).
type Loaded struct {
	*session
	Manifest *Manifest
	Dir      string // the checkpoint folder

	// Graphs compiled for this checkpoint, kept for the next call (a Pool
	// keeps the Loaded): its weights never change.
	evaluator *evaluator
	decoder   *Decoder
	probe     *attentionProbe
}

// Open loads the checkpoint at path (a checkpoint or run folder) on the
// backend named ("" = automatic).
func Open(path, backend string) (*Loaded, error) {
	c, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	m, dir := c.manifest, c.dir
	o := savedOptions(m)
	o.Backend, o.Devices = backend, 1 // evaluation, sampling and probes run on one device
	s, err := newSession(o, m)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := CheckMemory(s.model.Config, o.Batch, false); err != nil {
		return nil, err
	}
	if err := s.load(c); err != nil {
		return nil, err
	}
	return &Loaded{session: s, Manifest: m, Dir: dir}, nil
}

// CheckFamily refuses a checkpoint of another model family than the one named
// ("" accepts any).
func (l *Loaded) CheckFamily(family string) error {
	if family != "" && family != l.Manifest.Family {
		return fmt.Errorf("checkpoint %s is a %s model, not %s", l.Dir, l.Manifest.Family, family)
	}
	return nil
}

// Model is the network; Store holds its variables; Backend runs it.
func (l *Loaded) Model() *models.Model { return l.model }

// Tokenizer is the LM's tokenizer (nil for classifiers).
func (l *Loaded) Tokenizer() data.Tokenizer {
	if text, ok := l.task.(textTask); ok {
		tok, _ := text.text()
		return tok
	}
	return nil
}
