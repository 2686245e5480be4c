//go:build goexperiment.simd

package xla

// SIMD reports whether this binary was built with GOEXPERIMENT=simd, which is what gives
// GoMLX's pure-Go backend its AVX-512/AVX2 kernels.
const SIMD = true
