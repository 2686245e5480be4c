package repl

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/ecpi-dev/ecpi/option"
	"github.com/ecpi-dev/ecpi/xla"
)

func init() {
	Register(&Command{
		Name:    "doctor",
		Summary: "show which compute backend ecpi uses and why (XLA plugin, devices, SIMD)",
		Details: "Chooses the backend as training does: the one named by backend= or GOMLX_BACKEND, else an installed\n" +
			"XLA PJRT plugin, else one it can install, else the pure-Go backend. install=cpu|cuda|rocm|tpu installs\n" +
			"that platform's plugin first (cpu: the pinned PyPI wheel into $ECPI_HOME/xla).",
		Options: doctorOptions.Declare(),
		Run:     runDoctor,
	})
}

// doctorArgs are the options of `doctor`.
type doctorArgs struct{ Backend, Install string }

var doctorOptions = Options[doctorArgs]{Table: option.Table[doctorArgs]{
	backendField(func(a *doctorArgs) *string { return &a.Backend }),
	option.Choice("install", "install a PJRT plugin first: cpu, cuda, rocm or tpu", []string{"cpu", "cuda", "rocm", "tpu"}, func(a *doctorArgs) *string { return &a.Install }),
}}

// DoctorReport is what `ecpi doctor --json` prints.
type DoctorReport struct {
	Backend    string   `json:"backend"` // "xla:cpu", "go", ...
	Config     string   `json:"config"`  // GoMLX config string it was opened with
	Plugin     string   `json:"plugin"`  // PJRT plugin path, "" for the Go backend
	Devices    int      `json:"devices"`
	SIMD       bool     `json:"simd"` // binary built with GOEXPERIMENT=simd (Go backend's fast kernels)
	Reason     string   `json:"reason"`
	Available  []string `json:"available"` // every backend `bench` could compare here
	PluginDirs []string `json:"plugin_dirs"`
	GoVersion  string   `json:"go_version"`
	Malloc     string   `json:"malloc"` // how glibc's malloc serves XLA's buffers (xla.MallocTuning)
}

// Text is the human-readable form.
func (r DoctorReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "backend:     %s (%d device(s))\n", r.Backend, r.Devices)
	if r.Plugin != "" {
		fmt.Fprintf(&b, "plugin:      %s\n", r.Plugin)
	}
	fmt.Fprintf(&b, "why:         %s\n", r.Reason)
	fmt.Fprintf(&b, "simd:        %v (Go backend %s)\n", r.SIMD, map[bool]string{true: "uses AVX-512/AVX2 kernels", false: "built without GOEXPERIMENT=simd: slow"}[r.SIMD])
	fmt.Fprintf(&b, "available:   %s\n", strings.Join(r.Available, ", "))
	fmt.Fprintf(&b, "plugin dirs: %s\n", strings.Join(r.PluginDirs, ", "))
	fmt.Fprintf(&b, "go:          %s\n", r.GoVersion)
	fmt.Fprintf(&b, "malloc:      %s\n", r.Malloc)
	return b.String()
}

func runDoctor(c *Call) error {
	args, err := doctorOptions.Read(c)
	if err != nil {
		return err
	}
	if platform := args.Install; platform != "" {
		// Progress goes to stderr: with --json, stdout holds only the report.
		if _, err := xla.InstallPlugin(platform, os.Stderr); err != nil {
			return fmt.Errorf("install=%s: %w", platform, err)
		}
	}
	choice, err := xla.Choose(args.Backend)
	if err != nil {
		return err
	}
	defer choice.Backend.Finalize()
	report := DoctorReport{
		Backend: choice.Name, Config: choice.Config, Plugin: choice.Plugin, Devices: choice.Devices,
		SIMD: choice.SIMD, Reason: choice.Reason, PluginDirs: xla.PluginDirs(), GoVersion: runtime.Version(),
		Malloc: xla.MallocTuning(),
	}
	for _, candidate := range xla.Available() {
		report.Available = append(report.Available, candidate.Name)
	}
	return c.Emit(report)
}
