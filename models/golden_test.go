package models

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// The golden fixtures (testdata/golden, written by tests/reference/golden.py
// from the ECP authors' PyTorch code at commit 9fbf532) pin ecpi's ECP family
// to the authors' models: loaded with the same weights, ecpi must give the same
// logits (max |Δ| <= 1e-4) and loss (|Δ| <= 1e-5). docs/attention-variants.md
// says what was compared and how to regenerate them.

// goldenFixture is one fixture file.
type goldenFixture struct {
	meta    map[string]string
	tensors map[string]goldenTensor
}

type goldenTensor struct {
	dims   []int
	floats []float32 // F16 and F32 entries
	ints   []int32   // I32 entries
}

// readSafetensors reads a (gzip-compressed) safetensors file: an 8-byte
// little-endian header length, a JSON header, then the tensors' raw data.
func readSafetensors(t *testing.T, path string) goldenFixture {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	headerLen := binary.LittleEndian.Uint64(raw[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+headerLen], &header); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	data := raw[8+headerLen:]
	out := goldenFixture{meta: map[string]string{}, tensors: map[string]goldenTensor{}}
	for name, entry := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(entry, &out.meta); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var info struct {
			DType   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(entry, &info); err != nil {
			t.Fatal(err)
		}
		bytes := data[info.Offsets[0]:info.Offsets[1]]
		tensor := goldenTensor{dims: info.Shape}
		switch info.DType {
		case "F16":
			for i := 0; i < len(bytes); i += 2 {
				tensor.floats = append(tensor.floats, halfToFloat(binary.LittleEndian.Uint16(bytes[i:])))
			}
		case "F32":
			for i := 0; i < len(bytes); i += 4 {
				tensor.floats = append(tensor.floats, math.Float32frombits(binary.LittleEndian.Uint32(bytes[i:])))
			}
		case "I32":
			for i := 0; i < len(bytes); i += 4 {
				tensor.ints = append(tensor.ints, int32(binary.LittleEndian.Uint32(bytes[i:])))
			}
		default:
			t.Fatalf("%s: tensor %s has dtype %s", path, name, info.DType)
		}
		out.tensors[name] = tensor
	}
	return out
}

// halfToFloat widens an IEEE 754 binary16 value exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exponent := uint32(h>>10) & 0x1f
	mantissa := uint32(h) & 0x3ff
	switch {
	case exponent == 0x1f: // infinities and NaN
		return math.Float32frombits(sign | 0xff<<23 | mantissa<<13)
	case exponent == 0 && mantissa == 0:
		return math.Float32frombits(sign)
	case exponent == 0: // subnormal: value = mantissa · 2^-24
		value := float32(mantissa) * float32(math.Pow(2, -24))
		if sign != 0 {
			return -value
		}
		return value
	}
	return math.Float32frombits(sign | (exponent+127-15)<<23 | mantissa<<13)
}

// goldenConfig is the ecpi config of a fixture's authors' constructor arguments.
func goldenConfig(t *testing.T, fx goldenFixture) map[string]string {
	t.Helper()
	var kwargs map[string]any
	if err := json.Unmarshal([]byte(fx.meta["config"]), &kwargs); err != nil {
		t.Fatal(err)
	}
	number := func(key string) int { return int(kwargs[key].(float64)) }
	n := number("sequence_len")
	values := map[string]string{
		"model": fx.meta["family"], "n": fmt.Sprint(n), "dim": fmt.Sprint(number("dim")), "heads": fmt.Sprint(number("heads")),
		"layers": fmt.Sprint(number("num_layers")), "vocab": fmt.Sprint(number("num_unique_tokens")),
		"ff_mult": fmt.Sprint(number("ff_mult")), "dropout": "0",
	}
	switch fx.meta["family"] {
	case "ecp":
		values["half_segment"] = fmt.Sprint(n / number("num_segments"))
	case "ssplit":
		values["splits"] = fmt.Sprint(number("num_segments"))
	case "compressed":
		values["compress"] = fmt.Sprint(number("compression_size"))
	}
	if _, ok := kwargs["latent_len"]; ok {
		values["latents"] = fmt.Sprint(number("latent_len"))
	}
	return values
}

