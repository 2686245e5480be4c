package repl

import (
	"testing"

	"github.com/ecpi-dev/ecpi/train"
)

func TestCompareOptionsPerFamily(t *testing.T) {
	s := NewSession()
	s.Set(map[string]string{"layers": "1", "n": "64"})
	cmd, _ := Lookup("compare")
	inv, err := Parse([]string{"compare", "models=ecp,pi", "window=8", "steps=3"})
	if err != nil {
		t.Fatal(err)
	}
	c := &Call{Command: cmd, Session: s, given: inv.Options}
	ecp, pi := compareValues(c, "ecp"), compareValues(c, "pi")
	if _, ok := ecp["window"]; ok {
		t.Errorf("window reached ecp: %v", ecp)
	}
	if pi["window"] != "8" || pi["layers"] != "1" || pi["steps"] != "3" || pi["model"] != "pi" {
		t.Errorf("pi values %v", pi)
	}
	if _, err := train.ParseOptions(ecp); err != nil {
		t.Errorf("train rejects compare's ecp options: %v", err)
	}
}
