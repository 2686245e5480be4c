#!/usr/bin/env bash
# make docker-test: the compose route end to end, on a machine that reaches no container registry.
#  1. a Docker engine: the one DOCKER_HOST (or the default socket) answers, else a dockerd of our own with its
#     data in a temporary folder;
#  2. a Debian bookworm root made with debootstrap, imported as ecpi-base:bookworm (unless that image exists);
#  3. docker-compose.yml built with BASE_IMAGE=ecpi-base:bookworm and started;
#  4. the Jupyter server's /api/kernelspecs must list the "ecpi (Go)" kernel, a notebook written through the
#     server must appear in ./notebooks (the mount), `compose exec jupyter ecpi models` must run (ecpi on the PATH),
#     and notebooks/00-tour.ipynb must run through the kernel.
# Everything it started or created is removed on exit, success or failure; nothing else is touched.
# Settings: ECPI_COMPOSE ("docker-compose" or "docker compose"), ECPI_DEBIAN_MIRROR, ECPI_DOCKERD_FLAGS,
# ECPI_HOST_NETWORK=1 (no bridge: host networking for build and run), ECPI_CELL_TIMEOUT (seconds per cell),
# ECPI_QUICK (default 1: the notebooks' CI sizes), ECPI_DOCKER_TEST_KEEP_LOGS=1 (keep the logs on success too).
set -euo pipefail
cd "$(dirname "$0")/.."
run_id="ecpi-dockertest-$$"
image="ecpi:dockertest-$$"
base_image="ecpi-base:bookworm"
port=8888
token="dockertest-$$-$RANDOM$RANDOM"
tour="00-tour.ipynb"
work="$(mktemp -d /tmp/ecpi-docker-test.XXXXXX)"
started=$SECONDS
log_tag=docker-test
source scripts/docker-lib.sh

# What this run created, for cleanup (docker-lib.sh keeps imported_base and copied_cas).
own_dockerd_pid=""
compose_up=0
probe_notebook=""
made_checkpoints_dir=0

cleanup() {
  local rc=$?
  set +e
  exec 1>&3 2>&4 # a signal's trap runs inside the redirections of the command it interrupted
  if [ "$compose_up" = 1 ]; then
    [ "$rc" = 0 ] || compose logs --no-color --tail=200 > "$work/compose.log" 2>&1
    log "stopping the compose project $run_id"
    compose down --volumes --remove-orphans > "$work/down.log" 2>&1
  fi
  [ -n "$probe_notebook" ] && rm -f "notebooks/$probe_notebook"
  [ "$made_checkpoints_dir" = 1 ] && rmdir notebooks/.ipynb_checkpoints 2> /dev/null # only if still empty
  if [ -z "$own_dockerd_pid" ]; then
    # A shared engine: remove only the images this run made.
    docker image rm "$image" > /dev/null 2>&1
    [ "$imported_base" = 1 ] && docker image rm "$base_image" > /dev/null 2>&1
  else
    log "stopping dockerd (pid $own_dockerd_pid)"
    kill "$own_dockerd_pid" 2> /dev/null
    for _ in $(seq 60); do kill -0 "$own_dockerd_pid" 2> /dev/null || break; sleep 1; done
    kill -0 "$own_dockerd_pid" 2> /dev/null && kill -9 "$own_dockerd_pid"
  fi
  for ca in "${copied_cas[@]}"; do rm -f "$ca"; done
  rm -rf "$work/rootfs" "$work/engine"
  if [ "$rc" = 0 ] && [ "${ECPI_DOCKER_TEST_KEEP_LOGS:-0}" != 1 ]; then
    rm -rf "$work"
  else
    log "logs kept in $work"
  fi
  log "$([ "$rc" = 0 ] && echo PASSED || echo "FAILED (exit $rc)") in $((SECONDS - started)) s"
  exit "$rc"
}
exec 3>&1 4>&2
trap cleanup EXIT
trap 'exit 130' INT TERM

compose() {
  $compose_cmd -p "$run_id" -f docker-compose.yml -f "$work/override.yml" "$@"
}

# Starts dockerd with its state under $work/engine; returns non-zero if it does not answer within 60 s.
start_dockerd() {
  local engine="$work/engine"
  mkdir -p "$engine"
  # shellcheck disable=SC2086 # the flags are words on purpose
  dockerd --data-root "$engine/data" --exec-root "$engine/exec" --pidfile "$engine/dockerd.pid" \
    -H "unix://$engine/docker.sock" $dockerd_flags > "$work/dockerd.log" 2>&1 &
  own_dockerd_pid=$!
  export DOCKER_HOST="unix://$engine/docker.sock"
  for _ in $(seq 60); do
    docker info > /dev/null 2>&1 && return 0
    kill -0 "$own_dockerd_pid" 2> /dev/null || break
    sleep 1
  done
  kill "$own_dockerd_pid" 2> /dev/null
  wait "$own_dockerd_pid" 2> /dev/null
  own_dockerd_pid=""
  return 1
}

