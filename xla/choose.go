package xla

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // registers the "go" backend
	goxla "github.com/gomlx/go-xla/compute/xla"
)

// GoConfig is the pure-Go backend's configuration when the user names none. With SIMD kernels,
// unlimited parallelism was fastest on 2 cores (~290 GFLOP/s on a 1024³ matmul); without them,
// running ops one at a time wins.
var GoConfig = func() string {
	if SIMD {
		return "go:parallelism=-1"
	}
	return "go:ops_sequential"
}()

// NoInstallEnv, when set, stops automatic choice from installing a plugin.
const NoInstallEnv = "ECPI_NO_XLA_INSTALL"

func init() {
	// ecpi decides when to install a plugin; GoMLX must never download one behind its back, even
	// when GOMLX_NO_AUTO_INSTALL is missing from the environment.
	goxla.EnableAutoInstall(false)
}

// Choice is a ready backend and the story of how it was picked.
type Choice struct {
	Backend compute.Backend
	Name    string // "xla:cpu", "xla:cuda", "go", ...
	Config  string // the GoMLX config string it was opened with, e.g. "xla:/abs/pjrt_c_api_cpu_plugin.so"
	Plugin  string // absolute path of the PJRT plugin, "" for the Go backend
	Devices int
	SIMD    bool   // Go backend built with GOEXPERIMENT=simd (a property of the binary)
	Reason  string // one sentence: why this backend
}

// Installer puts a plugin on disk and returns its path; Name says which way ("PyPI wheel ...").
type Installer struct {
	Name string
	Run  func(log io.Writer) (path string, err error)
}

// Finder holds where to look for plugins and how to install one; Choose and friends use
// DefaultFinder, tests build their own.
type Finder struct {
	Dirs       []string
	Installers []Installer // tried in order by automatic choice when no plugin is found
	Log        io.Writer   // progress of installs
}

// DefaultFinder searches PluginDirs and, unless $ECPI_NO_XLA_INSTALL is set, installs the CPU
// plugin with GoMLX's installer or from the pinned PyPI wheel.
func DefaultFinder() *Finder {
	f := &Finder{Dirs: PluginDirs(), Log: os.Stderr}
	if os.Getenv(NoInstallEnv) == "" {
		f.Installers = DefaultInstallers()
	}
	return f
}

// Choose returns the backend to use; see the package documentation for the order.
func Choose(requested string) (*Choice, error) { return DefaultFinder().Choose(requested) }

// Available lists every backend that could be opened here, best first, the Go backend last.
func Available() []Candidate { return DefaultFinder().Available() }

// Candidate is a backend that Choose can open.
type Candidate struct {
	Name   string // pass to Choose
	Plugin string // "" for the Go backend
}

// Available lists the installed plugins and the Go backend, without loading anything.
func (f *Finder) Available() []Candidate {
	var list []Candidate
	for _, p := range FindPlugins(f.Dirs) {
		list = append(list, Candidate{Name: "xla:" + p.Platform, Plugin: p.Path})
	}
	return append(list, Candidate{Name: "go"})
}

// Choose picks the backend: the one requested (or named by $GOMLX_BACKEND when requested is ""),
// else an installed XLA plugin, else one it installs, else the Go backend.
func (f *Finder) Choose(requested string) (*Choice, error) {
	why := fmt.Sprintf("backend=%s was requested", requested)
	if requested == "" {
		requested = os.Getenv(compute.ConfigEnvVar)
		why = fmt.Sprintf("%s=%s was set", compute.ConfigEnvVar, requested)
	}
	if requested == "" {
		return f.auto()
	}
	c, err := f.openNamed(requested)
	if err != nil {
		return nil, fmt.Errorf("%s, but it cannot be used: %w", why, err)
	}
	c.Reason = why
	return c, nil
}

// openNamed opens exactly the backend named, never a substitute.
func (f *Finder) openNamed(name string) (*Choice, error) {
	kind, config, _ := strings.Cut(name, ":")
	switch kind {
	case "go":
		if config == "" {
			return openGo(GoConfig)
		}
		return openGo(name)
	case "xla", "stablehlo", "hlo", "shlo":
		return f.openXLA(config)
	default:
		return nil, fmt.Errorf("unknown backend %q: use go, xla, xla:cpu, xla:cuda, xla:rocm, xla:tpu or xla:/abs/path/plugin.so (compiled in: %s)",
			kind, strings.Join(slices.Sorted(slices.Values(compute.List())), ", "))
	}
}

