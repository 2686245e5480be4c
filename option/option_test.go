package option

import (
	"errors"
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
	if got := infos[5].Described(); got != "name (also: title)" {
		t.Errorf("name described as %q, want its help and its alias", got)
	}
	if got := infos[0].Described(); got != "steps" {
		t.Errorf("steps described as %q, want its help alone", got)
	}
}

type outer struct {
	Inner  sample
	Words  []string
	Seed   uint64
	Engine string
}

// TestCommandFieldsCheckLikeTheRest: lists, seeds, extra checks and lifted
// tables refuse with the option's name, and suggestions are asked for late.
func TestCommandFieldsCheckLikeTheRest(t *testing.T) {
	asked := 0
	outerTable := append(Within(table, func(o *outer) *sample { return &o.Inner }),
		List("words", "words", []string{"x", "y"}, func(o *outer) *[]string { return &o.Words }),
		Uint64("seed", "seed", func(o *outer) *uint64 { return &o.Seed }),
		Text("engine", "engine", func(o *outer) *string { return &o.Engine }).
			Checking(func(v string) error {
				if v == "steam" {
					return errors.New("no steam engines")
				}
				return nil
			}).
			Suggesting(func() []string { asked++; return []string{"diesel"} }),
	)
	bad := map[string]string{
		"words=x,z":    `option words=: unknown value "z"; choose from x, y`,
		"words=x,x":    `option words= lists "x" twice`,
		"seed=-1":      "option seed=-1 must be at least 0",
		"engine=steam": "no steam engines",
		"steps=0":      "option steps=0 must be at least 1",
	}
	for input, want := range bad {
		name, value, _ := strings.Cut(input, "=")
		var o outer
		if err := outerTable.Set(&o, name, value); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", input, err, want)
		}
	}
	var o outer
	for _, input := range []string{"words=y,x", "seed=7", "engine=diesel", "steps=9"} {
		name, value, _ := strings.Cut(input, "=")
		if err := outerTable.Set(&o, name, value); err != nil {
			t.Errorf("%s: %v", input, err)
		}
	}
	if o.Inner.Steps != 9 || o.Seed != 7 || outerTable.Get(o, "words") != "y,x" || o.Engine != "diesel" {
		t.Errorf("set %+v", o)
	}
	infos := outerTable.Infos(o)
	if asked != 0 {
		t.Errorf("suggestions asked for %d times before completion wanted them", asked)
	}
	engine := infos[len(infos)-1]
	if got := engine.Suggestions(); len(got) != 1 || got[0] != "diesel" || asked != 1 {
		t.Errorf("engine suggestions %v (asked %d times), want [diesel] once", got, asked)
	}
	if got := infos[len(table)].Suggestions(); len(got) != 2 {
		t.Errorf("words suggestions %v, want its closed set", got)
	}
}
