package data

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// evalListOps recomputes a ListOps value from its tokens, independently of the generator.
func evalListOps(t *testing.T, toks []int32) int {
	var stack [][]int
	var ops []int32
	var result int
	for _, tk := range toks {
		switch {
		case tk >= 1 && tk <= 10:
			if len(stack) == 0 {
				return int(tk - 1)
			}
			stack[len(stack)-1] = append(stack[len(stack)-1], int(tk-1))
		case tk >= listOpsMax && tk <= listOpsSum:
			ops, stack = append(ops, tk), append(stack, nil)
		case tk == listOpsClose:
			v := listOpsApply(int(ops[len(ops)-1]), stack[len(stack)-1])
			ops, stack = ops[:len(ops)-1], stack[:len(stack)-1]
			if len(stack) == 0 {
				result = v
			} else {
				stack[len(stack)-1] = append(stack[len(stack)-1], v)
			}
		default:
			t.Fatalf("bad token %d", tk)
		}
	}
	return result
}

func TestListOps(t *testing.T) {
	o := ListOpsOptions{MinLen: 50, MaxLen: 300, MaxDepth: 10, MaxArgs: 10}
	ex, err := ListOps(200, o, 7)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[int32]bool{}
	for _, e := range ex {
		if len(e.Tokens) < o.MinLen || len(e.Tokens) > o.MaxLen {
			t.Fatalf("length %d outside [%d,%d]", len(e.Tokens), o.MinLen, o.MaxLen)
		}
		if got := evalListOps(t, e.Tokens); int32(got) != e.Label {
			t.Fatalf("%s: label %d, evaluates to %d", ListOpsString(e.Tokens), e.Label, got)
		}
		labels[e.Label] = true
	}
	if len(labels) < 8 {
		t.Errorf("only %d distinct labels in 200 examples", len(labels))
	}
	again, _ := ListOps(200, o, 7)
	if !reflect.DeepEqual(ex, again) {
		t.Error("same seed, different examples")
	}
	if listOpsApply(listOpsMed, []int{1, 2, 8, 9}) != 5 || listOpsApply(listOpsSum, []int{7, 8}) != 5 {
		t.Error("MED/SM rules")
	}
	long, _ := ListOps(3, DefaultListOps, 1)
	if len(long[0].Tokens) < 500 {
		t.Errorf("default length %d < 500", len(long[0].Tokens))
	}
}

func TestPathfinder(t *testing.T) {
	ex, err := Pathfinder(10, DefaultPathfinder, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ex {
		if len(e.Tokens) != 1024 || e.Label != int32(1-i%2) {
			t.Fatalf("example %d: %d tokens, label %d", i, len(e.Tokens), e.Label)
		}
		markers, path := 0, 0
		for _, v := range e.Tokens {
			markers += boolToInt(v == 255)
			path += boolToInt(v == 200)
		}
		if markers < 5 || path < 40 {
			t.Errorf("example %d: %d marker and %d path pixels", i, markers, path)
		}
	}
	again, _ := Pathfinder(10, DefaultPathfinder, 3)
	if !reflect.DeepEqual(ex, again) {
		t.Error("same seed, different images")
	}
}

func TestPasskey(t *testing.T) {
	tok, _ := NewTokenizer("byte")
	ex, err := Passkey(tok, 3, 2000, 500, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		prompt, answer := tok.Decode(e.Prompt), strings.TrimSpace(tok.Decode(e.Answer))
		if len(e.Prompt) != 2000 || !strings.HasSuffix(prompt, "The pass key is") {
			t.Fatalf("prompt of %d tokens ends %q", len(e.Prompt), prompt[len(prompt)-40:])
		}
		at := strings.Index(prompt, "The pass key is "+answer)
		if at < 0 {
			t.Fatalf("key %s not in prompt", answer)
		}
		factEnd := at + len(" The pass key is "+answer+". Remember it. "+answer+" is the pass key. ") - 1
		if d := len(prompt) - factEnd; d != 500 {
			t.Errorf("fact ends %d tokens before the end, want 500", d)
		}
	}
	real := strings.Repeat("Call me Ishmael. Some years ago, never mind how long precisely. ", 100)
	if _, err := Passkey(tok, 2, 1000, 300, real, 1); err != nil {
		t.Errorf("real-text filler: %v", err)
	}
	if _, err := Passkey(tok, 1, 100, 10, "", 1); err == nil {
		t.Error("distance shorter than the question accepted")
	}
}

func TestAssocRecall(t *testing.T) {
	o := AssocRecallOptions{Pairs: 20, Keys: 64, Values: 64, Distance: 30}
	ex, err := AssocRecall(50, o, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		q := e.Tokens[len(e.Tokens)-1]
		i := slices.Index(e.Tokens, q)
		if e.Tokens[i+1] != e.Label || len(e.Tokens)-i != 30 {
			t.Fatalf("query key %d at %d (distance %d), value %d, label %d", q, i, len(e.Tokens)-i, e.Tokens[i+1], e.Label)
		}
	}
	if _, err := AssocRecall(1, AssocRecallOptions{Pairs: 10, Keys: 5, Values: 5, Distance: 4}, 1); err == nil {
		t.Error("more pairs than distinct keys accepted")
	}
}

// TestAssocRecallSpread: with a spread the queried pair moves from example to
// example within distance ± spread, so its position alone cannot answer; the
// sets without one are the ones generated before spread existed.
func TestAssocRecallSpread(t *testing.T) {
	o := AssocRecallOptions{Pairs: 31, Keys: 31, Values: 16, Distance: 48, Spread: 14}
	ex, err := AssocRecall(400, o, 9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, e := range ex {
		q := e.Tokens[len(e.Tokens)-1]
		i := slices.Index(e.Tokens, q)
		distance := len(e.Tokens) - i
		if e.Tokens[i+1] != e.Label || distance < 34 || distance > 62 {
			t.Fatalf("query key %d at %d (distance %d, want 48 ± 14), value %d, label %d", q, i, distance, e.Tokens[i+1], e.Label)
		}
		seen[distance]++
	}
	if len(seen) != 15 { // the pairs 34, 36, ..., 62 tokens before the end
		t.Errorf("queried distances %v, want all 15 pairs within 48 ± 14", seen)
	}
	o.Spread = 0
	fixed, _ := AssocRecall(3, o, 9)
	if got := fmt.Sprint(fixed[2].Tokens[:8], fixed[2].Label); got != "[13 31 15 31 5 43 4 41] 35" {
		t.Errorf("without a spread the sets changed: %s", got)
	}
}
