#!/usr/bin/env bash
# Finds or makes the Python environment of `make bench-peer` and prints its python.
# Reuses, in order, $ECPI_PEER_VENV, $ECPI_HOME/venv-peer and $ECPI_HOME/venv-torch (the golden
# fixtures' environment, tests/reference) if its packages match requirements.txt; otherwise
# creates $ECPI_PEER_VENV (default $ECPI_HOME/venv-peer) and installs requirements.txt from PyPI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
req="${ECPI_PEER_REQUIREMENTS:-$here/requirements.txt}"
home="${ECPI_HOME:-$HOME/.ecpi}"

# satisfied PYTHON: every `name==version` of requirements.txt is installed at that version.
satisfied() {
  "$1" - "$req" <<'PY' >/dev/null 2>&1
import importlib.metadata as md, sys
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, _, want = line.partition("==")
        have = md.version(name).split("+")[0]
        if want and have != want:
            sys.exit(f"{name} {have}, want {want}")
PY
}

for venv in "${ECPI_PEER_VENV:-}" "$home/venv-peer" "$home/venv-torch"; do
  if [ -n "$venv" ] && [ -x "$venv/bin/python" ] && satisfied "$venv/bin/python"; then
    echo "$venv/bin/python"
    exit 0
  fi
done
venv="${ECPI_PEER_VENV:-$home/venv-peer}"
echo "bench-peer: installing $(grep -v '^#' "$req" | xargs) into $venv from PyPI (PyTorch is a 1–3 GB download)" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --disable-pip-version-check -r "$req" >&2
satisfied "$venv/bin/python" || { echo "bench-peer: $venv does not match $req after installing" >&2; exit 1; }
echo "$venv/bin/python"