// goldenPath maps an authors' parameter name to ecpi's variable path and says
// whether the weight is a PyTorch Linear weight ([out, in], transposed in ecpi).
func goldenPath(family, name string) (path string, transpose, used bool) {
	layer := regexp.MustCompile(`^layers\.(\d+)\.([01])\.(.*)$`)
	linear := func(scope, leaf string) (string, bool, bool) {
		if leaf == "weight" {
			return scope + "/dense/weights", true, true
		}
		return scope + "/dense/biases", false, true
	}
	norm := func(scope, leaf string) (string, bool, bool) {
		if leaf == "weight" {
			return scope + "/layer_normalization/gain", false, true
		}
		return scope + "/layer_normalization/offset", false, true
	}
	leaf := name[strings.LastIndex(name, ".")+1:]
	switch {
	case name == "token_emb.weight":
		return "/embed/embeddings", false, true
	case strings.HasPrefix(name, "to_logits.0."):
		return norm("/final_norm", leaf)
	case strings.HasPrefix(name, "to_logits.1."):
		return linear("/logits", leaf)
	}
	m := layer.FindStringSubmatch(name)
	if m == nil {
		return "", false, false
	}
	index, _ := strconv.Atoi(m[1])
	scope := fmt.Sprintf("/layer_%02d", index)
	part := strings.TrimSuffix(m[3], "."+leaf)
	if m[2] == "1" { // the feed-forward half
		switch part {
		case "norm":
			return norm(scope+"/ff_norm", leaf)
		case "fn.net.0":
			return linear(scope+"/ff_in", leaf)
		case "fn.net.3":
			return linear(scope+"/ff_out", leaf)
		}
		return "", false, false
	}
	attention := scope + "/attention"
	switch part {
	case "norm":
		return norm(scope+"/attention_norm", leaf)
	case "fn.to_q":
		return linear(attention+"/query", leaf)
	case "fn.to_kv":
		return linear(attention+"/key_value", leaf)
	case "fn.norm":
		return norm(attention+"/key_value_norm", leaf)
	case "fn.to_out_0":
		return linear(attention+"/output_first", leaf)
	case "fn.to_out":
		if family == "ecp" {
			return linear(attention+"/output_rest", leaf)
		}
		return linear(attention+"/output", leaf)
	case "fn.w_out":
		return linear(attention+"/output", leaf)
	case "fn.projection_hist":
		return linear(attention+"/compress", leaf)
	}
	return "", false, false // RoPE frequency buffers: ecpi computes them
}

// goldenValues are the fixture's weights as ecpi variables; unused lists the
// authors' parameters their forward pass never reads.
func goldenValues(t *testing.T, fx goldenFixture) map[string]*tensors.Tensor {
	t.Helper()
	var unused []string
	if err := json.Unmarshal([]byte(fx.meta["unused_parameters"]), &unused); err != nil {
		t.Fatal(err)
	}
	values := map[string]*tensors.Tensor{}
	for name, tensor := range fx.tensors {
		if name == "tokens" || name == "logits" || name == "logit_positions" || strings.HasSuffix(name, "pos_emb.freqs") {
			continue
		}
		path, transpose, ok := goldenPath(fx.meta["family"], name)
		if !ok {
			t.Fatalf("no ecpi variable for the authors' parameter %s", name)
		}
		if contains(unused, name) {
			continue
		}
		flat, dims := tensor.floats, tensor.dims
		if transpose {
			flat, dims = transposed(flat, dims[0], dims[1]), []int{dims[1], dims[0]}
		}
		values[path] = tensors.FromFlatDataAndDimensions(flat, dims...)
	}
	return values
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func transposed(flat []float32, rows, cols int) []float32 {
	out := make([]float32, len(flat))
	for r := range rows {
		for c := range cols {
			out[c*rows+r] = flat[r*cols+c]
		}
	}
	return out
}

// goldenLoader serves the fixture's weights; any variable it does not hold
// would be initialised at random, which the test refuses.
type goldenLoader struct {
	values map[string]*tensors.Tensor
	served map[string]bool
}

func (l *goldenLoader) LoadVariable(_ *model.Store, path string) (*tensors.Tensor, bool) {
	v, ok := l.values[path]
	if ok {
		l.served[path] = true
	}
	return v, ok
}

func (l *goldenLoader) DeleteVariable(_ *model.Store, path string) error {
	delete(l.values, path)
	return nil
}

// runGolden runs ecpi's model of the fixture's family with its weights on its
// tokens and returns the logits of the stored positions and the loss over
// every target position.
func runGolden(t *testing.T, fx goldenFixture, values map[string]string) (logits []float32, loss float64) {
	t.Helper()
	cfg, err := ParseConfig(values)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tokens := fx.tensors["tokens"]
	batch, n := tokens.dims[0], cfg.SeqLen
	inputs := make([]int32, 0, batch*n)
	var targets []int32
	targetLen := n - m.LossStart()
	for b := range batch {
		row := tokens.ints[b*(n+1) : (b+1)*(n+1)]
		inputs = append(inputs, row[:n]...)
		targets = append(targets, row[n+1-targetLen:]...)
	}
	loader := &goldenLoader{values: goldenValues(t, fx), served: map[string]bool{}}
	store := model.NewStore()
	store.SetLoader(loader)
	exec := model.MustNewExec(testBackend(t), store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		return m.Logits(scope, tokens)
	})
	out := tensors.MustCopyFlatData[float32](exec.MustCall1(tensors.FromFlatDataAndDimensions(inputs, batch, n)))
	for v := range store.IterVariables() {
		if v.Trainable && !loader.served[v.Path()] {
			t.Fatalf("variable %s has no value in the fixture", v.Path())
		}
	}
	vocab := cfg.Vocab
	positions := fx.tensors["logit_positions"].ints
	for b := range batch {
		for _, p := range positions {
			at := (b*targetLen + int(p)) * vocab
			logits = append(logits, out[at:at+vocab]...)
		}
	}
	for i, target := range targets {
		row := out[i*vocab : (i+1)*vocab]
		top := row[0]
		for _, v := range row {
			top = max(top, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - top))
		}
		loss += math.Log(sum) + float64(top) - float64(row[target])
	}
	return logits, loss / float64(len(targets))
}

