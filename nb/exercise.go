package nb

import (
	"fmt"
	"os"
)

// Gap stops an exercise cell with a friendly note until the participant has
// filled in the gap marked TODO: filled is the cell's own check that they
// have, gap says what is missing. The kernel and the session stay.
func Gap(filled bool, gap string) {
	if filled {
		return
	}
	fmt.Fprintf(os.Stderr, "✋ not yet: %s. Fill in the gap marked TODO in this cell, then run it again.\n", gap)
	os.Exit(1)
}
