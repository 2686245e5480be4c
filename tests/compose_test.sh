#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine: `config -q` with docker-compose (1.29) and, where it is
# installed, the Docker Compose v2 plugin; then checks what the workshop relies on in the resolved file.
# Also checks that `make docker` explains a missing engine and a proxy certificate error in one line.
# Needs (Debian): docker-compose (brings python3-yaml). Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# check NAME COMMAND...: runs the command, counts it.
check() {
  local name=$1 out
  shift
  if out="$("$@" 2>&1)"; then pass "$name"; else fail "$name"; printf '%s\n' "$out" | tail -5; fi
}

# expect COMPOSE_CMD PYTHON_ASSERTION [ENV=VALUE...]: the resolved config (gpu profile on) satisfies the assertion,
# written over `s` (the services) and the helpers below, which read both compose 1.29's and v2's output forms.
expect() {
  local cmd=$1 assertion=$2
  shift 2
  env "$@" $cmd --profile gpu config 2> /dev/null | /usr/bin/python3 -c '
import sys, yaml

def published_on_localhost(ports, port):
    for p in ports:
        if isinstance(p, dict):
            if p.get("host_ip") == "127.0.0.1" and str(p.get("published")) == port and str(p["target"]) == port:
                return True
        elif p.split("/")[0] == f"127.0.0.1:{port}:{port}":
            return True
    return False

def mounts(volumes, source_dir, target):
    for v in volumes:
        src, dst = (v["source"], v["target"]) if isinstance(v, dict) else v.split(":")[:2]
        if src.rstrip("/").endswith("/" + source_dir) and dst == target:
            return True
    return False

s = yaml.safe_load(sys.stdin)["services"]
if not eval("(" + sys.argv[1] + ")"):
    sys.exit("not true: " + sys.argv[1])
' "$assertion"
}

run_for() {
  local cmd=$1 tag=$2
  check "$tag: config -q" $cmd config -q
  check "$tag: config -q --profile gpu" $cmd --profile gpu config -q
  check "$tag: jupyter publishes 8888 on localhost only" expect "$cmd" \
    "published_on_localhost(s['jupyter']['ports'], '8888')"
  check "$tag: notebooks folder is mounted" expect "$cmd" \
    "mounts(s['jupyter']['volumes'], 'notebooks', '/opt/ecpi/src/notebooks')"
  check "$tag: token defaults to ecpi" expect "$cmd" "s['jupyter']['environment']['JUPYTER_TOKEN'] == 'ecpi'"
  check "$tag: token is set by JUPYTER_TOKEN" expect "$cmd" \
    "s['jupyter']['environment']['JUPYTER_TOKEN'] == 'workshop42'" JUPYTER_TOKEN=workshop42
  check "$tag: BASE_IMAGE reaches the build" expect "$cmd" \
    "s['jupyter']['build']['args']['BASE_IMAGE'] == 'ecpi-base:bookworm'" BASE_IMAGE=ecpi-base:bookworm
  check "$tag: gpu service only under the gpu profile" expect "$cmd" \
    "s['jupyter-gpu']['profiles'] == ['gpu'] and 'profiles' not in s['jupyter']"
  check "$tag: gpu service selects xla:cuda and builds with ECPI_GPU=1" expect "$cmd" \
    "s['jupyter-gpu']['environment']['GOMLX_BACKEND'] == 'xla:cuda' and
     str(s['jupyter-gpu']['build']['args']['ECPI_GPU']) == '1'"
  check "$tag: gpu service reserves NVIDIA GPUs" expect "$cmd" \
    "s['jupyter-gpu']['deploy']['resources']['reservations']['devices'][0]['driver'] == 'nvidia'"
}

if command -v docker-compose > /dev/null; then
  run_for docker-compose docker-compose
else
  echo "skip docker-compose is not installed (apt-get install docker-compose)"
  skipped=$((skipped + 1))
fi
if docker compose version > /dev/null 2>&1; then
  run_for "docker compose" "docker compose"
else
  echo "skip the docker compose v2 plugin is not installed"
  skipped=$((skipped + 1))
fi

# `docker compose exec jupyter ecpi` opens the REPL: the final stage copies docker/ecpi onto the PATH, and docker/ecpi
# runs $ECPI_SRC/bin/ecpi with its arguments and scripts/env.sh's environment (checked on a stand-in binary).
ecpi_on_path() {
  awk '/^FROM /{final = ""} {final = final $0 "\n"} END {printf "%s", final}' Dockerfile |
    grep -qx 'COPY docker/ecpi /usr/local/bin/ecpi' && [ -x docker/ecpi ]
}
ecpi_wrapper_runs_the_binary() {
  local src out want
  want="$(env -u GOEXPERIMENT -u GOMLX_NO_AUTO_INSTALL bash -c 'source scripts/env.sh && echo "$GOEXPERIMENT|$GOMLX_NO_AUTO_INSTALL"')|models --json"
  src=$(mktemp -d) && mkdir -p "$src/scripts" "$src/bin" && cp scripts/env.sh "$src/scripts/" &&
    printf '#!/bin/sh\necho "$GOEXPERIMENT|$GOMLX_NO_AUTO_INSTALL|$*"\n' > "$src/bin/ecpi" && chmod +x "$src/bin/ecpi" &&
    out=$(env -u GOEXPERIMENT -u GOMLX_NO_AUTO_INSTALL ECPI_SRC="$src" docker/ecpi models --json)
  rm -rf "$src"
  [ "$out" = "$want" ] || { echo "docker/ecpi ran: $out; want $want"; return 1; }
}
check "the image puts docker/ecpi on the PATH as ecpi" ecpi_on_path
check "docker/ecpi runs bin/ecpi with scripts/env.sh's environment" ecpi_wrapper_runs_the_binary

# make docker explains what stops it in one line with the fix; neither check needs an engine.
explains() {
  local want=$1 out
  shift
  if out="$("$@" 2>&1)"; then echo "it succeeded; a failure was expected"; return 1; fi
  printf '%s\n' "$out" | grep -q -- "$want" && return
  printf '%s\n' "$out" | tail -3
  return 1
}
if command -v docker > /dev/null; then
  check "make docker without an engine says how to start one" \
    explains "FAILED: no Docker engine answers at unix:///nonexistent.sock: start it" \
    env DOCKER_HOST=unix:///nonexistent.sock bash scripts/docker.sh
fi
check "a build log with a proxy's certificate error is explained with the CA fix" explains "put its CA" \
  bash -c 'source scripts/docker-lib.sh && explain_build_failure <(echo "x509: certificate signed by unknown authority") && false'

echo "compose: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
