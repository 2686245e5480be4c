package repl

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/option"
)

func init() {
	Register(&Command{
		Name:    "data list",
		Summary: "list the corpora and image sets, what each stands in for and whether it is prepared",
		Details: "Text corpora are cleaned stand-ins for WikiText-103 and PG-19 taken from Debian packages;\n" +
			"wiki and books combine them. For text, bytes is also the token count with tokenizer=byte.",
		Run: runDataList,
	})
	Register(&Command{
		Name:    "data prepare",
		Summary: "install and clean a corpus or image set into $ECPI_HOME/data (NAME or all)",
		Args:    "NAME|all",
		Details: "Downloads the source Debian package without installing it (apt-get download + dpkg-deb -x),\n" +
			"cleans the text and writes train/valid/test splits. Already prepared data is left alone.\n" +
			"all prepares every corpus, mnist and fashion-mnist (cifar10 needs internet: name it explicitly).",
		Run: runDataPrepare,
	})
	Register(&Command{
		Name:    "data baselines",
		Summary: "the trivial baselines of a corpus: n-gram models' bits per byte (and per token) on its validation split",
		Args:    "NAME",
		Details: "Models of orders 1 to 4 (unigram: byte frequencies alone; bigram: the previous byte; ...) with\n" +
			"add-½ smoothing, counted on the train split. A language model that does not beat the bigram does\n" +
			"not use its context yet. With tokenizer= the models are interpolated modified Kneser-Ney over\n" +
			"that tokenizer's tokens (wordpiece: the corpus's own vocabulary), the floor of a token-level model,\n" +
			"in bits per token and per byte of text. Computed once per corpus and kept beside it.",
		Options: dataBaselinesOptions.Declare(),
		Run:     runDataBaselines,
	})
	Register(&Command{
		Name:    "data show",
		Summary: "show a few examples of a corpus, image set or generated task as a model sees them",
		Args:    "NAME",
		Details: "NAME is any data train reads (`ecpi train --help` lists them): corpora show excerpts of their\n" +
			"validation split, image sets test images and their labels, generated tasks a few examples with\n" +
			"their answers. In a notebook images are pictures; at the prompt, characters.",
		Options: dataShowOptions.Declare(),
		Run:     runDataShow,
	})
}

// BaselinesReport is `data baselines`.
type BaselinesReport struct{ data.Baselines }

func (r BaselinesReport) Text() string {
	return fmt.Sprintf("%s, bits per byte on valid: unigram %.3f, bigram %.3f, trigram %.3f, 4-gram %.3f",
		r.Corpus, r.Bits[0], r.Bits[1], r.Bits[2], r.Bits[3])
}

// FloorsReport is `data baselines NAME tokenizer=...`.
type FloorsReport struct{ data.TokenFloors }

func (r FloorsReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, Kneser-Ney on valid (%d %s tokens of a %d-token vocabulary, %d bytes, %.2f bytes a token):\n",
		r.Corpus, r.ValidTokens, r.Tokenizer, r.Vocab, r.ValidBytes, float64(r.ValidBytes)/float64(r.ValidTokens))
	fmt.Fprintf(&b, "%-8s %10s %10s\n", "order", "bits/token", "bits/byte")
	for i := range r.BitsPerToken {
		fmt.Fprintf(&b, "%-8d %10.3f %10.3f\n", i+1, r.BitsPerToken[i], r.BitsPerByte[i])
	}
	return b.String()
}

type dataBaselinesArgs struct{ Tokenizer string }

var dataBaselinesOptions = Options[dataBaselinesArgs]{
	Table: option.Table[dataBaselinesArgs]{
		option.OptionalChoice("tokenizer", "Kneser-Ney floors over this tokenizer's tokens (unset: byte add-½ baselines)", data.TokenizerNames,
			func(a *dataBaselinesArgs) *string { return &a.Tokenizer }),
	},
}

func runDataBaselines(c *Call) error {
	if len(c.Args) != 1 || !slices.Contains(data.CorpusNames(), c.Args[0]) {
		return Usagef("data baselines takes one corpus: %s", strings.Join(data.CorpusNames(), ", "))
	}
	args, err := dataBaselinesOptions.Read(c)
	if err != nil {
		return err
	}
	if args.Tokenizer != "" {
		f, err := data.TokenBaselines(data.Home(), c.Args[0], args.Tokenizer)
		if err != nil {
			return err
		}
		return c.Emit(FloorsReport{f})
	}
	b, err := data.NgramBaselines(data.Home(), c.Args[0])
	if err != nil {
		return err
	}
	return c.Emit(BaselinesReport{b})
}

// DataList is what `ecpi data list --json` prints.
type DataList struct {
	Home     string            `json:"home"`
	Datasets []data.CorpusInfo `json:"datasets"`
}

// Text is the human-readable table.
func (l DataList) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-7s %-9s %12s  %s\n", "name", "kind", "prepared", "bytes", "stands in for")
	for _, d := range l.Datasets {
		prepared, size := "no", "-"
		if d.Prepared {
			prepared, size = "yes", fmt.Sprint(d.Bytes)
		}
		fmt.Fprintf(&b, "%-14s %-7s %-9s %12s  %s\n", d.Name, d.Kind, prepared, size, d.StandsFor)
	}
	fmt.Fprintf(&b, "data folder: %s (prepare with `ecpi data prepare NAME|all`)\n", l.Home)
	return b.String()
}

func runDataList(c *Call) error {
	home := data.Home()
	return c.Emit(DataList{Home: home, Datasets: append(data.Corpora(home), data.ImageSets(home)...)})
}

func runDataPrepare(c *Call) error {
	if len(c.Args) != 1 {
		return Usagef("data prepare takes one NAME or all (names: %s)", strings.Join(data.DatasetNames(), ", "))
	}
	names := []string{c.Args[0]}
	if c.Args[0] == "all" {
		names = data.OfflineDatasetNames()
	} else if !contains(data.DatasetNames(), c.Args[0]) {
		msg := fmt.Sprintf("unknown dataset %q (names: %s, or all)", c.Args[0], strings.Join(data.DatasetNames(), ", "))
		if near := Nearest(c.Args[0], data.DatasetNames()); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return Usagef("%s", msg)
	}
	// With --json stdout carries only the result; progress goes to stderr.
	var progress io.Writer = c.Out
	if c.JSON {
		progress = os.Stderr
	}
	home := data.Home()
	for _, n := range names {
		if err := c.Ctx.Err(); err != nil {
			return err
		}
		if err := data.Prepare(c.Ctx, home, n, progress); err != nil {
			return err
		}
	}
	if c.JSON {
		return c.Emit(DataList{Home: home, Datasets: append(data.Corpora(home), data.ImageSets(home)...)})
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
