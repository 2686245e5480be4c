package option

import (
	"strings"
	"testing"
)

type sample struct {
	Steps int
	LR    float64
	Kind  string
	On    bool
	Sizes []int
	Name  string
}

var table = Table[sample]{
	Int("steps", "steps", func(s *sample) *int { return &s.Steps }, AtLeast(1), AtMost(100)),
	Float("lr", "learning rate", func(s *sample) *float64 { return &s.LR }, Positive[float64]()),
	Choice("kind", "kind", []string{"a", "b"}, func(s *sample) *string { return &s.Kind }),
	Bool("on", "switch", func(s *sample) *bool { return &s.On }),
	Ints("sizes", "sizes", func(s *sample) *[]int { return &s.Sizes }, AtLeast(2)),
	Text("name", "name", func(s *sample) *string { return &s.Name }, NotEmpty()).Alias("title"),
}

// TestEveryValueIsCheckedWhereItIsSet: each kind and rule refuses what breaks
// it with the option's name and the rule, and accepts what keeps it.
func TestEveryValueIsCheckedWhereItIsSet(t *testing.T) {
	bad := map[string]string{
		"steps=abc": `option steps="abc" must be an integer`,
		"steps=0":   "option steps=0 must be at least 1",
		"steps=101": "option steps=101 must be at most 100",
		"lr=nan":    `option lr="nan" must be a finite number`,
		"lr=-inf":   `option lr="-inf" must be a finite number`,
		"lr=0":      "option lr=0 must be positive",
		"kind=c":    `option kind="c" must be one of: a, b`,
		"on=maybe":  `option on="maybe" must be true or false`,
		"sizes=":    `option sizes="" must list at least one integer`,
		"sizes=4,1": "option sizes=1 must be at least 2",
		"title= ":   `option name=" " must not be empty`,
		"color=red": `unknown option "color"`,
	}
	for input, want := range bad {
		name, value, _ := strings.Cut(input, "=")
		var s sample
		if err := table.Set(&s, name, value); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", input, err, want)
		}
	}
	var s sample
	for _, input := range []string{"steps=3", "lr=2e-3", "kind=b", "on=yes", "sizes=2, 8", "title=x"} {
		name, value, _ := strings.Cut(input, "=")
		if err := table.Set(&s, name, value); err != nil {
			t.Errorf("%s: %v", input, err)
		}
	}
	want := sample{Steps: 3, LR: 2e-3, Kind: "b", On: true, Sizes: []int{2, 8}, Name: "x"}
	if got := table.Get(s, "sizes") + " " + table.Get(s, "title"); got != "2,8 x" || s.Steps != want.Steps || s.LR != want.LR || !s.On {
		t.Errorf("set %+v (sizes,title %q), want %+v", s, got, want)
	}
}

func TestInfoChecksWithoutAStruct(t *testing.T) {
	infos := table.Infos(sample{Steps: 5})
	if infos[0].Default != "5" || infos[0].Check("0") == nil || infos[0].Check("7") != nil {
		t.Errorf("steps info %+v: want default 5, 0 refused, 7 accepted", infos[0])
	}
	if !infos[5].Matches("title") || infos[5].Matches("names") {
		t.Errorf("name info matches the wrong names: %+v", infos[5])
	}
}
