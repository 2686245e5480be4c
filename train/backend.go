package train

import (
	"sync"

	"github.com/ecpi-dev/ecpi/xla"
)

// Backends are opened once per process and name: opening an XLA plugin
// takes a while, and a REPL session trains, evaluates and probes many times.
var (
	backendsMu sync.Mutex
	backends   = map[string]*xla.Choice{}
)

// Backend returns the backend for the `backend=` option ("" = automatic).
func Backend(requested string) (*xla.Choice, error) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if c, ok := backends[requested]; ok {
		return c, nil
	}
	c, err := xla.Choose(requested)
	if err != nil {
		return nil, err
	}
	backends[requested] = c
	return c, nil
}
