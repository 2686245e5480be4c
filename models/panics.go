package models

import "fmt"

// RaiseAsError is deferred at the top of every graph function ecpi hands to
// GoMLX. While building a graph, GoMLX v0.28.16's Exec turns a panic into an
// error only when the panic's value is an error: any other value (a string, a
// family's own check) escapes it and leaves the compilation pending for good,
// so that Exec.Finalize, and every later call of the same shapes, waits on it
// at 0 % CPU. RaiseAsError raises such a value again as an error, which the
// Exec returns to its caller.
func RaiseAsError() {
	if r := recover(); r != nil {
		if err, ok := r.(error); ok {
			panic(err)
		}
		panic(fmt.Errorf("%v", r))
	}
}
