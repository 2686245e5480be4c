#!/usr/bin/env bash
# Runs the models tests on every backend available here: GoMLX's pure-Go backend always, and the XLA
# CPU plugin when it is installed (scripts/setup-xla.sh). The models tests open the backend named by
# GOMLX_BACKEND, so one run per backend compares both against the same dense references.
# Extra arguments go to `go test` (e.g. -short, -run Pattern).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

plugin="$ECPI_HOME/xla/pjrt_c_api_cpu_plugin.so"
backends=("go")
if [ -f "$plugin" ]; then
  backends+=("xla:$plugin")
else
  echo "test-models-backends: no XLA CPU plugin at $plugin (run make xla-plugin); testing the Go backend only" >&2
fi

status=0
for backend in "${backends[@]}"; do
  echo "== go test ./models/ with GOMLX_BACKEND=$backend"
  GOMLX_BACKEND="$backend" go test -count=1 "$@" ./models/ || status=1
done
exit $status
