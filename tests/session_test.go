package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/nb"
)

// TestNotebookSessionKeepsStateAcrossCells drives the session server as
// notebook cells do, through package nb: the server starts on the first line,
// keeps the session's model between lines (cells), streams results and text,
// and reports a bad line as an error without dying.
func TestNotebookSessionKeepsStateAcrossCells(t *testing.T) {
	home := t.TempDir()
	socket := filepath.Join(t.TempDir(), "s.sock")
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_SESSION", socket)
	t.Setenv("ECPI_BIN", ecpiBin)
	t.Setenv("GOMLX_BACKEND", "go")
	defer func() {
		if _, err := nb.Run("quit"); err != nil {
			t.Errorf("quit: %v", err)
		}
		if _, err := os.Stat(socket); err == nil {
			time.Sleep(200 * time.Millisecond)
			if _, err := os.Stat(socket); err == nil {
				t.Error("the server still listens after quit")
			}
		}
	}()

	model, err := nb.Run("model ecp n=64 half_segment=16")
	if err != nil || len(model) != 1 || model[0].Command != "model" {
		t.Fatalf("model line: %v, %v", model, err)
	}
	var cost struct {
		Model string `json:"model"`
		N     int    `json:"n"`
		Ratio float64
	}
	results, err := nb.Run("cost") // no options: the model of the last cell
	if err != nil || len(results) != 1 {
		t.Fatalf("cost line: %v, %v", results, err)
	}
	if err := results[0].Decode(&cost); err != nil || cost.Model != "ecp" || cost.N != 64 {
		t.Fatalf("cost of the session's model: %+v (%v); want ecp at n=64", cost, err)
	}
	if _, err := nb.Run("model ecp half_segment=7"); err == nil || !strings.Contains(err.Error(), "half_segment=7 must divide") {
		t.Errorf("a bad line: error %v, want the rule", err)
	}
	if _, err := nb.Run("status"); err != nil {
		t.Errorf("the server should survive a bad line: %v", err)
	}
}
