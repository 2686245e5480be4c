package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ecpi-dev/ecpi/repl"
)

// run executes `ecpi args...` and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := ecpiCommand(t, t.TempDir(), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestCostJSON(t *testing.T) {
	stdout, stderr, code := run(t, "cost", "model=ecp", "n=4096", "segment=256", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cost map[string]any
	if err := json.Unmarshal([]byte(stdout), &cost); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	for _, key := range []string{"model", "n", "pairs", "dense_pairs", "ratio", "attention_flops", "causal_pairs"} {
		if _, ok := cost[key]; !ok {
			t.Errorf("cost --json lacks %q: %s", key, stdout)
		}
	}
	if cost["ratio"] != 0.125 || cost["pairs"] != float64(2*256*4096) {
		t.Errorf("ECP at n=4096, h=256: ratio %v, pairs %v; want 0.125 and 2hn", cost["ratio"], cost["pairs"])
	}
	for _, family := range []string{"full", "local", "s2", "pi", "perceiverar", "double", "compressed", "ssplit"} {
		if _, stderr, code := run(t, "cost", "model="+family, "n=1024", "--json"); code != 0 {
			t.Errorf("cost model=%s: exit %d: %s", family, code, stderr)
		}
	}
}

func TestBenchAttentionJSONLines(t *testing.T) {
	stdout, stderr, code := run(t, "bench", "attention", "models=full,ecp,pi", "n=64,128", "window=16",
		"batch=1", "heads=2", "head_dim=8", "runs=1", "backend=go", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := 0
	scanner := bufio.NewScanner(strings.NewReader(stdout))
	for scanner.Scan() {
		var r map[string]any
		if err := json.Unmarshal(scanner.Bytes(), &r); err != nil {
			t.Fatalf("line %q is not JSON: %v", scanner.Text(), err)
		}
		for _, key := range []string{"variant", "n", "ms", "pairs"} {
			if _, ok := r[key]; !ok {
				t.Errorf("result %s lacks %q", scanner.Text(), key)
			}
		}
		lines++
	}
	if lines != 6 {
		t.Errorf("%d JSON lines, want one per variant and length (6):\n%s", lines, stdout)
	}
}

// TestBenchAttentionMemory: memory=true measures each (variant, n) in a
// process of its own and reports that process's peak resident memory, which
// for dense attention grows with n.
func TestBenchAttentionMemory(t *testing.T) {
	stdout, stderr, code := run(t, "bench", "attention", "models=full,local", "n=128,1024", "window=16",
		"batch=1", "heads=2", "head_dim=8", "runs=1", "backend=go", "memory=true", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	peak := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r struct {
			Variant string  `json:"variant"`
			N       int     `json:"n"`
			PeakMB  float64 `json:"peak_mb"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if r.PeakMB < 1 {
			t.Errorf("%s at n=%d: peak %v MB, want the measuring process's peak", r.Variant, r.N, r.PeakMB)
		}
		peak[fmt.Sprint(r.Variant, r.N)] = r.PeakMB
	}
	if len(peak) != 4 {
		t.Fatalf("%d measurements, want 4:\n%s", len(peak), stdout)
	}
	if peak["full1024"] <= peak["full128"] {
		t.Errorf("dense attention's peak memory did not grow from n=128 (%.0f MB) to n=1024 (%.0f MB)", peak["full128"], peak["full1024"])
	}

	// A length the machine cannot hold is reported as not measured, and the sweep goes on.
	stdout, stderr, code = run(t, "bench", "attention", "models=full", "n=4194304,128", "batch=1", "heads=2", "head_dim=8",
		"runs=1", "backend=go", "memory=true", "--json")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"not_measured":"this model needs about`) || !strings.Contains(lines[1], `"peak_mb"`) {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant n=4194304 not measured, then n=128 measured", code, stderr, stdout)
	}
}

// TestBadInputExitsTwoWithOneLine: unknown commands and options and broken
// rules are one line on stderr naming the problem, exit code 2.
func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"trian"}, `unknown command "trian" (did you mean "train"?)`},
		{[]string{"cost", "modle=ecp"}, `unknown option "modle" (did you mean "model"?)`},
		{[]string{"cost", "model=ecp", "n=100", "segment=7"}, "half_segment=7 must divide sequence length n=100"},
		{[]string{"cost", "model=local", "window=600", "n=512"}, "window k=600 must be smaller than sequence length n=512"},
		{[]string{"bench", "attention", "models=ecp,nope"}, `option models=: unknown value "nope"`},
		{[]string{"bench", "atention"}, `did you mean "bench attention"?`},
		{[]string{"train", "data=nowhere", "steps=1"}, "nowhere"},
	}
	for _, c := range cases {
		stdout, stderr, code := run(t, c.args...)
		if code != 2 {
			t.Errorf("ecpi %s: exit %d, want 2", strings.Join(c.args, " "), code)
		}
		if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); lines != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("ecpi %s: stderr %q, want one line containing %q", strings.Join(c.args, " "), stderr, c.want)
		}
		if stdout != "" {
			t.Errorf("ecpi %s: stdout %q, want nothing", strings.Join(c.args, " "), stdout)
		}
	}
}

