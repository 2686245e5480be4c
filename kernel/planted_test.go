package kernel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models/plantedtest"
	"github.com/ecpi-dev/ecpi/nb"
)

// TestSessionServerSurvivesAFailingGraph: a notebook line whose model graph
// fails to build gets an error naming the failure back within a minute, and
// the session server goes on serving the next line of the same session.
func TestSessionServerSurvivesAFailingGraph(t *testing.T) {
	plantedtest.Register()
	home := t.TempDir()
	if err := data.Prepare(context.Background(), home, "opticks", io.Discard); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ECPI_HOME", home)
	t.Setenv("ECPI_RUNS", filepath.Join(home, "runs"))
	socket := filepath.Join(os.TempDir(), "ecpi-planted-"+strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")+".sock")
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, socket, 0, time.Hour) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("session server: %v", err)
		}
	}()
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}, Timeout: time.Minute}

	train := "train model=" + plantedtest.Family + " data=opticks n=32 dim=16 heads=2 layers=1 batch=2 steps=2 eval_batches=1 backend=go"
	plantedtest.Fail(true)
	defer plantedtest.Fail(false)
	if events := postLine(t, client, train); !strings.Contains(lastError(events), plantedtest.Message) {
		t.Fatalf("a failing graph: events %+v; want an error naming %q", events, plantedtest.Message)
	}
	plantedtest.Fail(false)
	if events := postLine(t, client, train); lastError(events) != "" || events[len(events)-1].Done == nil {
		t.Fatalf("the next line of the same session: events %+v; want it to train", events)
	}
}

// postLine runs one line in the session server and returns its events.
func postLine(t *testing.T, client *http.Client, line string) []nb.Event {
	t.Helper()
	body, _ := json.Marshal(RunRequest{Line: line})
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the server may still be starting
		if resp, err = client.Post("http://session/run", "application/json", bytes.NewReader(body)); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %v (no answer within a minute?)", line, err)
	}
	defer resp.Body.Close()
	var events []nb.Event
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for scanner.Scan() {
		var e nb.Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatalf("%s: event %q: %v", line, scanner.Text(), err)
		}
		events = append(events, e)
	}
	if err := scanner.Err(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if len(events) == 0 {
		t.Fatalf("%s: no events", line)
	}
	return events
}

func lastError(events []nb.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Error != "" {
			return events[i].Error
		}
	}
	return ""
}
