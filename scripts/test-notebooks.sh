#!/usr/bin/env bash
# Executes every notebook headless in quick mode (ECPI_QUICK=1) through the installed "ecpi (Go)" kernel with
# nbclient, checks their figures and tables, and runs jupyter_kernel_test against the kernel
# (tests/notebooks_test.py). Needs `make kernel` first. ECPI_NOTEBOOKS=00-tour,06-efficiency runs some only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
if ! /usr/bin/python3 -m jupyter_client.kernelspecapp list 2>/dev/null | grep -w ecpi > /dev/null; then  # not -q: with pipefail, an early exit of grep fails the pipe
  echo "test-notebooks: the ecpi kernel is not installed; run \`make kernel\`" >&2
  exit 1
fi
export ECPI_QUICK=1
# Run alone (make test-notebooks), the notebooks still get a fresh run cache and session folder: a run
# cached from older code would otherwise be replayed instead of trained (scripts/test.sh says more).
if [ -z "${ECPI_RUNS:-}" ]; then
  test_state=$(mktemp -d)
  trap 'rm -rf "$test_state"' EXIT
  export ECPI_RUNS="$test_state/runs" ECPI_SESSIONS="$test_state/sessions"
fi
# GoNB logs every step to the kernel's stderr; keep the test summary readable.
/usr/bin/python3 -m unittest -v tests/notebooks_test.py 2> >(grep -v -E '^[IWE][0-9]{4} |^\s+/root/go/pkg/mod/|^goroutine |^github.com/janpfeifer|^main\.' >&2)
