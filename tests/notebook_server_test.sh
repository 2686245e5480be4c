#!/usr/bin/env bash
# `make notebook` end to end, cheaply: scripts/notebook.sh on a free port with a known token must serve the
# "ecpi (Go)" kernelspec and the notebooks folder to that token only; then it is stopped by its PID.
# Needs the kernel (`make kernel`); installs the Jupyter server if missing, as `make notebook` does.
set -uo pipefail
cd "$(dirname "$0")/.."
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token="test-$$-$RANDOM"
log=$(mktemp)
ECPI_NOTEBOOK_PORT=$port JUPYTER_TOKEN=$token bash scripts/notebook.sh > "$log" 2>&1 &
pid=$!
stop() {
  kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
  rm -f "$log"
}
trap stop EXIT
fail() { echo "FAIL $*"; tail -20 "$log"; exit 1; }

api() { curl -fsS -H "Authorization: token $token" "http://127.0.0.1:$port$1"; }
for _ in $(seq 120); do
  api /api/status > /dev/null 2>&1 && break
  kill -0 "$pid" 2> /dev/null || fail "scripts/notebook.sh exited before serving"
  sleep 1
done
grep -q "http://127.0.0.1:$port/.*token=$token" "$log" || fail "the URL with port $port and the token is not printed"
api /api/kernelspecs | /usr/bin/python3 -c '
import json, sys
specs = json.load(sys.stdin)["kernelspecs"]
sys.exit(0 if specs.get("ecpi", {}).get("spec", {}).get("display_name") == "ecpi (Go)" else "no ecpi kernelspec: %s" % list(specs))' ||
  fail "/api/kernelspecs"
api /api/contents | grep -q '"name": *"00-tour.ipynb"' || fail "the server does not open in notebooks/"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/kernelspecs")" = 403 ] ||
  fail "the server answers without the token"
echo "ok   make notebook serves the ecpi kernel and notebooks/ on 127.0.0.1:$port with its token"
