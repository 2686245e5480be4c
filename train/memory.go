package train

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
)

// Bytes per unit of a training step's peak memory, fitted to the peak
// resident size of `ecpi train` on GoMLX's Go backend (v0.28.16, GC slack
// included) for seven families at n = 1024..16384, d = 64..256, batch 1..8
// (measuredPeaks in the tests): within a factor 1.6 of every measurement,
// S2 and π-Attention being the ones above the estimate. XLA needs less.
const (
	baseBytes      = 64 << 20 // the process, corpus and compiled graphs
	paramBytes     = 16       // per trainable parameter: weights, gradients, two Adam moments
	tokenBytes     = 10       // per (sequence, position, feature, layer), times 10+2·ff_mult intermediate tensors
	scoreBytes     = 12       // per (sequence, head, scored query-key pair, layer)
	recomputeBytes = 40       // per (sequence, head, query row, tile column, layer) of the tiled dense form (models.Recomputing), which holds a band of tiles at a time
	logitBytes     = 70       // per (sequence, position, vocabulary entry): logits, softmax, their gradients
	inferenceShare = 4        // evaluation keeps one layer's activations, not all, and no gradients
)

// memoryNeed is the estimate of what a model needs, split as the message names it.
type memoryNeed struct {
	weights, activations float64 // bytes
}

func (m memoryNeed) total() float64 { return baseBytes + m.weights + m.activations }

// estimateMemory estimates the peak memory of training (or evaluating) the
// model on batches of `batch` sequences, from the config alone: counts in
// float64, so no size overflows.
func estimateMemory(cfg models.Config, batch int, training bool) memoryNeed {
	r := cfg.Resolved()
	d, ff, b := float64(r.Dim), float64(r.FFMult), float64(batch)
	params := 2*float64(r.Vocab)*d + float64(r.Layers)*d*d*(4+2*ff)
	var activations float64
	for _, layer := range r.LayerPatterns() {
		n := float64(layer.SeqLen)
		scores, perScore := float64(layer.Pattern.ScoredPairs(layer.SeqLen)), float64(scoreBytes)
		if p, ok := layer.Pattern.(models.Recomputing); ok && p.RecomputesScores() {
			scores, perScore = min(scores, n*models.DenseTileGo), recomputeBytes
		}
		activations += b * (n*d*tokenBytes*(10+2*ff) + float64(r.Heads)*scores*perScore)
	}
	activations += b * float64(r.SeqLen) * float64(r.Vocab) * logitBytes
	if !training {
		return memoryNeed{weights: 2 * 4 * params, activations: activations / inferenceShare / float64(r.Layers)}
	}
	return memoryNeed{weights: paramBytes * params, activations: activations}
}

// CheckMemory refuses a model the machine cannot hold, before anything is
// allocated: one line with the estimate and the option to lower, instead of
// the Go runtime's fatal out-of-memory error. training counts gradients,
// optimizer state and every layer's activations; evaluation one layer's.
func CheckMemory(cfg models.Config, batch int, training bool) error {
	available, ok := availableMemory()
	if !ok {
		return nil
	}
	need := estimateMemory(cfg, batch, training)
	if need.total() <= float64(available) {
		return nil
	}
	what, lower := "activations", "n="+strconv.Itoa(cfg.Resolved().SeqLen)
	switch {
	case need.weights > need.activations:
		what, lower = "weights and optimizer state", "dim= or layers="
	case batch > 1:
		lower = fmt.Sprintf("batch=%d (or n=)", batch)
	}
	return fmt.Errorf("this model needs about %s of memory (%s %s), more than the %s available: lower %s",
		formatBytes(need.total()), what, formatBytes(max(need.weights, need.activations)), formatBytes(float64(available)), lower)
}

// availableMemory is what a new allocation can get: /proc/meminfo's
// MemAvailable, or less when a cgroup (a container) caps the process. ok is
// false where neither can be read.
func availableMemory() (int64, bool) {
	available, ok := memInfoAvailable()
	if limit, err := readInt("/sys/fs/cgroup/memory.max"); err == nil {
		if used, err := readInt("/sys/fs/cgroup/memory.current"); err == nil && (!ok || limit-used < available) {
			available, ok = max(0, limit-used), true
		}
	}
	return available, ok
}

func memInfoAvailable() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// readInt reads a file holding one integer ("max" and other words are errors).
func readInt(path string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}

// formatBytes writes a size with a binary unit: 512 B, 1.5 GB, 3.0 PB.
func formatBytes(bytes float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for bytes >= 1024 && i < len(units)-1 {
		bytes /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", bytes)
	}
	return fmt.Sprintf("%.1f %s", bytes, units[i])
}
