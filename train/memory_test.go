package train

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ecpi-dev/ecpi/models"
)

// measuredPeaks are peak resident sizes of `ecpi train ... steps=2
// eval_batches=1 backend=go` (4 heads, 2 layers, opticks), in KB, that the
// estimate's constants were fitted to (full and perceiverar measured again
// once the tiled dense form's memory became linear on the Go backend,
// 2026-12-02).
var measuredPeaks = []struct {
	model         string
	n, batch, dim int
	kb            float64
}{
	{"ecp", 1024, 1, 64, 90464},
	{"ecp", 1024, 8, 64, 458560},
	{"ecp", 4096, 8, 64, 1712928},
	{"ecp", 4096, 8, 256, 3994048},
	{"ecp", 16384, 8, 64, 6387912},
	{"full", 1024, 8, 64, 906316},
	{"full", 4096, 8, 64, 4646160},
	{"full", 4096, 2, 64, 1314344},
	{"local", 4096, 8, 64, 1686896},
	{"pi", 4096, 8, 64, 2553456},
	{"s2", 4096, 8, 64, 6044972}, // in ECP's block form, 2026-12-04 (7407752 in its two group forms)
	{"perceiverar", 4096, 8, 64, 2343832},
}

func TestMemoryEstimateFitsMeasurements(t *testing.T) {
	for _, m := range measuredPeaks {
		cfg, err := models.ParseConfig(map[string]string{"model": m.model, "n": strconv.Itoa(m.n), "dim": strconv.Itoa(m.dim), "heads": "4", "layers": "2"})
		if err != nil {
			t.Fatal(err)
		}
		got := estimateMemory(cfg, m.batch, true).total() / 1024
		if ratio := got / m.kb; ratio < 1/1.6 || ratio > 1.6 {
			t.Errorf("%s n=%d batch=%d dim=%d: estimate %.0f KB, measured %.0f KB (x%.2f)", m.model, m.n, m.batch, m.dim, got, m.kb, ratio)
		}
	}
}

// TestMemoryRefusedBeforeBuilding: a batch or a sequence far beyond the
// machine is one line naming the figure and the option to lower; counts do
// not overflow on the way.
func TestMemoryRefusedBeforeBuilding(t *testing.T) {
	if _, ok := availableMemory(); !ok {
		t.Skip("no /proc/meminfo here")
	}
	full := models.DefaultConfig("full")
	full.SeqLen = 1 << 30
	for _, c := range []struct {
		cfg   models.Config
		batch int
		want  string
	}{
		{models.DefaultConfig("ecp"), 1000000000, "lower batch=1000000000"},
		{full, 1, "lower n=1073741824"},
	} {
		err := CheckMemory(c.cfg, c.batch, true)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "B of memory") {
			t.Errorf("%s batch=%d: %v, want a refusal saying %q", c.cfg.Model, c.batch, err, c.want)
		}
	}
	if err := CheckMemory(models.DefaultConfig("ecp"), 8, true); err != nil {
		t.Errorf("the default model: %v", err)
	}
}
