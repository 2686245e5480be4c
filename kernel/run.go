package kernel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
)

// Quick reports the CI mode: ECPI_QUICK=1 asks every notebook for sizes that
// run in a few minutes; otherwise notebooks run their full (committed) sizes.
func Quick() bool { return os.Getenv("ECPI_QUICK") == "1" }

// Pick returns quick in quick mode and full otherwise.
func Pick[T any](quick, full T) T {
	if Quick() {
		return quick
	}
	return full
}

// Words parses "key=value key=value" (the words `ecpi train` takes) into a map.
func Words(words string) (map[string]string, error) {
	out := map[string]string{}
	for _, w := range strings.Fields(words) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("option %q: want key=value", w)
		}
		out[k] = v
	}
	return out, nil
}

// Train is `ecpi train WORDS` in a cell: train.ParseOptions and train.Run,
// with a live loss plot while it runs. Later words override earlier ones.
func Train(ctx context.Context, words ...string) (*train.Result, error) {
	values, err := Words(strings.Join(words, " "))
	if err != nil {
		return nil, err
	}
	o, err := train.ParseOptions(values)
	if err != nil {
		return nil, err
	}
	if o.RunDir == "" {
		// train's default folder is named to the second: runs started within one second would collide.
		if o.RunDir, err = freshRunDir(o); err != nil {
			return nil, err
		}
	}
	live := NewLive(fmt.Sprintf("%s on %s", o.Model.Model, o.Data))
	return train.Run(ctx, o, live.Progress)
}

// freshRunDir makes a new, empty run folder <home>/runs/<model>-<data>-<random>.
func freshRunDir(o train.Options) (string, error) {
	runs := filepath.Join(o.Home, "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(runs, fmt.Sprintf("%s-%s-", o.Model.Model, o.Data))
}

// Config is `model=... n=...` words as a validated model config.
func Config(words string) (models.Config, error) {
	values, err := Words(words)
	if err != nil {
		return models.Config{}, err
	}
	return models.ParseConfig(values)
}

// AttentionPNG draws one layer's attention weights (train's probe), a heatmap per head.
func AttentionPNG(m train.AttentionMap, cell int) ([]byte, error) {
	heads := make([][][]float64, len(m.Weights))
	for h, rows := range m.Weights {
		heads[h] = make([][]float64, len(rows))
		for i, row := range rows {
			heads[h][i] = make([]float64, len(row))
			for j, w := range row {
				heads[h][i][j] = float64(w)
			}
		}
	}
	return HeadsPNG(heads, cell)
}
