// Command install turns the kernelspec that `gonb --install` wrote into ecpi's
// "ecpi (Go)" kernel; scripts/setup-kernel.sh runs it before
// `jupyter kernelspec install`.
//
//	go run ./kernel/install -spec DIR -repo REPO -gonb BIN/gonb -path BIN[:BIN...] -env K=V ...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ecpi-dev/ecpi/kernel"
)

type envFlags map[string]string

func (e envFlags) String() string { return fmt.Sprint(map[string]string(e)) }

func (e envFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("-env %q: want NAME=value", kv)
	}
	e[k] = v
	return nil
}

func main() {
	env := envFlags{}
	spec := flag.String("spec", "", "folder holding GoNB's kernel.json")
	repo := flag.String("repo", "", "ecpi's module folder")
	path := flag.String("path", "", "folders to put before $PATH, separated by ':'")
	name := flag.String("display", "ecpi (Go)", "display name")
	gonb := flag.String("gonb", "", "absolute path of the gonb binary the kernel runs")
	flag.Var(env, "env", "NAME=value for the kernel's environment (repeatable)")
	flag.Parse()
	abs, err := filepath.Abs(*repo)
	if err == nil {
		err = kernel.RewriteSpec(*spec, kernel.SpecSettings{
			DisplayName: *name, GoNB: *gonb, Repo: abs, Env: env, PathPrefix: filepath.SplitList(*path),
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernel install:", err)
		os.Exit(1)
	}
}
