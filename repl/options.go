package repl

import (
	"slices"

	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/option"
)

// Option is one key=value option of a command as the parser, help and
// completion see it: a field of a typed option table (package option), the
// one way model families, training, datasets and commands declare options.
type Option = option.Info

// Options are a command's own options: the typed table its Run reads them
// into, with their defaults.
type Options[S any] struct {
	Table    option.Table[S]
	Defaults S
}

// Declare lists the options for Command.Options.
func (o Options[S]) Declare() []Option { return o.Table.Infos(o.Defaults) }

// Only keeps the named options, for commands that share a table.
func (o Options[S]) Only(names ...string) Options[S] {
	var kept option.Table[S]
	for _, f := range o.Table {
		if slices.Contains(names, f.Name) {
			kept = append(kept, f)
		}
	}
	return Options[S]{Table: kept, Defaults: o.Defaults}
}

// Read gives the call's values: the defaults, then what the session set, then
// what was typed on the call, each checked by its field.
func (o Options[S]) Read(c *Call) (S, error) {
	values := o.Defaults
	for _, f := range o.Table {
		if !c.Has(f.Name) {
			continue
		}
		if err := f.Set(&values, c.String(f.Name)); err != nil {
			return values, Usagef("%v", err)
		}
	}
	return values, nil
}

// checkpointField is the checkpoint (or run folder) a command opens; empty,
// the session's.
func checkpointField[S any](field func(*S) *string) option.Field[S] {
	return option.Text("checkpoint", "checkpoint or run folder (default: the session's, set by train)", field)
}

// familyFilterField refuses a checkpoint of another family (eval, sample, probes).
func familyFilterField[S any](field func(*S) *string) option.Field[S] {
	return option.Choice("model", "refuse the checkpoint unless it is of this family", models.FamilyNames(), field)
}
