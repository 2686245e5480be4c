# Sourced by the Makefile, .ci/run and every script: the toolchain settings ecpi needs.
# GoMLX v0.28.16 needs Go 1.27; the machine's go.env pins GOTOOLCHAIN=local, so ask for it by name
# (the go command fetches it from the module proxy once per machine).
export GOTOOLCHAIN=go1.27.3
# GoMLX's pure-Go backend uses AVX-512/AVX2 kernels only when built with the simd experiment.
# Go 1.27 puts the heap at a random address; under an address-space limit (ulimit -v, common on
# shared clusters) about one start in fifteen then dies allocating in package init, before ecpi can
# say anything (measured: 10 of 140 starts under ulimit -v 1500000, none of 220 without it).
export GOEXPERIMENT=simd,norandomizedheapbase64
# GoMLX would otherwise try to download its XLA plugin from GitHub at start-up; ecpi/xla decides instead.
export GOMLX_NO_AUTO_INSTALL=1
# Where ecpi keeps data, plugins and checkpoints unless told otherwise.
export ECPI_HOME="${ECPI_HOME:-$HOME/.ecpi}"
export PATH="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin:/usr/local/go/bin:$PATH"