// openXLA opens the plugin named by config: "" (any installed), a platform ("cpu", "cuda", ...)
// or an absolute path; options after a comma go to go-xla ("cuda,preallocate=false").
func (f *Finder) openXLA(config string) (*Choice, error) {
	target, options, _ := strings.Cut(config, ",")
	if options != "" {
		options = "," + options
	}
	if filepath.IsAbs(target) {
		return openPlugin(Plugin{Platform: platformOf(filepath.Base(target)), Path: target}, options)
	}
	plugins := FindPlugins(f.Dirs)
	if target == "" {
		if len(plugins) == 0 {
			return nil, fmt.Errorf("no PJRT plugin in %s (run `make xla-plugin` to install the CPU one)", strings.Join(f.Dirs, ", "))
		}
		return openPlugin(plugins[0], options)
	}
	if p, ok := findPlatform(plugins, target); ok {
		return openPlugin(p, options)
	}
	// Not in our folders: go-xla still searches its own (LD_LIBRARY_PATH, ld.so.conf).
	backend, err := goxla.New(target + options)
	if err != nil {
		return nil, fmt.Errorf("no %s PJRT plugin in %s and go-xla found none either (%s): %w",
			target, strings.Join(f.Dirs, ", "), installHint(target), err)
	}
	return &Choice{Backend: backend, Name: "xla:" + target, Config: "xla:" + target + options, Devices: backend.NumDevices(), SIMD: SIMD}, nil
}

// installHint says how to get each platform's plugin.
func installHint(platform string) string {
	switch platform {
	case "cpu", "cuda", "rocm", "tpu":
		return fmt.Sprintf("install it with `ecpi doctor install=%s`", platform)
	default:
		return "name it by absolute path: xla:/path/to/plugin.so"
	}
}

func openPlugin(p Plugin, options string) (*Choice, error) {
	if _, err := os.Stat(p.Path); err != nil {
		return nil, fmt.Errorf("PJRT plugin %s: %w", p.Path, err)
	}
	backend, err := goxla.New(p.Path + options)
	if err != nil {
		return nil, fmt.Errorf("loading PJRT plugin %s: %w", p.Path, err)
	}
	name := "xla:" + p.Platform
	if p.Platform == "" {
		name = "xla:" + p.Path
	}
	return &Choice{Backend: backend, Name: name, Config: "xla:" + p.Path + options, Plugin: p.Path,
		Devices: backend.NumDevices(), SIMD: SIMD}, nil
}

func openGo(config string) (*Choice, error) {
	var backend compute.Backend
	printed, err := captureStdout(func() (err error) {
		backend, err = compute.NewWithConfig(config)
		return err
	})
	// The Go backend announces "parallelism set to N" with fmt.Printf: on stdout it would corrupt
	// the one JSON object `--json` commands print, on stderr it is a red box under every notebook
	// cell that trains. Choice.Config says the same; anything else it prints goes to stderr.
	for _, line := range strings.SplitAfter(printed, "\n") {
		if !strings.HasPrefix(line, "Go backend: parallelism set to") {
			os.Stderr.WriteString(line)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("Go backend config %q: %w", config, err)
	}
	return &Choice{Backend: backend, Name: "go", Config: config, Devices: backend.NumDevices(), SIMD: SIMD}, nil
}

// captureStdout runs f with os.Stdout writing into a pipe and returns what was written.
func captureStdout(f func() error) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("capturing stdout: %w", err)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		read <- b
	}()
	stdout := os.Stdout
	os.Stdout = w
	err = f()
	os.Stdout = stdout
	w.Close()
	return string(<-read), err
}

// auto tries installed plugins, then installers, then settles on the Go backend; every failure
// along the way ends up in the reason.
func (f *Finder) auto() (*Choice, error) {
	var failures []string
	for _, p := range FindPlugins(f.Dirs) {
		c, err := openPlugin(p, "")
		if err == nil {
			c.Reason = fmt.Sprintf("XLA %s plugin found at %s", p.Platform, p.Path)
			return c, nil
		}
		failures = append(failures, err.Error())
	}
	for _, inst := range f.Installers {
		path, err := inst.Run(f.Log)
		if err != nil {
			failures = append(failures, fmt.Sprintf("installing with %s: %v", inst.Name, err))
			continue
		}
		c, err := openPlugin(Plugin{Platform: platformOf(filepath.Base(path)), Path: path}, "")
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		c.Reason = fmt.Sprintf("no XLA plugin was installed; installed one with %s at %s", inst.Name, path)
		return c, nil
	}
	c, err := openGo(GoConfig)
	if err != nil {
		return nil, err
	}
	c.Reason = fmt.Sprintf("no usable XLA plugin in %s; using the pure-Go backend (%s)", strings.Join(f.Dirs, ", "), GoConfig)
	if len(failures) > 0 {
		c.Reason += " after: " + strings.Join(failures, "; ")
	}
	return c, nil
}
