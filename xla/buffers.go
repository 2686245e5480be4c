//go:build linux && cgo

package xla

// #include <stdint.h>
// void ecpiBufferCounts(int64_t *mapped, int64_t *reused);
// int ecpiBuffersKept(void);
import "C"

// XLA's CPU runtime allocates its large buffers anew for every execution (a training step, one
// attention layer's forward and backward), and the kernel zeroed every page of them on first
// touch each time: 22 % of a training step of the larger `bench train` model on an Intel Xeon
// VM went to clear_page, about 3,400 page faults per step. buffers.c keeps those blocks mapped
// between executions and hands them out again; the faults drop to under 200 per step.

// BufferCounts reports how many large blocks this process has mapped for XLA's buffers and how
// many requests reused an idle one instead of mapping again.
func BufferCounts() (mapped, reused int64) {
	var m, r C.int64_t
	C.ecpiBufferCounts(&m, &r)
	return int64(m), int64(r)
}

// bufferReuse says, for `ecpi doctor`, whether XLA's large buffers are kept between executions.
func bufferReuse() string {
	if C.ecpiBuffersKept() == 0 {
		return "XLA's buffers of 32 MB and more mapped anew for every execution (ECPI_XLA_BUFFERS=fresh)"
	}
	return "XLA's buffers of 32 MB and more kept between executions (ECPI_XLA_BUFFERS=fresh turns this off)"
}
