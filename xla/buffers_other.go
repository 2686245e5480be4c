//go:build !(linux && cgo)

package xla

// BufferCounts is 0, 0 where buffers.c is not built: XLA's buffers come from malloc.
func BufferCounts() (mapped, reused int64) { return 0, 0 }

func bufferReuse() string {
	return "XLA's buffers from malloc (keeping them between executions needs Linux and cgo)"
}
