package data

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// debPackage makes the files of Debian package pkg available under $ECPI_HOME/debs/pkg without
// installing it or its dependencies (several would pull in R or Java): `apt-get download` then
// `dpkg-deb -x`. It returns the extraction root and the package version. A second call reuses
// the extracted tree.
func debPackage(ctx context.Context, home, pkg string, progress io.Writer) (root, version string, err error) {
	debs := filepath.Join(home, "debs")
	root = filepath.Join(debs, pkg)
	versionFile := filepath.Join(root, ".version")
	if v, err := os.ReadFile(versionFile); err == nil {
		return root, strings.TrimSpace(string(v)), nil
	}
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return "", "", err
	}
	deb, err := downloadDeb(ctx, debs, pkg, progress)
	if err != nil {
		return "", "", err
	}
	out, err := exec.CommandContext(ctx, "dpkg-deb", "-f", deb, "Version").Output()
	if err != nil {
		return "", "", fmt.Errorf("dpkg-deb -f %s Version: %w", deb, err)
	}
	version = strings.TrimSpace(string(out))
	tmp, err := os.MkdirTemp(debs, pkg+".tmp")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "  extracting %s %s\n", pkg, version)
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".version"), []byte(version+"\n"), 0o644); err != nil {
		return "", "", err
	}
	os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return "", "", err
	}
	return root, version, nil
}

// downloadDeb returns the .deb of pkg in dir, fetching it with apt-get download when absent.
// When apt has no package lists yet (a fresh container) it runs apt-get update once and retries.
func downloadDeb(ctx context.Context, dir, pkg string, progress io.Writer) (string, error) {
	if deb := findDeb(dir, pkg); deb != "" {
		return deb, nil
	}
	fmt.Fprintf(progress, "  apt-get download %s\n", pkg)
	if _, err := runIn(ctx, dir, "apt-get", "download", pkg); err != nil {
		fmt.Fprintf(progress, "  apt-get download failed, running apt-get update first\n")
		if upd, uerr := runIn(ctx, dir, "apt-get", "update"); uerr != nil {
			return "", fmt.Errorf("apt-get update: %w: %s", uerr, lastLines(upd, 3))
		}
		if out, err := runIn(ctx, dir, "apt-get", "download", pkg); err != nil {
			return "", fmt.Errorf("apt-get download %s: %w: %s", pkg, err, lastLines(out, 3))
		}
	}
	if deb := findDeb(dir, pkg); deb != "" {
		return deb, nil
	}
	return "", fmt.Errorf("apt-get download %s succeeded but left no %s_*.deb in %s", pkg, pkg, dir)
}

func findDeb(dir, pkg string) string {
	m, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

func runIn(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}
