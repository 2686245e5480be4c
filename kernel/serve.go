package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ecpi-dev/ecpi/option"

	"github.com/ecpi-dev/ecpi/nb"
	"github.com/ecpi-dev/ecpi/repl"
)

// GoNB runs every cell as a fresh process, so nothing a cell builds outlives
// it: models, compiled XLA executables, the session's settings. The session
// server keeps them. One server runs per notebook kernel (its socket is named
// after the kernel's process) and runs lines of ecpi's command language, one
// at a time, in one REPL session; package nb, which cells import, starts it
// on first use and shows what it streams back. The server ends with its
// kernel, or after a long idle spell.

func init() {
	repl.Register(&repl.Command{
		Name:    "serve",
		Summary: "the notebook session server (started by package nb in a notebook cell; not for typing)",
		Details: "Listens on a Unix socket and runs each posted line of the command language in one session,\n" +
			"streaming results, text, pictures and training progress as JSON lines. It exits when the process\n" +
			"parent= (the notebook's kernel) is gone, or after idle= without a line.",
		Options: serveOptions.Declare(),
		Run:     runServe,
	})
}

// serveArgs are the options of `serve`.
type serveArgs struct {
	Socket string
	Parent int
	Idle   string
}

var serveOptions = repl.Options[serveArgs]{
	Table: option.Table[serveArgs]{
		option.Text("socket", "the Unix socket to listen on", func(a *serveArgs) *string { return &a.Socket }),
		option.Int("parent", "exit when this process is gone (0: never)", func(a *serveArgs) *int { return &a.Parent }, option.AtLeast(0)),
		option.Text("idle", "exit after this long without a line", func(a *serveArgs) *string { return &a.Idle },
			option.NewRule(func(v string) bool { d, err := time.ParseDuration(v); return err == nil && d > 0 }, "must be a positive duration such as 30m")),
	},
	Defaults: serveArgs{Idle: "2h"},
}

func runServe(c *repl.Call) error {
	args, err := serveOptions.Read(c)
	if err != nil {
		return err
	}
	if args.Socket == "" {
		return repl.Usagef("serve needs socket=PATH")
	}
	idle, _ := time.ParseDuration(args.Idle) // checked by its rule
	return Serve(c.Ctx, args.Socket, args.Parent, idle)
}

// Serve runs the session server on socket until ctx ends, the process parent
// (when not 0) is gone, or no line came for idle.
func Serve(ctx context.Context, socket string, parent int, idle time.Duration) error {
	_ = os.Remove(socket) // a socket left by a server that was killed
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("session server: %w", err)
	}
	defer os.Remove(socket)
	defer removeIfEmpty(nb.LogPath(socket)) // a server that said nothing leaves no log behind
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	s := &server{session: repl.NewSession(), lastLine: time.Now()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		if s.run(w, r) {
			stop() // `quit`: the session ends
		}
	})
	httpServer := &http.Server{Handler: mux}
	go s.watch(ctx, stop, parent, idle)
	go func() {
		<-ctx.Done()
		httpServer.Close()
	}()
	if err := httpServer.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type server struct {
	session  *repl.Session
	lines    sync.Mutex // one line at a time: the session is not shared by two commands
	mu       sync.Mutex
	lastLine time.Time
}

// RunRequest is what a cell posts to /run.
type RunRequest struct {
	Line string `json:"line"`
}

// run executes one line and streams its events as JSON lines; a cell that is
// interrupted closes the connection, which cancels the command. It reports
// whether the line was `quit`.
func (s *server) run(w http.ResponseWriter, r *http.Request) (quit bool) {
	var req RunRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	s.lines.Lock()
	defer s.lines.Unlock()
	s.touch()
	defer s.touch()
	w.Header().Set("Content-Type", "application/x-ndjson")
	encoder := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	var sending sync.Mutex
	send := func(e nb.Event) {
		sending.Lock()
		defer sending.Unlock()
		_ = encoder.Encode(e)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := time.Now()
	err := repl.ExecuteEvents(r.Context(), s.session, req.Line, send)
	if err != nil && !errors.Is(err, repl.ErrQuit) {
		// Printable: the cell prints it, and notebooks render the escape sequences in a cell's output.
		send(nb.Event{Error: repl.OneLine(err)})
	}
	send(nb.Event{Done: &nb.Done{Seconds: time.Since(start).Seconds()}})
	return errors.Is(err, repl.ErrQuit)
}

func (s *server) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastLine = time.Now()
}

// watch stops the server when its kernel is gone or it has been idle too long.
func (s *server) watch(ctx context.Context, stop func(), parent int, idle time.Duration) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		quiet := time.Since(s.lastLine)
		s.mu.Unlock()
		busy := !s.lines.TryLock()
		if !busy {
			s.lines.Unlock()
		}
		if (parent > 0 && !alive(parent)) || (!busy && quiet > idle) {
			stop()
			return
		}
	}
}

// alive reports whether a process exists.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM)
}

// removeIfEmpty removes the file at path when it holds nothing.
func removeIfEmpty(path string) {
	if info, err := os.Stat(path); err == nil && info.Size() == 0 {
		os.Remove(path)
	}
}
