package xla

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/go-xla/installer"
)

//go:embed cpu-plugin.pin
var cpuPluginPin string

// Wheel pins the PyPI wheel that carries the XLA CPU plugin (cpu-plugin.pin, shared with
// scripts/setup-xla.sh).
type Wheel struct {
	Name, Version, File, SHA256, PluginInWheel, APIVersion string
}

// CPUWheel is the pinned wheel; xla/PLUGINS.md records why this one.
var CPUWheel = parsePin(cpuPluginPin)

func parsePin(text string) Wheel {
	values := map[string]string{}
	scanner := bufio.NewScanner(strings.NewReader(text))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if key, value, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			values[key] = value
		}
	}
	return Wheel{Name: values["WHEEL_NAME"], Version: values["WHEEL_VERSION"], File: values["WHEEL_FILE"],
		SHA256: values["WHEEL_SHA256"], PluginInWheel: values["PLUGIN_IN_WHEEL"], APIVersion: values["PJRT_API_VERSION"]}
}

// CPUPluginFile is the name the CPU plugin gets in the local folder, so go-xla knows it as "cpu".
const CPUPluginFile = "pjrt_c_api_cpu_plugin.so"

// goxlaInstallTimeout bounds GoMLX's installer, whose downloads have no timeout of their own.
const goxlaInstallTimeout = 3 * time.Minute

// DefaultInstallers are tried in order when no plugin is installed: GoMLX's own installer (it
// downloads from GitHub, so only where the network allows), then the pinned PyPI wheel.
func DefaultInstallers() []Installer {
	return []Installer{
		{Name: "GoMLX's installer", Run: func(log io.Writer) (string, error) { return installWithGoXLA("cpu") }},
		{Name: "PyPI wheel " + CPUWheel.Name + "==" + CPUWheel.Version, Run: func(log io.Writer) (string, error) {
			return InstallCPUPlugin(LocalPluginDir(), log)
		}},
	}
}

// InstallPlugin installs the plugin of a platform: "cpu" from the pinned PyPI wheel into
// LocalPluginDir; "cuda", "rocm" and "tpu" with GoMLX's installer (jax-cuda13-pjrt and NVIDIA
// libraries, the ROCm wheel, libtpu, all from PyPI) into ~/.local/lib/go-xla. It returns the path.
func InstallPlugin(platform string, log io.Writer) (string, error) {
	switch platform {
	case "cpu":
		return InstallCPUPlugin(LocalPluginDir(), log)
	case "cuda", "rocm", "tpu":
		fmt.Fprintf(log, "installing the %s PJRT plugin with GoMLX's installer\n", platform)
		return installWithGoXLA(platform)
	default:
		return "", fmt.Errorf("install=%q: no installer for that platform (choose cpu, cuda, rocm or tpu)", platform)
	}
}

// installWithGoXLA runs GoMLX's installer for one platform and returns the plugin it left.
func installWithGoXLA(platform string) (string, error) {
	libDir, err := installer.DefaultHomeLibPath()
	if err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- installer.AutoInstallPlugin(platform, libDir, true, installer.Quiet) }()
	select {
	case err = <-done:
	case <-time.After(goxlaInstallTimeout):
		err = fmt.Errorf("no answer after %s", goxlaInstallTimeout)
	}
	if err != nil {
		return "", err
	}
	goxlaDir := filepath.Join(libDir, "go-xla")
	if p, ok := findPlatform(FindPlugins([]string{goxlaDir, filepath.Join(goxlaDir, "nvidia")}), platform); ok {
		return p.Path, nil
	}
	return "", fmt.Errorf("GoMLX's installer left no %s plugin in %s (it installs accelerator plugins only where it detects the hardware)", platform, goxlaDir)
}

// InstallCPUPlugin puts the XLA CPU plugin into dir as pjrt_c_api_cpu_plugin.so: pip downloads
// the pinned wheel, its sha256 is checked, and the .so is unpacked from it (a wheel is a zip),
// so Python is needed to install but not to run. Already installed means nothing to do.
func InstallCPUPlugin(dir string, log io.Writer) (path string, err error) {
	target := filepath.Join(dir, CPUPluginFile)
	if _, err := os.Stat(target); err == nil {
		return target, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	download, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(download)

	fmt.Fprintf(log, "downloading %s==%s from PyPI\n", CPUWheel.Name, CPUWheel.Version)
	if err := pipDownload(CPUWheel, download, log); err != nil {
		return "", err
	}
	wheelPath := filepath.Join(download, CPUWheel.File)
	if err := checkSHA256(wheelPath, CPUWheel.SHA256); err != nil {
		return "", err
	}
	if err := unzipOne(wheelPath, CPUWheel.PluginInWheel, target); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "installed the XLA CPU plugin (PJRT C API %s) at %s\n", CPUWheel.APIVersion, target)
	return target, nil
}

func pipDownload(w Wheel, dir string, log io.Writer) error {
	python, err := findPython()
	if err != nil {
		return err
	}
	cmd := exec.Command(python, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
		"--only-binary=:all:", "-d", dir, w.Name+"=="+w.Version)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pip download %s==%s (is PyPI reachable?): %w", w.Name, w.Version, err)
	}
	return nil
}

func findPython() (string, error) {
	for _, name := range []string{"python3", "python"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("no python3 on PATH to run pip with")
}

func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha256 %s, want %s (pinned in xla/cpu-plugin.pin)", filepath.Base(path), got, want)
	}
	return nil
}

// unzipOne extracts one member of a zip to target, through a temporary file so that a reader
// never sees half a plugin.
func unzipOne(zipPath, member, target string) error {
	archive, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer archive.Close()
	src, err := archive.Open(member)
	if err != nil {
		return fmt.Errorf("%s has no %s: %w", filepath.Base(zipPath), member, err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(target), ".plugin-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}