engine_up() {
  host_network="${ECPI_HOST_NETWORK:-0}"
  if docker info > /dev/null 2>&1; then
    log "using the running Docker engine at ${DOCKER_HOST:-the default socket}"
    return
  fi
  command -v dockerd > /dev/null || die "no Docker engine answers and dockerd is not installed (apt-get install docker.io)"
  dockerd_flags="${ECPI_DOCKERD_FLAGS:-}"
  [ "$host_network" = 1 ] && dockerd_flags="$dockerd_flags --iptables=false --bridge=none"
  if start_dockerd; then
    log "started dockerd (pid $own_dockerd_pid) ${dockerd_flags:+with$dockerd_flags}"
    return
  fi
  log "dockerd did not start with default settings:"; tail -5 "$work/dockerd.log"
  host_network=1
  dockerd_flags="${ECPI_DOCKERD_FLAGS:-} --storage-driver=vfs --iptables=false --bridge=none"
  start_dockerd || { tail -20 "$work/dockerd.log"; die "dockerd did not start with$dockerd_flags either"; }
  log "started dockerd (pid $own_dockerd_pid) with$dockerd_flags; containers use host networking"
}

write_override() {
  {
    echo "services:"
    echo "  jupyter:"
    echo "    image: $image"
    echo "    environment:"
    echo "      ECPI_QUICK: \"${ECPI_QUICK:-1}\""
    if [ "$host_network" = 1 ]; then host_network_override; fi
  } > "$work/override.yml"
  compose config -q || die "the compose file with the test override is invalid"
}

api() { curl -fsS -H "Authorization: token $token" "http://127.0.0.1:$port$1" "${@:2}"; }

wait_for_server() {
  for _ in $(seq 120); do
    api /api/status > /dev/null 2>&1 && return 0
    [ -n "$(compose ps -q jupyter)" ] || break
    sleep 1
  done
  compose logs --no-color --tail=50 jupyter
  die "the Jupyter server did not answer on 127.0.0.1:$port within 120 s"
}

# Prints the name of the kernelspec whose display name starts with "ecpi"; lists them all on stderr.
ecpi_kernel() {
  api /api/kernelspecs | /usr/bin/python3 -c '
import json, sys
specs = {name: s["spec"]["display_name"] for name, s in json.load(sys.stdin)["kernelspecs"].items()}
print("kernelspecs:", ", ".join("%s (%s)" % item for item in specs.items()), file=sys.stderr)
print(*[name for name, shown in specs.items() if shown.lower().startswith("ecpi")][:1])'
}

# A notebook saved through the server must land in ./notebooks on the host, where the work is kept.
check_mount() {
  probe_notebook="docker-test-probe-$$.ipynb" # not hidden: Jupyter refuses to save dot-files
  [ -d notebooks/.ipynb_checkpoints ] || made_checkpoints_dir=1
  api "/api/contents/$probe_notebook" -X PUT -H 'Content-Type: application/json' \
    -d '{"type": "notebook", "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}}' > /dev/null
  [ -f "notebooks/$probe_notebook" ] || die "a notebook saved through the server is not in ./notebooks: the volume is not mounted"
  api "/api/contents/$probe_notebook" -X DELETE
  [ ! -e "notebooks/$probe_notebook" ] || die "a notebook deleted through the server is still in ./notebooks"
  probe_notebook=""
  log "notebooks/ is mounted: a notebook saved through the server appeared on the host"
}

main() {
  [ "$(id -u)" = 0 ] || die "needs root (dockerd, debootstrap)"
  for f in scripts/setup-kernel.sh "notebooks/$tour"; do [ -f "$f" ] || die "$f is missing"; done
  command -v curl > /dev/null || die "curl is not installed"
  /usr/bin/python3 -c 'import requests, websocket' 2> /dev/null ||
    die "/usr/bin/python3 lacks requests or websocket (apt-get install python3-requests python3-websocket)"
  pick_compose
  engine_up
  if (: < "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
    die "port $port on 127.0.0.1 is already in use"
  fi
  make_base "$base_image"
  copy_cas
  write_override

  log "building the image ($image) with BASE_IMAGE=$base_image; log: $work/build.log"
  local t=$SECONDS
  BASE_IMAGE="$base_image" compose build jupyter > "$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log"; die "image build failed: $(explain_build_failure "$work/build.log")"; }
  log "image built in $((SECONDS - t)) s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.2f GB", $1/1e9}'))"

  compose_up=1
  JUPYTER_TOKEN="$token" compose up -d --no-build jupyter > "$work/up.log" 2>&1 ||
    { cat "$work/up.log"; die "compose up failed"; }
  t=$SECONDS
  wait_for_server
  log "Jupyter server answers on 127.0.0.1:$port after $((SECONDS - t)) s"

  local kernel
  kernel="$(ecpi_kernel)"
  [ -n "$kernel" ] || die "no ecpi kernelspec in /api/kernelspecs"
  log "ecpi kernel found: $kernel"

  check_mount

  compose exec -T jupyter ecpi models > "$work/ecpi-models.log" 2>&1 ||
    { cat "$work/ecpi-models.log"; die "\`compose exec jupyter ecpi models\` failed: the REPL is not on the container's PATH"; }
  log "compose exec jupyter ecpi models: ecpi is on the container's PATH"

  log "running notebooks/$tour through the server with kernel $kernel"
  t=$SECONDS
  /usr/bin/python3 docker/run_notebook.py --url "http://127.0.0.1:$port" --token "$token" --kernel "$kernel" \
    --notebook "$tour" --out "$work/$tour" --cell-timeout "${ECPI_CELL_TIMEOUT:-900}" ||
    die "notebooks/$tour failed (executed copy: $work/$tour)"
  log "notebooks/$tour ran in $((SECONDS - t)) s"
}

main "$@"; exit # one line: bash has read it all before main runs, so edits to this file cannot leak in
