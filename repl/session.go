package repl

import (
	"maps"
	"slices"
	"sync"

	"github.com/ecpi-dev/ecpi/train"
)

// Session carries what a REPL session (or a notebook) has set so far, so that
// `model ecp layers=4`, `data foldoc` and `train steps=200` follow on from one
// another without repeating options. A CLI invocation gets a fresh session.
//
// Settings are option values: any command that declares an option of the same
// name and is not given it explicitly uses the session's value before its own
// default.
type Session struct {
	mu       sync.Mutex
	settings map[string]string
	// Results keeps the last result of each command by name, for `status` and
	// for commands that build on a previous one (e.g. `compare` after `train`).
	results map[string]any
	// pool keeps the models the session trained and the checkpoints it
	// opened, with their compiled graphs, for the next command on them.
	pool *train.Pool
}

// NewSession returns an empty session.
func NewSession() *Session {
	return &Session{settings: map[string]string{}, results: map[string]any{}, pool: train.NewPool()}
}

// Get returns a setting.
func (s *Session) Get(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.settings[name]
	return v, ok
}

// Set records settings (an empty value removes the setting).
func (s *Session) Set(values map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range values {
		if v == "" {
			delete(s.settings, k)
		} else {
			s.settings[k] = v
		}
	}
}

// Settings returns a copy of every setting.
func (s *Session) Settings() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.settings)
}

// SettingNames returns the setting names in order.
func (s *Session) SettingNames() []string {
	return slices.Sorted(maps.Keys(s.Settings()))
}

// Remember stores the last result of a command.
func (s *Session) Remember(command string, result any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[command] = result
}
