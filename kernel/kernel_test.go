package kernel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewriteSpec(t *testing.T) {
	dir := t.TempDir()
	gonb := `{"argv":["/x/gonb","--kernel","{connection_file}","-go_work=/old"],"display_name":"Go (gonb)","language":"go","env":{}}`
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), []byte(gonb), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, _ := filepath.Abs("..")
	err := RewriteSpec(dir, SpecSettings{DisplayName: "ecpi (Go)", GoNB: "/home/kernel/bin/gonb", Repo: repo,
		Env: map[string]string{"GOTOOLCHAIN": "go1.27.3"}, PathPrefix: []string{"/b"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "kernel.json"))
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.DisplayName != "ecpi (Go)" || s.Env["GOTOOLCHAIN"] != "go1.27.3" || s.Env["PATH"] != "/b:${PATH}" {
		t.Errorf("spec %+v", s)
	}
	if s.Argv[0] != "/home/kernel/bin/gonb" {
		t.Errorf("argv[0] %q: want the built gonb binary, not the staging copy", s.Argv[0])
	}
	if last := s.Argv[len(s.Argv)-1]; last != "-go_work="+repo || strings.Contains(strings.Join(s.Argv, " "), "/old") {
		t.Errorf("argv %q: want one -go_work=%s", s.Argv, repo)
	}
	if err := RewriteSpec(dir, SpecSettings{Repo: "relative"}); err == nil {
		t.Error("relative repo accepted")
	}
}
