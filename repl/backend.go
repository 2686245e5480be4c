package repl

import (
	"sync"

	"github.com/ecpi-dev/ecpi/xla"
)

// BackendOption is the `backend=` option every command that computes declares.
var BackendOption = Option{
	Name: "backend", Default: "",
	Help: "compute backend: go, xla, xla:cpu, xla:cuda, xla:/path/plugin.so (default: $GOMLX_BACKEND, else the best available)",
	Values: func(*Session) []string {
		var names []string
		for _, c := range xla.Available() {
			names = append(names, c.Name)
		}
		return append(names, "xla:cuda", "xla:tpu")
	},
}

// backends caches opened backends by requested name: a REPL session or a
// notebook opens each backend once, not once per command.
var backends sync.Map // requested name -> *xla.Choice

// OpenBackend returns the backend the call's `backend=` option names (typed,
// set in the session, or automatic), opening it on first use.
func (c *Call) OpenBackend() (*xla.Choice, error) {
	requested := c.String("backend")
	if choice, ok := backends.Load(requested); ok {
		return choice.(*xla.Choice), nil
	}
	choice, err := xla.Choose(requested)
	if err != nil {
		return nil, err
	}
	actual, _ := backends.LoadOrStore(requested, choice)
	return actual.(*xla.Choice), nil
}
