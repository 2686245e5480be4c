# Sourced by the Makefile, .ci/run and every script: the toolchain settings ecpi needs.
# GoMLX v0.28.16 needs Go 1.27; the machine's go.env pins GOTOOLCHAIN=local, so ask for it by name
# (the go command fetches it from the module proxy once per machine).
export GOTOOLCHAIN=go1.27.3
# GoMLX's pure-Go backend uses AVX-512/AVX2 kernels only when built with the simd experiment.
export GOEXPERIMENT=simd
# GoMLX would otherwise try to download its XLA plugin from GitHub at start-up; ecpi/xla decides instead.
export GOMLX_NO_AUTO_INSTALL=1
# Where ecpi keeps data, plugins and checkpoints unless told otherwise.
export ECPI_HOME="${ECPI_HOME:-$HOME/.ecpi}"
export PATH="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin:/usr/local/go/bin:$PATH"
