package train

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ecpi-dev/ecpi/models"
)

// What a resumed run may change: the options of its checkpoint, as this
// machine runs them, with the overrides resume was given.

// savedOptions are a checkpoint's options on this machine: its ECPI_HOME,
// and one device for checkpoints saved before devices= existed.
func savedOptions(m *Manifest) Options {
	o := m.Options
	o.Home = DefaultOptions().Home
	o.Devices = max(o.Devices, 1)
	o.Precision = cmp.Or(o.Precision, "float32") // saved before precision= existed
	o.Parallel = cmp.Or(o.Parallel, "data")      // saved before parallel= existed
	return o
}

// resumable are the options a resumed run may change.
var resumable = []string{"steps", "eval_every", "eval_batches", "protocol", "keep", "backend", "devices", "parallel"}

// Resumable reports whether a resumed run may change option name; any other
// option given to Resume must repeat the run's value.
func Resumable(name string) bool { return slices.Contains(resumable, name) }

// checkOverride applies an option given to resume: a resumable one changes
// the run, any other must repeat what the run was saved with.
func checkOverride(o *Options, m *Manifest, name, value string) error {
	if slices.Contains(resumable, name) {
		if err := optionTable.Set(o, name, value); err != nil {
			return err
		}
		return o.Validate()
	}
	if name == "model" && value != m.Family {
		return fmt.Errorf("it is a %s model, not %s", m.Family, value)
	}
	saved := o.Get(name)
	if !IsOption(name) {
		if !models.IsOption(name) {
			return fmt.Errorf("unknown option %q", name)
		}
		if !m.Config.Family().Reads(name) {
			return fmt.Errorf("option %s does not apply to its model %s", name, m.Family)
		}
		saved = m.Config.Get(name)
	}
	if name != "model" && saved != value {
		return fmt.Errorf("resume cannot change %s (saved with %s=%s); start a new run instead", name, name, saved)
	}
	return nil
}
