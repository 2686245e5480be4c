package train

import (
	"context"
	"path/filepath"
	"sync"
)

// Pool keeps, for a long-lived session (the REPL, a notebook's session
// server), the models it trained and the checkpoints it opened, with their
// compiled graphs: resuming a run this pool trained continues its live
// session (no rebuild, no recompilation), and sampling, probing or evaluating
// a checkpoint opened before reuses it and the graphs it compiled. A CLI
// invocation has no use for one.
type Pool struct {
	mu     sync.Mutex
	live   map[string]*session // by run folder: the session that saved its newest checkpoint
	loaded map[string]*Loaded  // by checkpoint folder and backend
}

// NewPool returns an empty pool.
func NewPool() *Pool {
	return &Pool{live: map[string]*session{}, loaded: map[string]*Loaded{}}
}

// Run is Run, keeping the session for a later Resume.
func (p *Pool) Run(ctx context.Context, o Options, progress func(Progress)) (*Result, error) {
	if o.Reuse {
		return Run(ctx, o, progress) // the run cache keeps its own runs
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s, err := newSession(o, nil)
	if err != nil {
		return nil, err
	}
	if err := CheckMemory(s.model.Config, o.Batch, true); err != nil {
		return nil, err
	}
	if err := s.claimNewRun(); err != nil {
		return nil, err
	}
	defer s.dir.release()
	r, err := s.loop(ctx, progress)
	if err == nil {
		p.keep(s, r.Checkpoint)
	}
	return r, err
}

// Resume is Resume; when the checkpoint is the newest one of a run this pool
// trained, on the same backend, the live session continues where it stopped.
func (p *Pool) Resume(ctx context.Context, path string, overrides map[string]string, progress func(Progress)) (*Result, error) {
	m, dir, err := LoadManifest(path)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	s := p.live[filepath.Dir(dir)]
	p.mu.Unlock()
	if s == nil || s.step != m.Step || s.checkpoint != dir || !sameBackend(s, overrides["backend"]) {
		r, err := Resume(ctx, path, overrides, progress)
		return r, err
	}
	o := s.opts
	for name, value := range overrides {
		if err := checkOverride(&o, m, name, value); err != nil {
			return nil, err
		}
	}
	if o.Steps <= s.step {
		return Resume(ctx, path, overrides, progress) // its error says why
	}
	s.opts = o
	// As Resume: the run folder is locked while training, and a run another
	// process has continued since continues here in a new folder.
	if err := s.claimResumedRun(); err != nil {
		return nil, err
	}
	defer s.dir.release()
	r, err := s.loop(ctx, progress)
	if err == nil {
		p.keep(s, r.Checkpoint)
	}
	return r, err
}

func sameBackend(s *session, requested string) bool {
	return requested == "" || requested == s.opts.Backend || requested == s.backend.Name
}

func (p *Pool) keep(s *session, checkpoint string) {
	s.checkpoint = checkpoint
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[filepath.Dir(checkpoint)] = s
}

// Open is Open, from the pool when the same checkpoint was opened before on
// the same backend (a checkpoint folder never changes once written).
func (p *Pool) Open(path, backend string) (*Loaded, error) {
	_, dir, err := LoadManifest(path)
	if err != nil {
		return nil, err
	}
	key := dir + "\x00" + backend
	p.mu.Lock()
	l := p.loaded[key]
	p.mu.Unlock()
	if l != nil {
		return l, nil
	}
	if l, err = Open(dir, backend); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loaded[key] = l
	return l, nil
}