func goldenFiles(t *testing.T) []string {
	files, err := filepath.Glob("testdata/golden/*.safetensors.gz")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden fixtures in testdata/golden (%v)", err)
	}
	return files
}

// TestGoldenFixtures: ecpi's ECP, PerceiverAR, Double, Compressed and s-Split
// give the authors' logits and loss with the authors' weights.
func TestGoldenFixtures(t *testing.T) {
	families := map[string]bool{}
	for _, file := range goldenFiles(t) {
		fx := readSafetensors(t, file)
		families[fx.meta["family"]] = true
		t.Run(filepath.Base(file), func(t *testing.T) {
			logits, loss := runGolden(t, fx, goldenConfig(t, fx))
			want := fx.tensors["logits"].floats
			if len(logits) != len(want) {
				t.Fatalf("%d logits, the fixture has %d", len(logits), len(want))
			}
			var worst float64
			for i := range want {
				worst = max(worst, math.Abs(float64(logits[i]-want[i])))
			}
			wantLoss, _ := strconv.ParseFloat(fx.meta["loss"], 64)
			t.Logf("max |Δlogit| %.2g, |Δloss| %.2g", worst, math.Abs(loss-wantLoss))
			if worst > 1e-4 {
				t.Errorf("max |Δlogit| = %g > 1e-4", worst)
			}
			if math.Abs(loss-wantLoss) > 1e-5 {
				t.Errorf("loss %.7f, the authors' %.7f (|Δ| > 1e-5)", loss, wantLoss)
			}
		})
	}
	for _, family := range []string{"ecp", "perceiverar", "double", "compressed", "ssplit"} {
		if !families[family] {
			t.Errorf("no golden fixture for %s", family)
		}
	}
}

// TestGoldenFixturesCanFail: the same weights with another half-segment must
// not match, so the comparison above is able to fail.
func TestGoldenFixturesCanFail(t *testing.T) {
	fx := readSafetensors(t, "testdata/golden/ecp_d32h2.safetensors.gz")
	values := goldenConfig(t, fx)
	values["half_segment"] = "32" // the authors' fixture has 16
	logits, _ := runGolden(t, fx, values)
	var worst float64
	for i, want := range fx.tensors["logits"].floats {
		worst = max(worst, math.Abs(float64(logits[i]-want)))
	}
	if worst < 0.1 {
		t.Errorf("with half_segment=32 instead of 16 the logits still match (max |Δ| %g)", worst)
	}
}
