package kernel

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ecpi-dev/ecpi/nb"
)

// TestCellErrorsQuoteControlBytesSafely: a line with control bytes and a stray
// byte posted by a cell (nb.Run, as a notebook does) comes back as an error
// that quotes it escaped.
func TestCellErrorsQuoteControlBytesSafely(t *testing.T) {
	dir, err := os.MkdirTemp("", "ecpi-serve-") // short: a Unix socket's path has about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "kernel.sock")
	t.Setenv("ECPI_SESSION", socket)
	t.Setenv("ECPI_BIN", filepath.Join(dir, "no-ecpi")) // never start a server of the machine's ecpi
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, socket, 0, time.Hour) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session server did not listen within 10 s")
		}
	}

	_, err = nb.Run("model ecp x \x1b]2;pwned\x07 \x00 \xff \u009b31m")
	if err == nil {
		t.Fatal("the line should fail")
	}
	msg := err.Error()
	if !utf8.ValidString(msg) || strings.ContainsFunc(msg, unicode.IsControl) {
		t.Errorf("the cell's error has raw control or stray bytes: %q", msg)
	}
	// The cell's JSON already turned the stray byte into U+FFFD.
	if want := `(got ecp x \x1b]2;pwned\x07 \x00 ` + "\ufffd" + ` \u009b31m)`; !strings.Contains(msg, want) {
		t.Errorf("the cell's error %q does not show %q", msg, want)
	}
}
