#!/usr/bin/env bash
# Installs the "ecpi (Go)" Jupyter kernel (`make kernel`, part of `make setup`). Idempotent.
#  1. Debian's Jupyter (client, nbclient, nbconvert, jupyter_kernel_test) in /usr/bin/python3, if missing.
#  2. GoNB v0.11.5, goimports and gopls, at the exact versions of kernel/tools/go.mod, into
#     $ECPI_HOME/kernel/bin (rebuilt only when go.mod changes).
#  3. `gonb --install` into a staging folder, rewritten by kernel/install (name, environment with the
#     toolchain settings and backend, -go_work=<this repository> so notebooks import ecpi offline),
#     then `jupyter kernelspec install --user --name ecpi`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
source scripts/env.sh

# 1. Jupyter from Debian (the packages install into /usr/bin/python3).
if ! /usr/bin/python3 -c 'import nbclient, jupyter_client, nbformat, jupyter_kernel_test' 2>/dev/null; then
  echo "setup-kernel: installing Debian's Jupyter packages"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() {
    apt-get install -y -qq --no-install-recommends jupyter-client jupyter-core python3-nbclient \
      python3-nbconvert python3-nbformat python3-ipykernel jupyter-nbconvert python3-jupyter-kernel-test >/dev/null
  }
  apt_install || { apt-get update -qq && apt_install; }
fi

# 2. GoNB and its helpers, pinned.
bin="$ECPI_HOME/kernel/bin"
stamp="$bin/.go.mod.sha256"
want=$(sha256sum kernel/tools/go.mod kernel/tools/go.sum | sha256sum | cut -d' ' -f1)
if [ ! -x "$bin/gonb" ] || [ ! -x "$bin/goimports" ] || [ ! -x "$bin/gopls" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup-kernel: building GoNB, goimports and gopls (kernel/tools/go.mod) into $bin"
  mkdir -p "$bin"
  (cd kernel/tools && go build -o "$bin/" tool)
  echo "$want" >"$stamp"
fi
"$bin/gonb" -version 2>&1 | grep -m1 -i 'version' || true

# 3. The kernelspec.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
PATH="$bin:$PATH" JUPYTER_DATA_DIR="$stage" "$bin/gonb" --install >/dev/null 2>&1 ||
  { echo "setup-kernel: gonb --install failed" >&2; PATH="$bin:$PATH" JUPYTER_DATA_DIR="$stage" "$bin/gonb" --install; exit 1; }
# The backend the kernel uses: $ECPI_KERNEL_BACKEND if given, else XLA's CPU plugin when it is installed
# (cells talk to one session server per kernel, which keeps compiled executables from cell to cell, so
# XLA's compile time is paid once per graph), else GoMLX's pure-Go backend with SIMD.
if [ -n "${ECPI_KERNEL_BACKEND:-}" ]; then
  backend=$ECPI_KERNEL_BACKEND
elif [ -f "$ECPI_HOME/xla/pjrt_c_api_cpu_plugin.so" ]; then
  backend="xla:$ECPI_HOME/xla/pjrt_c_api_cpu_plugin.so"
else
  backend=go
fi
go_bin=$(dirname "$(command -v go)")
go run ./kernel/install -spec "$stage/kernels/gonb" -repo "$repo" -gonb "$bin/gonb" -path "$bin:$go_bin" \
  -env GOTOOLCHAIN="$GOTOOLCHAIN" -env GOEXPERIMENT="$GOEXPERIMENT" -env GOMLX_NO_AUTO_INSTALL=1 \
  -env ECPI_HOME="$ECPI_HOME" -env GOMLX_BACKEND="$backend" -env ECPI_BIN="$repo/bin/ecpi" -env ECPI_REPO="$repo"
/usr/bin/python3 -m jupyter_client.kernelspecapp install --user --replace --name ecpi "$stage/kernels/gonb" 2>&1 | tail -1
echo "setup-kernel: kernel \"ecpi (Go)\" installed (backend $backend, notebooks use $repo through go.work)"