// TestEveryCommandHasHelp runs `ecpi CMD --help` for every registered command.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, cmd := range repl.Commands() {
		stdout, stderr, code := run(t, append(strings.Fields(cmd.Name), "--help")...)
		if code != 0 || !strings.Contains(stdout, "usage: ecpi "+cmd.Name) {
			t.Errorf("ecpi %s --help: exit %d, stdout %q, stderr %q", cmd.Name, code, stdout, stderr)
		}
	}
}

// TestSampleOutputHasNoRawControlBytes samples from an untrained byte-level
// model, which writes bytes almost uniformly (control bytes, bytes that are
// not UTF-8): what reaches the terminal must show them, not act on them.
func TestSampleOutputHasNoRawControlBytes(t *testing.T) {
	home, runDir := t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"data", "prepare", "opticks"},
		{"train", "model=ecp", "n=32", "segment=8", "dim=16", "heads=2", "layers=1", "batch=1", "steps=1",
			"warmup=1", "eval_every=0", "eval_batches=1", "data=opticks", "run=" + runDir},
	} {
		if out, err := ecpiCommand(t, home, args...).CombinedOutput(); err != nil {
			t.Fatalf("ecpi %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := ecpiCommand(t, home, "sample", "checkpoint="+runDir, "tokens=300", "temperature=1", "top_k=0", "The ").Output()
	if err != nil {
		t.Fatalf("sample: %v", err)
	}
	if !utf8.Valid(out) {
		t.Errorf("sample printed bytes that are not UTF-8: %q", out)
	}
	for _, r := range string(out) {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			t.Fatalf("sample printed the raw control character %U: %q", r, out)
		}
	}
	if !strings.Contains(string(out), "hint: the model has trained 1 step and predicts") {
		t.Errorf("an untrained model's sample comes without the hint that it is untrained: %q", out)
	}
	if !strings.ContainsAny(string(out), "␀␁␂␃␄␅␆␇␈␋␌␍␎␏␐␑␒␓␔␕␖␗␘␙␚␛␜␝␞␟␡") && !strings.Contains(string(out), `\x`) {
		t.Errorf("an untrained byte model's 300 tokens show no control byte or stray byte: the test did not exercise the escaping: %q", out)
	}
}

// ecpi restarts itself with glibc's malloc asking for huge pages (XLA's
// buffers fault in 40 times faster), and keeps a user's own setting.
func TestMallocTuning(t *testing.T) {
	modes, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(modes), "[never]") {
		t.Skip("this kernel offers no transparent huge pages")
	}
	doctor := func(tunables string) string {
		cmd := ecpiCommand(t, t.TempDir(), "doctor", "backend=go", "--json")
		cmd.Env = append(cmd.Env, "GLIBC_TUNABLES="+tunables)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("doctor with GLIBC_TUNABLES=%q: %v", tunables, err)
		}
		var report repl.DoctorReport
		if err := json.Unmarshal(out, &report); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		return report.Malloc
	}
	if got := doctor(""); !strings.Contains(got, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1)") {
		t.Errorf("without GLIBC_TUNABLES, malloc is %q; want huge pages turned on", got)
	}
	if got := doctor("glibc.malloc.arena_max=4"); !strings.Contains(got, "GLIBC_TUNABLES=glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1)") {
		t.Errorf("with another tunable set, malloc is %q; want it kept and huge pages added", got)
	}
	if got := doctor("glibc.malloc.hugetlb=0"); !strings.Contains(got, "defaults") || !strings.Contains(got, "hugetlb=0") {
		t.Errorf("with hugetlb=0 set by the user, malloc is %q; want the user's choice kept", got)
	}
}

// TestBenchTrainPreset prices a shrunk paper preset from the command line and
// refuses an unknown preset naming the valid ones.
func TestBenchTrainPreset(t *testing.T) {
	stdout, stderr, code := run(t, "bench", "train", "preset=pi-125m", "layers=1", "dim=32", "heads=2", "n=256", "batch=1", "steps=1",
		"devices=4", "backends=go", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Preset         string  `json:"preset"`
		Shrunk         string  `json:"shrunk"`
		TokensPerS     float64 `json:"tokens_per_s"`
		ScheduleTokens int64   `json:"schedule_tokens"`
		Hours          float64 `json:"hours"`
		HoursOnDevices float64 `json:"hours_on_devices"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if r.Preset != "pi-125m" || r.Shrunk == "" || r.TokensPerS <= 0 || r.ScheduleTokens != 20000*16*1024 || r.HoursOnDevices <= 0 || r.HoursOnDevices > r.Hours/3.99 {
		t.Errorf("bench train preset=pi-125m: %+v; want the shrunk model measured and π-125m's schedule priced on 1 and 4 devices", r)
	}
	_, stderr, code = run(t, "bench", "train", "preset=pi-100m")
	if code == 0 || !strings.Contains(stderr, "pi-125m") || !strings.Contains(stderr, "ecp-pg19") {
		t.Errorf("unknown preset: exit %d, %q; want an error naming the presets", code, stderr)
	}
}
