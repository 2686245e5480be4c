package data

import (
	"reflect"
	"testing"
)

func stream(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

func TestLMBatchesShiftAndResume(t *testing.T) {
	b, err := NewLMBatches(stream(1000), 4, 16, 42)
	if err != nil {
		t.Fatal(err)
	}
	first := b.Next()
	for i := range first.Inputs {
		if first.Targets[i] != first.Inputs[i]+1 {
			t.Fatalf("targets are not inputs shifted by one at %d", i)
		}
	}
	b.Next()
	saved := b.State()
	want := []LMBatch{b.Next(), b.Next()}
	resumed, _ := NewLMBatches(stream(1000), 4, 16, 42)
	resumed.Restore(saved)
	if got := []LMBatch{resumed.Next(), resumed.Next()}; !reflect.DeepEqual(got, want) {
		t.Error("restored batcher gives different batches")
	}
	if reflect.DeepEqual(first, want[0]) {
		t.Error("consecutive batches are identical")
	}
	if _, err := NewLMBatches(stream(10), 1, 16, 1); err == nil {
		t.Error("stream shorter than a window accepted")
	}
}

func TestEvalWindowsCountEachTargetOnce(t *testing.T) {
	for _, n := range []int{101, 128, 333} {
		tokens := stream(n)
		ws, err := EvalWindows(tokens, 32)
		if err != nil {
			t.Fatal(err)
		}
		counted := make([]int, n)
		for k, w := range ws {
			if len(w.Inputs) != 32 || w.Targets[0] != w.Inputs[0]+1 {
				t.Fatalf("window %d malformed", k)
			}
			if k > 0 && k < len(ws)-1 && w.FirstCounted != 16 {
				t.Errorf("window %d counts from %d, want 16 (stride n/2)", k, w.FirstCounted)
			}
			for _, tg := range w.Targets[w.FirstCounted:] {
				counted[tg]++
			}
		}
		for pos := 1; pos < n; pos++ {
			if counted[pos] != 1 {
				t.Fatalf("n=%d: target %d counted %d times", n, pos, counted[pos])
			}
		}
		_, _, weights := EvalBatch(ws)
		sum := float32(0)
		for _, w := range weights {
			sum += w
		}
		if int(sum) != n-1 {
			t.Errorf("weights sum to %v, want %d", sum, n-1)
		}
	}
}

func TestClassBatches(t *testing.T) {
	var ex []Example
	for i := range 10 {
		ex = append(ex, Example{Tokens: stream(i + 1), Label: int32(i)})
	}
	c, err := NewClassBatches(ex, 4, -1, 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]int{}
	var firstEpoch []ClassBatch
	for range 5 { // 20 rows = two epochs
		b := c.Next()
		firstEpoch = append(firstEpoch, b)
		if b.SeqLen != 10 || len(b.Inputs) != 40 {
			t.Fatalf("shape %dx%d", b.Batch, b.SeqLen)
		}
		for i, l := range b.Labels {
			seen[l]++
			if b.Lengths[i] != l+1 || b.Inputs[i*10+int(l)] != l || (l < 9 && b.Inputs[i*10+int(l)+1] != -1) || b.Mask[i*10+int(l)] != true {
				t.Fatalf("row %d (label %d) padded wrongly: %v", i, l, b.Inputs[i*10:(i+1)*10])
			}
		}
	}
	for l := range int32(10) {
		if seen[l] != 2 {
			t.Fatalf("label %d seen %d times in two epochs", l, seen[l])
		}
	}
	c.Restore(BatchState{Seed: 5, Step: 3})
	if !reflect.DeepEqual(c.Next(), firstEpoch[3]) {
		t.Error("restore to step 3 differs")
	}
	eval := ClassEvalBatches(ex, 4, 0)
	if len(eval) != 3 || eval[2].Labels[3] != -1 || eval[2].Lengths[3] != 0 {
		t.Errorf("eval batches %d, last labels %v", len(eval), eval[2].Labels)
	}
}
