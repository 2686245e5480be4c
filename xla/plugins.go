package xla

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// PJRTPathEnv is go-xla's variable for plugin folders (":"-separated); ecpi honours it too.
const PJRTPathEnv = "PJRT_PLUGIN_LIBRARY_PATH"

// Home returns ecpi's data folder: $ECPI_HOME, else ~/.ecpi.
func Home() string {
	if home := os.Getenv("ECPI_HOME"); home != "" {
		return home
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return ".ecpi"
	}
	return filepath.Join(userHome, ".ecpi")
}

// LocalPluginDir is the project-local folder where ecpi installs PJRT plugins: $ECPI_HOME/xla.
func LocalPluginDir() string {
	return filepath.Join(Home(), "xla")
}

// PluginDirs lists the folders searched for PJRT plugins, in order: ecpi's own folder, then
// $PJRT_PLUGIN_LIBRARY_PATH if set, else the folders go-xla and its installer use by default
// (its CUDA plugin lives in an nvidia/ subfolder).
func PluginDirs() []string {
	dirs := []string{LocalPluginDir()}
	if paths, found := os.LookupEnv(PJRTPathEnv); found {
		for _, dir := range strings.Split(paths, ":") {
			if dir != "" {
				dirs = append(dirs, dir)
			}
		}
		return dirs
	}
	if userHome, err := os.UserHomeDir(); err == nil {
		goxlaDir := filepath.Join(userHome, ".local", "lib", "go-xla")
		dirs = append(dirs, goxlaDir, filepath.Join(goxlaDir, "nvidia"))
	}
	return append(dirs, "/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia")
}

// Plugin is a PJRT plugin file found on disk.
type Plugin struct {
	Platform string // "cpu", "cuda", "rocm", "tpu", ... (the version suffix of installer-made names dropped)
	Path     string // absolute path of the .so
}

// pluginFileName matches go-xla's naming rules: pjrt_c_api_<name>_plugin.so or pjrt[-_]plugin[-_]<name>.so.
var pluginFileName = regexp.MustCompile(`^(?:pjrt_c_api_(.+)_plugin|pjrt[-_]plugin[-_](.+))\.so$`)

// installerVersion is the suffix GoMLX's installer puts in names: pjrt_c_api_cpu_v0.114.0_plugin.so.
var installerVersion = regexp.MustCompile(`_v\d+(\.\d+)*$`)

// platformOf returns the platform a plugin file name declares, or "" if it is not a plugin name.
func platformOf(fileName string) string {
	m := pluginFileName.FindStringSubmatch(fileName)
	if m == nil {
		return ""
	}
	name := m[1] + m[2]
	return installerVersion.ReplaceAllString(name, "")
}

// platformPreference orders plugins when several are installed: accelerators first, as go-xla does.
var platformPreference = []string{"cuda", "rocm", "tpu", "cpu"}

// FindPlugins lists the plugin files in dirs, at most one per platform (the first dir wins),
// accelerators first.
func FindPlugins(dirs []string) []Plugin {
	var found []Plugin
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a missing folder is the normal case, not an error
		}
		for _, entry := range entries {
			platform := platformOf(entry.Name())
			if platform == "" || seen[platform] || entry.IsDir() {
				continue
			}
			path, err := filepath.Abs(filepath.Join(dir, entry.Name()))
			if err != nil {
				continue
			}
			seen[platform] = true
			found = append(found, Plugin{Platform: platform, Path: path})
		}
	}
	slices.SortStableFunc(found, func(a, b Plugin) int { return preferenceRank(a.Platform) - preferenceRank(b.Platform) })
	return found
}

func preferenceRank(platform string) int {
	if i := slices.Index(platformPreference, platform); i >= 0 {
		return i
	}
	return len(platformPreference)
}

// findPlatform returns the first plugin of the given platform, if any.
func findPlatform(plugins []Plugin, platform string) (Plugin, bool) {
	i := slices.IndexFunc(plugins, func(p Plugin) bool { return p.Platform == platform })
	if i < 0 {
		return Plugin{}, false
	}
	return plugins[i], true
}
