package xla

import (
	"math"
	"testing"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
)

// installedCPUPlugin returns the XLA CPU plugin found in PluginDirs, or skips the test.
func installedCPUPlugin(t *testing.T) Plugin {
	t.Helper()
	p, ok := findPlatform(FindPlugins(PluginDirs()), "cpu")
	if !ok {
		t.Skipf("no XLA CPU plugin in %v: run `make xla-plugin` (scripts/setup-xla.sh) to test the XLA backend", PluginDirs())
	}
	return p
}

// xlaCPU chooses the installed XLA CPU plugin as the backend (or skips the test) and finalizes
// it when the test ends.
func xlaCPU(t *testing.T) *Choice {
	t.Helper()
	installedCPUPlugin(t)
	t.Setenv("GOMLX_BACKEND", "")
	c, err := Choose("xla:cpu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Backend.Finalize)
	return c
}

// matmulAndGradient runs a small graph with a matmul and a gradient on the backend.
func matmulAndGradient(t *testing.T, backend compute.Backend) [][]float32 {
	t.Helper()
	outs, err := ExecOnceN(backend, func(a, b *Node) []*Node {
		loss := ReduceAllSum(Square(MatMul(a, b)))
		return []*Node{loss, Gradient(loss, a)[0]}
	}, [][]float32{{1, 2}, {3, 4}}, [][]float32{{5, 6}, {7, 8}})
	if err != nil {
		t.Fatal(err)
	}
	grad := outs[1].Value().([][]float32)
	return append([][]float32{{outs[0].Value().(float32)}}, grad...)
}

func TestXLACPURunsAGraphLikeTheGoBackend(t *testing.T) {
	plugin := installedCPUPlugin(t)
	t.Setenv("GOMLX_BACKEND", "")
	c, err := Choose("xla:cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Backend.Finalize()
	if c.Name != "xla:cpu" || c.Plugin != plugin.Path || c.Devices < 1 {
		t.Errorf("got %+v, want xla:cpu from %s", c, plugin.Path)
	}
	goChoice, err := Choose("go")
	if err != nil {
		t.Fatal(err)
	}
	defer goChoice.Backend.Finalize()

	// loss = sum((AB)²) with AB = [[19 22] [43 50]]; d loss/dA = 2·AB·Bᵀ.
	want := [][]float32{{5194}, {454, 618}, {1030, 1402}}
	for _, choice := range []*Choice{c, goChoice} {
		got := matmulAndGradient(t, choice.Backend)
		for i := range want {
			for j := range want[i] {
				if math.Abs(float64(got[i][j]-want[i][j])) > 1e-3 {
					t.Errorf("%s: got %v, want %v", choice.Name, got, want)
				}
			}
		}
	}
}

func TestAutoPrefersTheInstalledPlugin(t *testing.T) {
	plugin := installedCPUPlugin(t)
	t.Setenv("GOMLX_BACKEND", "")
	c, err := (&Finder{Dirs: PluginDirs()}).Choose("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Backend.Finalize()
	if c.Name != "xla:cpu" || c.Reason != "XLA cpu plugin found at "+plugin.Path {
		t.Errorf("got %s (%s), want xla:cpu found at %s", c.Name, c.Reason, plugin.Path)
	}
}
