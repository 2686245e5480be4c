package repl

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
)

func TestMaskRowsShadeByShareOfAllowedPairs(t *testing.T) {
	// Full causal, n=8 on 8 columns: 4 rows of 2 queries. Row 0 holds queries
	// 0 and 1: key 0 is allowed for both, key 1 for query 1 only.
	rows, allowed, _ := maskRows(context.Background(), models.Full{Causal: true}, 0, 8, 8)
	want := []string{"█▒      ", "███▒    ", "█████▒  ", "███████▒"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if allowed != 36 {
		t.Errorf("allowed = %d, want 8·9/2 = 36", allowed)
	}
}

func TestMaskCountsMatchThePattern(t *testing.T) {
	for _, line := range []string{"model=ecp n=256 segment=32", "model=local n=256 window=16", "model=s2 n=256 heads=4"} {
		values := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			values[k] = v
		}
		cfg, err := models.ParseConfig(values)
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.Pattern()
		_, allowed, _ := maskRows(context.Background(), p, 0, cfg.SeqLen, 64)
		if p.PerHead() {
			continue // AllowedPairs averages over heads
		}
		if want := p.AllowedPairs(cfg.Heads, cfg.SeqLen); allowed != want {
			t.Errorf("%s: mask counts %d allowed pairs, AllowedPairs %d", line, allowed, want)
		}
	}
}

func TestMaskDrawsPiSkipsApart(t *testing.T) {
	s := NewSession()
	out := run(t, s, "model pi n=256 window=8 skip_period=32", "mask width=70")
	if !strings.ContainsRune(out, skipGlyph) || !strings.Contains(out, "skip keys only") {
		t.Errorf("π mask should draw skip-only cells with %c and explain them:\n%s", skipGlyph, out)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, "│") == 2 {
			rows++
			if w := len([]rune(line)); w > 70 {
				t.Errorf("row %q is %d wide, width=70", line, w)
			}
		}
	}
	if rows == 0 {
		t.Fatalf("no diagram rows:\n%s", out)
	}
	ecp := run(t, NewSession(), "mask n=256 width=70")
	if strings.ContainsRune(ecp, skipGlyph) {
		t.Error("the ECP mask has no skip keys")
	}
}

func TestTableAlignsNumbersRight(t *testing.T) {
	got := Table([]string{"model", "loss"}, [][]string{{"ecp", "1.5"}, {"local", "12.25"}})
	want := "model   loss\n─────  ─────\necp      1.5\nlocal  12.25\n"
	if got != want {
		t.Errorf("Table:\n%q\nwant\n%q", got, want)
	}
}

func TestBarsScaleToTheLargest(t *testing.T) {
	got := Bars([]string{"layer 1", "layer 2"}, []float64{16, 32}, 8, func(v float64) string { return "" })
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if !strings.Contains(lines[0], "████    ") || !strings.Contains(lines[1], "████████") {
		t.Errorf("Bars:\n%s", got)
	}
}

func TestLossLineInAPipeWritesWholeLines(t *testing.T) {
	var out bytes.Buffer
	line := NewLossLine(&Call{Out: &out}, "ecp")
	for step := 1; step <= 3; step++ {
		p := train.Progress{Step: step, Steps: 3, Loss: float64(4 - step), TokensPerS: 100, Elapsed: time.Second}
		if step == 2 {
			p.Eval = &train.Eval{Split: "valid", Loss: 2.5, Windows: 1}
		}
		line.Update(p)
	}
	line.End()
	got := out.String()
	if strings.Contains(got, "\r") {
		t.Errorf("a pipe should get no carriage returns: %q", got)
	}
	if !strings.Contains(got, "step 2: valid loss 2.5000") || !strings.Contains(got, "ecp step 3/3  loss 1.0000") {
		t.Errorf("loss line output:\n%s", got)
	}
}

func TestLossLineOnATerminalKeepsOneProgressLine(t *testing.T) {
	var out bytes.Buffer
	line := &LossLine{out: &out, label: "ecp", live: true, width: 60}
	for step := 1; step <= 4; step++ {
		p := train.Progress{Step: step, Steps: 4, Loss: float64(5 - step), TokensPerS: 1234, Elapsed: time.Second}
		if step%2 == 0 {
			p.Eval = &train.Eval{Split: "valid", Loss: 2.5, Windows: 1}
		}
		line.Update(p)
	}
	line.End()
	screen := screenLines(out.String())
	want := []string{"  step 2: valid loss 2.5000", "  step 4: valid loss 2.5000", "ecp step 4/4  loss 1.0000"}
	if len(screen) != len(want) {
		t.Fatalf("screen has %d lines, want %d (evaluations above one progress line):\n%s", len(screen), len(want), strings.Join(screen, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(screen[i], w) {
			t.Errorf("screen line %d is %q, want it to start with %q", i, screen[i], w)
		}
		if n := utf8.RuneCountInString(screen[i]); n >= 60 {
			t.Errorf("screen line %d has %d columns: a 60-column terminal wraps it", i, n)
		}
	}
}

// screenLines is what a terminal shows after drawing s: \r returns to the
// start of the line, ESC[K clears to its end, \n starts a new line.
func screenLines(s string) []string {
	lines := [][]rune{{}}
	col := 0
	for len(s) > 0 {
		cur := &lines[len(lines)-1]
		switch {
		case strings.HasPrefix(s, "\x1b[K"):
			*cur = (*cur)[:col]
			s = s[3:]
			continue
		case s[0] == '\r':
			col = 0
		case s[0] == '\n':
			lines, col = append(lines, []rune{}), 0
		default:
			r, size := utf8.DecodeRuneInString(s)
			if col < len(*cur) {
				(*cur)[col] = r
			} else {
				*cur = append(*cur, r)
			}
			col++
			s = s[size:]
			continue
		}
		s = s[1:]
	}
	var out []string
	for _, l := range lines {
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}

func TestHistoryPersistsAcrossSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "history")
	h := openHistory(path)
	h.add("model ecp")
	h.add("model ecp") // repeated lines are kept once
	h.add("status")
	if got := openHistory(path).lines; strings.Join(got, "|") != "model ecp|status" {
		t.Errorf("history read back %q", got)
	}
}

func TestInterrupterCancelsOnlyTheRunningCommand(t *testing.T) {
	r := &interrupter{}
	r.interrupt() // at the prompt: nothing to cancel, nothing breaks
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- r.run(context.Background(), func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	<-started
	r.interrupt()
	if err := <-done; err != context.Canceled {
		t.Errorf("interrupted command returned %v", err)
	}
	if err := r.run(context.Background(), func(ctx context.Context) error { return ctx.Err() }); err != nil {
		t.Errorf("the next command starts uncancelled: %v", err)
	}
}

func TestRFPictureDrawsMeasuredAndBound(t *testing.T) {
	r := &train.RFResult{Model: "ecp", Position: 255, Layers: []train.RFLayer{{Layers: 1, Measured: 64, Bound: 128}, {Layers: 2, Measured: 128, Bound: -1}}}
	got := RFPicture{r}.Text()
	for _, want := range []string{"1 layer(s) measured", "1 layer(s) bound", "2 layer(s) measured", "█ 128"} {
		if !strings.Contains(got, want) {
			t.Errorf("rf picture lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "2 layer(s) bound") {
		t.Errorf("a layer without a bound drew one:\n%s", got)
	}
}
