package repl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/train"
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
	Check: checkBackendName,
}

// checkBackendName accepts what could name a backend: go, xla, xla:cpu,
// xla:/abs/plugin.so, ... ("" is automatic). Whether it opens is known only
// when a command opens it.
func checkBackendName(name string) error {
	kind, _, _ := strings.Cut(name, ":")
	if name != "" && !slices.Contains([]string{"go", "xla", "stablehlo", "hlo", "shlo"}, kind) {
		return fmt.Errorf("unknown backend %q: use go, xla, xla:cpu, xla:cuda, xla:rocm, xla:tpu or xla:/abs/plugin.so", name)
	}
	return nil
}

// OpenBackend returns the backend the call's `backend=` option names (typed,
// set in the session, or automatic). train.Backend caches it, so a REPL session
// or a notebook opens each backend once, not once per command.
func (c *Call) OpenBackend() (*xla.Choice, error) {
	return train.Backend(c.String("backend"))
}
