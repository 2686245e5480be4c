package kernel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec is the part of a Jupyter kernelspec (kernel.json) that ecpi sets.
type Spec struct {
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode,omitempty"`
	Env           map[string]string `json:"env"`
}

// SpecSettings say how the "ecpi (Go)" kernel differs from plain GoNB.
type SpecSettings struct {
	DisplayName string            // "ecpi (Go)"
	GoNB        string            // absolute path of the gonb binary the kernel runs
	Repo        string            // ecpi's module folder: every notebook's go.work uses it, so imports need no network
	Env         map[string]string // toolchain settings and backend, merged over GoNB's
	PathPrefix  []string          // folders put before $PATH (gonb, goimports, gopls, go)
}

// RewriteSpec rewrites the kernel.json in dir (as written by `gonb --install`):
// display name, environment, and GoNB's -go_work flag pointing at the repository.
func RewriteSpec(dir string, s SpecSettings) error {
	path := filepath.Join(dir, "kernel.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading GoNB's kernelspec: %w", err)
	}
	var spec Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("kernelspec %s: %w", path, err)
	}
	if len(spec.Argv) == 0 || !strings.Contains(filepath.Base(spec.Argv[0]), "gonb") {
		return fmt.Errorf("kernelspec %s does not start GoNB (argv %q)", path, spec.Argv)
	}
	if err := applySettings(&spec, s); err != nil {
		return err
	}
	out, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

func applySettings(spec *Spec, s SpecSettings) error {
	if s.Repo == "" || !filepath.IsAbs(s.Repo) {
		return fmt.Errorf("repo %q must be an absolute path (the go.work of every notebook uses it)", s.Repo)
	}
	if _, err := os.Stat(filepath.Join(s.Repo, "go.mod")); err != nil {
		return fmt.Errorf("repo %s has no go.mod: %w", s.Repo, err)
	}
	spec.DisplayName = s.DisplayName
	if s.GoNB != "" {
		// `gonb --install` may name a copy of itself inside the staging folder,
		// which is gone once the spec is installed: run the built binary instead.
		if !filepath.IsAbs(s.GoNB) {
			return fmt.Errorf("gonb binary %q must be an absolute path", s.GoNB)
		}
		spec.Argv[0] = s.GoNB
	}
	argv := spec.Argv[:0:0]
	for _, a := range spec.Argv {
		if !strings.HasPrefix(a, "-go_work=") && !strings.HasPrefix(a, "--go_work=") {
			argv = append(argv, a)
		}
	}
	spec.Argv = append(argv, "-go_work="+s.Repo)
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	for k, v := range s.Env {
		spec.Env[k] = v
	}
	if len(s.PathPrefix) > 0 {
		// jupyter_client substitutes ${PATH} with the server's PATH when it starts the kernel.
		spec.Env["PATH"] = strings.Join(s.PathPrefix, string(os.PathListSeparator)) + string(os.PathListSeparator) + "${PATH}"
	}
	return nil
}
