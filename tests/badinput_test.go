package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/repl"
)

// A bad input is one line on stderr and exit 2, whatever the command and
// whichever way it is given (arguments, a script, stdin), and it changes
// nothing on disk.

// badCase is one bad input: arguments, and optionally stdin.
type badCase struct {
	args  []string
	stdin string
}

func (c badCase) String() string {
	s := strings.Join(c.args, " ")
	if c.stdin != "" {
		s += fmt.Sprintf(" < %.40q", c.stdin)
	}
	return s
}

// badFixture is an ECPI_HOME with a corpus and a trained checkpoint, and a
// working folder with scripts, shared by every case.
type badFixture struct {
	home, work           string
	checkpoint, run      string
	tampered, script     string
	longScript, hugeLine string
}

func newBadFixture(t *testing.T) *badFixture {
	f := &badFixture{home: preparedHome(t), work: t.TempDir()}
	f.run = filepath.Join(f.home, "runs", "tiny")
	cmd := ecpiCommand(t, f.home, "train", "model=ecp", "n=32", "dim=16", "heads=2", "layers=2", "segment=8", "data=opticks",
		"steps=2", "batch=2", "eval_every=0", "eval_batches=1", "run="+f.run)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("training the fixture: %v\n%s", err, out)
	}
	f.checkpoint = filepath.Join(f.run, "ckpt-00000002")
	f.tampered = filepath.Join(f.home, "tampered", "ckpt-00000002")
	copyTree(t, f.checkpoint, f.tampered)
	state := filepath.Join(f.tampered, "state.json")
	raw, _ := os.ReadFile(state)
	writeTestFile(t, state, bytes.Replace(raw, []byte(`"layers": "2"`), []byte(`"layers": "3"`), 1))
	f.script = filepath.Join(f.work, "bad.ecpi")
	writeTestFile(t, f.script, []byte("# a good line, then a bad one\ncost n=64\ncost n=-1\nstatus\n"))
	f.longScript = filepath.Join(f.work, "long.ecpi")
	writeTestFile(t, f.longScript, []byte("cost "+strings.Repeat("x", 2<<20)+"\n"))
	f.hugeLine = filepath.Join(f.work, "huge.ecpi")
	writeTestFile(t, f.hugeLine, []byte(strings.Repeat("y", 17<<20)))
	if err := os.Mkdir(filepath.Join(f.work, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// preparedHome is a new ECPI_HOME with the opticks corpus (it ships with the
// Go toolchain: no network).
func preparedHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if err := data.Prepare(context.Background(), home, "opticks", io.Discard); err != nil {
		t.Fatal(err)
	}
	return home
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// handWritten are bad inputs of every command and of the CLI itself.
func (f *badFixture) handWritten() []badCase {
	ck := "checkpoint=" + f.checkpoint
	cases := [][]string{
		{"trian"}, {"--nope"}, {"bench"}, {"bench", "atention"}, {"probe"}, {"probe", "nope"}, {"data", "nope"},
		{"backend"}, {"backend", "nope"}, {"backend", "go", "xla"}, {"backend", "go", "n=3"},
		{"bench", "attention", "models="}, {"bench", "attention", "models=ecp,ecp"}, {"bench", "attention", "n=0"},
		{"bench", "attention", "runs=0"}, {"bench", "attention", "head_dim=1"}, {"bench", "attention", "models=full", "n=1048576"},
		{"bench", "attention", "--jsn"}, {"bench", "attention", "extra"},
		{"bench", "generate", "models=nope"}, {"bench", "generate", "n=1"}, {"bench", "generate", "tokens=0"}, {"bench", "generate", "size=huge"},
		{"bench", "generate", "n=1073741824"},
		{"bench", "train", "steps=-1"}, {"bench", "train", "model=nope"}, {"bench", "train", "size=huge"}, {"bench", "train", "backends=nope"},
		{"compare", "models=ecp,nope"}, {"compare", "models="}, {"compare", "steps=0"}, {"compare", "run=x"}, {"compare", "segment=7", "n=100"},
		{"cost", "n=-1"}, {"cost", "n=1073741825"}, {"cost", "n=100", "segment=7"}, {"cost", "model=nope"}, {"cost", "window=600", "n=512", "model=local"},
		{"cost", "modle=ecp"}, {"cost", "heads=3", "dim=128"}, {"cost", "dim=6", "heads=2"}, {"cost", "model=ecp", "window=8"}, {"cost", "x"},
		{"data", "list", "x"}, {"data", "list", "n=3"}, {"data", "prepare"}, {"data", "prepare", "nope"}, {"data", "prepare", "a", "b"},
		{"data"}, {"data", "a", "b"}, {"data", "baselines"}, {"data", "baselines", "nope"}, {"data", "baselines", "wiki", "books"},
		{"data", "show"}, {"data", "show", "nope"}, {"data", "show", "shapes", "count=0"}, {"data", "show", "shapes", "count=17"},
		{"experiments", "x"}, {"experiments", "results=" + filepath.Join(f.work, "nowhere")}, {"experiments", "out="},
		{"experiments", "status", "results=" + filepath.Join(f.work, "nowhere")}, {"experiments", "verify", "results=" + filepath.Join(f.work, "nowhere")},
		{"bench", "attention", "memory=maybe"},
		{"doctor", "install=nope"}, {"doctor", "backend=nope"}, {"doctor", "x"}, {"doctor", "install="},
		{"eval", "split=train", ck}, {"eval", "eval_batches=-1", ck}, {"eval", "protocol=nope", ck}, {"eval", "model=nope", ck},
		{"eval", "model=local", ck}, {"eval", "checkpoint=" + f.tampered}, {"eval", "checkpoint=" + filepath.Join(f.work, "nowhere")},
		{"eval", "checkpoint=" + f.work}, {"eval"}, {"eval", "backend=nope", ck}, {"eval", "x", ck},
		{"exit", "now"}, {"quit", "now"}, {"exit", "x=1"},
		{"help", "nope"}, {"help", "bench", "nope"}, {"help", "x=1"},
		{"mask", "n=9000"}, {"mask", "n=16384"}, {"mask", "head=5"}, {"mask", "width=3"}, {"mask", "head=-1"}, {"mask", "n=100", "segment=7"}, {"mask", "x"},
		{"model", "ecp", "pi"}, {"model", "nope"}, {"model", "ecp", "model=pi"}, {"model", "ecp", "window=8"}, {"model", "n=-4"},
		{"models", "ecp", "pi"}, {"models", "nope"}, {"models", "x=1"},
		{"probe", "attention", "checkpoint=" + f.tampered}, {"probe", "attention", "model=nope", ck}, {"probe", "attention"},
		{"probe", "gate", ck}, {"probe", "gate", "model=pi", ck}, {"probe", "gate", "backend=nope", ck},
		{"resume", "checkpoint=" + f.tampered, "steps=5"}, {"resume", "run=" + f.run, "steps=2"}, {"resume", "run=" + f.run, "steps=0"},
		{"resume", "run=" + f.run, "lr=1", "steps=5"}, {"resume", "run=" + f.run, "model=local", "steps=5"}, {"resume"},
		{"resume", "run=" + filepath.Join(f.work, "nowhere")}, {"resume", "run=" + f.run, "keep=0"},
		{"retrieval", "data=opticks"}, {"retrieval", "distances=0", "data=passkey"}, {"retrieval", "distances=", "data=passkey"},
		{"retrieval", "data=passkey", "distances=100000", "n=64"},
		{"rf", "threshold=-1"}, {"rf", "threshold=nan"}, {"rf", "threshold=1"}, {"rf", "weights=pretty"}, {"rf", "position=-7"},
		{"rf", "position=99999"}, {"rf", "weights=trained"}, {"rf", "n=1073741824", "model=full"}, {"rf", "seed=-1"},
		{"sample", "temperature=nan", ck}, {"sample", "temperature=-1", ck}, {"sample", "tokens=0", ck}, {"sample", "top_k=-1", ck},
		{"sample", "checkpoint=" + f.tampered}, {"sample"}, {"sample", "model=pi", ck}, {"sample", "seed=x", ck},
		{"set"}, {"set", "steps=abc"}, {"set", "nope=1"}, {"set", "n=-1"}, {"set", "temperature=inf"}, {"set", "segment=7", "n=100"},
		{"status", "x"}, {"status", "x=1"},
		{"train", "data=nowhere", "steps=1"}, {"train", "steps=0"}, {"train", "batch=0"}, {"train", "lr=0"}, {"train", "lr=nan"},
		{"train", "vocab=10"}, {"train", "schedule=nope"}, {"train", "tokenizer=nope"}, {"train", "data="}, {"train", "devices=0"},
		{"train", "data=opticks", "batch=1000000000"}, {"train", "data=opticks", "model=full", "n=65536"},
		{"train", "data=opticks", "run=" + f.run}, {"train", "data=opticks", "n=33", "segment=8"}, {"train", "data=mnist", "n=100"},
		{"train", "data=opticks", "devices=3", "batch=8"}, {"train", "data=opticks", "causal=false"}, {"train", "x"},
		{"unset"}, {"unset", "steps"}, {"unset", "x=1"},
		{"run"}, {"run", "a", "b"}, {"run", filepath.Join(f.work, "nowhere.ecpi")}, {"run", filepath.Join(f.work, "folder")},
		{"run", f.script}, {"run", f.longScript}, {"run", f.hugeLine}, {"run", f.script, "--keep-going"},
	}
	var out []badCase
	for _, args := range cases {
		out = append(out, badCase{args: args})
	}
	for _, stdin := range []string{"trian\n", "cost n=-1\n", "model ecp\nmodel ecp segment=100\n", "sample \"unterminated\n",
		strings.Repeat("z", 2<<20) + "\n", "set steps=abc\n"} {
		out = append(out, badCase{stdin: stdin})
		out = append(out, badCase{args: []string{"run", "-"}, stdin: stdin})
	}
	return out
}

// badValues are tried on every option that checks its values: the first one
// its rule refuses makes a case.
var badValues = []string{"abc", "nan", "-1", "0", "-99999999999999999999", ""}

// generated gives every option of every command that checks its values one
// refused value, typed on the command line and given to `set` (the rules
// are the same everywhere).
func generated() []badCase {
	var out []badCase
	seen := map[string]bool{}
	for _, cmd := range repl.Commands() {
		if cmd.AnyOption {
			continue
		}
		for _, opt := range cmd.Options {
			i := slices.IndexFunc(badValues, func(v string) bool { return opt.Check(v) != nil })
			if i < 0 {
				continue
			}
			typed := opt.Name + "=" + badValues[i]
			out = append(out, badCase{args: append(strings.Fields(cmd.Name), typed)})
			if !seen[opt.Name] {
				seen[opt.Name] = true
				out = append(out, badCase{args: []string{"set", typed}})
			}
		}
	}
	return out
}

func TestBadInputsAreOneLineAndChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary a few hundred times")
	}
	f := newBadFixture(t)
	cases := append(f.handWritten(), generated()...)
	if len(cases) < 200 {
		t.Fatalf("%d cases, want at least 200", len(cases))
	}
	covered := map[string]bool{}
	for _, c := range cases {
		if len(c.args) >= 2 {
			if _, ok := repl.Lookup(c.args[0] + " " + c.args[1]); ok {
				covered[c.args[0]+" "+c.args[1]] = true
				continue
			}
		}
		if len(c.args) > 0 {
			covered[c.args[0]] = true
		}
	}
	for _, cmd := range repl.Commands() {
		if !covered[cmd.Name] {
			t.Errorf("command %q has no bad-input case", cmd.Name)
		}
	}
	before := snapshot(t, f.home, f.work)
	for _, c := range cases {
		cmd := ecpiCommand(t, f.home, c.args...)
		cmd.Dir = f.work
		cmd.Stdin = strings.NewReader(c.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := stderr.String()
		switch {
		case code != 2:
			t.Errorf("ecpi %s: exit %d, want 2 (stderr %.200q)", c, code, msg)
		case strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") || !strings.HasPrefix(msg, "ecpi: "):
			t.Errorf("ecpi %s: stderr is not one line \"ecpi: ...\": %.300q", c, msg)
		case strings.Contains(msg, "goroutine ") || strings.Contains(msg, ".go:") || strings.Contains(msg, "panic"):
			t.Errorf("ecpi %s: a Go stack trace or panic on stderr: %.300q", c, msg)
		}
		if after := snapshot(t, f.home, f.work); after != before {
			t.Fatalf("ecpi %s changed files on disk:\n%s", c, diffSnapshots(before, after))
		}
	}
	t.Logf("%d bad inputs, each one line and exit 2, nothing on disk changed", len(cases))
}

// snapshot lists every file and folder under the roots with its size, mode,
// modification time and (up to 1 MiB) content digest.
func snapshot(t *testing.T, roots ...string) string {
	t.Helper()
	var b strings.Builder
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %v %d %d", path, info.Mode(), info.Size(), info.ModTime().UnixNano())
			if info.Mode().IsRegular() && info.Size() <= 1<<20 {
				raw, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, " %x", sha256.Sum256(raw))
			}
			b.WriteString("\n")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func diffSnapshots(before, after string) string {
	was, is := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for _, line := range is {
		if !slices.Contains(was, line) {
			out = append(out, "+ "+line)
		}
	}
	for _, line := range was {
		if !slices.Contains(is, line) {
			out = append(out, "- "+line)
		}
	}
	return strings.Join(out, "\n")
}
