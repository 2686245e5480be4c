package xla

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePlugin writes a file that looks like a plugin by name but is not a shared library, so
// loading it fails cleanly (dlopen rejects it) instead of crashing.
func fakePlugin(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("not an ELF file"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlatformOf(t *testing.T) {
	for name, want := range map[string]string{
		"pjrt_c_api_cpu_plugin.so":          "cpu",
		"pjrt_c_api_cpu_v0.114.0_plugin.so": "cpu",
		"pjrt_c_api_cuda_plugin.so":         "cuda",
		"pjrt-plugin-tpu.so":                "tpu",
		"libpjrt_cpu.so":                    "",
		"pjrt_c_api_cpu_plugin.so.tmp":      "",
	} {
		if got := platformOf(name); got != want {
			t.Errorf("platformOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFindPluginsFirstDirWinsAcceleratorsFirst(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	cpuFirst := fakePlugin(t, first, "pjrt_c_api_cpu_plugin.so")
	fakePlugin(t, second, "pjrt_c_api_cpu_v0.114.0_plugin.so")
	cuda := fakePlugin(t, second, "pjrt_c_api_cuda_plugin.so")
	fakePlugin(t, second, "README.txt")

	got := FindPlugins([]string{first, filepath.Join(first, "missing"), second})
	want := []Plugin{{Platform: "cuda", Path: cuda}, {Platform: "cpu", Path: cpuFirst}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("FindPlugins = %+v, want %+v", got, want)
	}
}

func TestAutoWithoutPluginsUsesGoAndSaysWhere(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	dir := t.TempDir()
	c, err := (&Finder{Dirs: []string{dir}}).Choose("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Backend.Finalize()
	if c.Name != "go" || c.Plugin != "" || c.Devices != 1 || c.Config != GoConfig {
		t.Errorf("got %+v, want the Go backend with %s", c, GoConfig)
	}
	if !strings.Contains(c.Reason, "no usable XLA plugin in "+dir) || !strings.Contains(c.Reason, "pure-Go backend") {
		t.Errorf("reason %q should name the folder searched and the Go backend", c.Reason)
	}
	if c.SIMD != SIMD {
		t.Errorf("SIMD = %v, binary built with %v", c.SIMD, SIMD)
	}
}

func TestAutoSkipsBrokenPluginAndFailedInstallsAndSaysWhy(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	dir := t.TempDir()
	broken := fakePlugin(t, dir, "pjrt_c_api_cpu_plugin.so")
	installed := fakePlugin(t, t.TempDir(), "pjrt_c_api_cpu_plugin.so")
	var ran []string
	f := &Finder{Dirs: []string{dir}, Log: io.Discard, Installers: []Installer{
		{Name: "offline installer", Run: func(io.Writer) (string, error) {
			ran = append(ran, "offline")
			return "", errors.New("network unreachable")
		}},
		{Name: "broken wheel", Run: func(io.Writer) (string, error) {
			ran = append(ran, "broken")
			return installed, nil
		}},
	}}
	c, err := f.Choose("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Backend.Finalize()
	if c.Name != "go" {
		t.Fatalf("chose %q, want go", c.Name)
	}
	if strings.Join(ran, ",") != "offline,broken" {
		t.Errorf("installers ran %v, want both in order", ran)
	}
	for _, part := range []string{broken, "installing with offline installer: network unreachable", installed} {
		if !strings.Contains(c.Reason, part) {
			t.Errorf("reason %q does not mention %q", c.Reason, part)
		}
	}
}

func TestNamedBackendThatCannotLoadIsAnError(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	dir := t.TempDir()
	broken := fakePlugin(t, dir, "pjrt_c_api_cpu_plugin.so")
	f := &Finder{Dirs: []string{dir}}
	for _, name := range []string{"xla:" + broken, "xla:cpu", "xla", "xla:nosuchplatform", "onnx", "go:bogus_option"} {
		c, err := f.Choose(name)
		if err == nil {
			c.Backend.Finalize()
			t.Errorf("Choose(%q) chose %s, want an error", name, c.Name)
			continue
		}
		if !strings.Contains(err.Error(), "backend="+name+" was requested") {
			t.Errorf("Choose(%q) error %q does not name the request", name, err)
		}
	}
	empty := &Finder{Dirs: []string{t.TempDir()}}
	if _, err := empty.Choose("xla"); err == nil || !strings.Contains(err.Error(), "make xla-plugin") {
		t.Errorf("xla with no plugin: error %v should say how to install one", err)
	}
}

func TestEnvironmentNamesTheBackend(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "go:ops_sequential")
	c, err := (&Finder{Dirs: []string{t.TempDir()}}).Choose("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Backend.Finalize()
	if c.Name != "go" || c.Config != "go:ops_sequential" || c.Reason != "GOMLX_BACKEND=go:ops_sequential was set" {
		t.Errorf("got %+v", c)
	}
	// An explicit request beats the environment.
	c2, err := (&Finder{Dirs: []string{t.TempDir()}}).Choose("go")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Backend.Finalize()
	if c2.Config != GoConfig || c2.Reason != "backend=go was requested" {
		t.Errorf("got %+v", c2)
	}
}

func TestAvailableListsPluginsThenGo(t *testing.T) {
	dir := t.TempDir()
	cpu := fakePlugin(t, dir, "pjrt_c_api_cpu_plugin.so")
	got := (&Finder{Dirs: []string{dir}}).Available()
	if len(got) != 2 || got[0] != (Candidate{Name: "xla:cpu", Plugin: cpu}) || got[1] != (Candidate{Name: "go"}) {
		t.Errorf("Available = %+v", got)
	}
}

func TestPluginDirsLocalFirstAndEnvironment(t *testing.T) {
	t.Setenv("ECPI_HOME", "/tmp/ecpi-home")
	t.Setenv(PJRTPathEnv, "/a::/b")
	got := PluginDirs()
	if strings.Join(got, ",") != "/tmp/ecpi-home/xla,/a,/b" {
		t.Errorf("PluginDirs = %v", got)
	}
}

func TestPinIsComplete(t *testing.T) {
	w := CPUWheel
	if w.Name == "" || w.Version == "" || !strings.HasPrefix(w.File, strings.ReplaceAll(w.Name, "-", "_")+"-"+w.Version) ||
		len(w.SHA256) != 64 || !strings.HasSuffix(w.PluginInWheel, ".so") {
		t.Errorf("cpu-plugin.pin parsed to %+v", w)
	}
}

func TestUnzipOneAndChecksum(t *testing.T) {
	dir := t.TempDir()
	wheel := filepath.Join(dir, "w.whl")
	out, _ := os.Create(wheel)
	zw := zip.NewWriter(out)
	member, _ := zw.Create("pkg/libpjrt_cpu.so")
	member.Write([]byte("plugin bytes"))
	zw.Close()
	out.Close()

	data, _ := os.ReadFile(wheel)
	sum := sha256.Sum256(data)
	if err := checkSHA256(wheel, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	if err := checkSHA256(wheel, strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), "cpu-plugin.pin") {
		t.Errorf("a wrong checksum gave %v", err)
	}
	target := filepath.Join(dir, CPUPluginFile)
	if err := unzipOne(wheel, "pkg/libpjrt_cpu.so", target); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "plugin bytes" {
		t.Errorf("unpacked %q", got)
	}
	if err := unzipOne(wheel, "pkg/missing.so", target); err == nil || !strings.Contains(err.Error(), "missing.so") {
		t.Errorf("missing member gave %v", err)
	}
	// Installed already: nothing is downloaded.
	if path, err := InstallCPUPlugin(dir, io.Discard); err != nil || path != target {
		t.Errorf("InstallCPUPlugin on an installed dir = %q, %v", path, err)
	}
}

func TestGoBackendAnnouncesNothing(t *testing.T) {
	// GoMLX prints "Go backend: parallelism set to -1" on stdout when the config sets it; it must
	// reach neither stdout (--json output) nor stderr (a red box in every notebook cell).
	var stdout, stderr string
	var err error
	stderr = captureStderr(t, func() {
		stdout, err = captureStdout(func() error {
			_, err := openGo("go:parallelism=-1")
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" || stderr != "" {
		t.Errorf("opening the Go backend printed %q on stdout and %q on stderr", stdout, stderr)
	}
}

func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	f()
	os.Stderr = stderr
	w.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}
