package repl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/train"
	"github.com/ecpi-dev/ecpi/xla"
)

// backendField is the `backend=` option of every command that computes.
func backendField[S any](field func(*S) *string) option.Field[S] {
	return option.Text("backend", "compute backend: go, xla, xla:cpu, xla:cuda, xla:/path/plugin.so (default: $GOMLX_BACKEND, else the best available)", field).
		Checking(checkBackendName).Suggesting(backendNames)
}

// backendOption is backend= on its own, for commands that forward it by name
// (train's options).
var backendOption = option.Table[backendArg]{backendField(func(a *backendArg) *string { return &a.Backend })}.Infos(backendArg{})[0]

type backendArg struct{ Backend string }

// backendNames completes backend=: what is installed here, plus the names that are always valid.
func backendNames() []string {
	names := []string{"go", "xla", "xla:cpu", "xla:cuda", "xla:rocm", "xla:tpu"}
	for _, c := range xla.Available() {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
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
