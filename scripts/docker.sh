#!/usr/bin/env bash
# make docker: builds the workshop image and starts its container (docker-compose.yml's "jupyter" service),
# then prints the URL. On any machine with a Docker engine:
#  - Compose: the v2 plugin, else docker-compose 1.29;
#  - base image: BASE_IMAGE if set; else debian:bookworm or ecpi-base:bookworm if the engine has one; else
#    debian:bookworm pulled; where no registry answers, a Debian bookworm root made with debootstrap
#    (ecpi-base:bookworm, kept for the next build);
#  - the host's extra CA certificates (a TLS-inspecting proxy) are copied into the build and removed after.
# A failure is explained in one line with its fix. Settings: JUPYTER_TOKEN, ECPI_PORT (as in compose),
# ECPI_COMPOSE, ECPI_DEBIAN_MIRROR, ECPI_HOST_NETWORK=1 (engines without a working bridge network).
set -euo pipefail
cd "$(dirname "$0")/.."
log_tag=docker
work="$(mktemp -d /tmp/ecpi-docker.XXXXXX)"
source scripts/docker-lib.sh
port=${ECPI_PORT:-8888}
token=${JUPYTER_TOKEN:-ecpi}

cleanup() {
  local rc=$?
  for ca in "${copied_cas[@]}"; do rm -f "$ca"; done
  if [ "$rc" = 0 ] || [ -z "$(ls -A "$work")" ]; then rm -rf "$work"; else log "logs kept in $work"; fi
}
trap cleanup EXIT

compose() {
  local files=(-f docker-compose.yml)
  [ ! -f "$work/override.yml" ] || files+=(-f "$work/override.yml")
  $compose_cmd "${files[@]}" "$@"
}

# The engine must answer; the one-line reasons below are the common ways it does not.
check_engine() {
  command -v docker > /dev/null ||
    die "the docker command is not installed: apt-get install docker.io (or Docker Engine from docs.docker.com/engine/install)"
  local err
  if ! err="$(docker info 2>&1 > /dev/null)"; then
    case "$err" in
      *"permission denied"*)
        die "no permission on the Docker socket: run as root, or join the docker group (sudo usermod -aG docker \$USER, then log in again)" ;;
      *)
        die "no Docker engine answers at ${DOCKER_HOST:-unix:///var/run/docker.sock}: start it (sudo systemctl start docker; without systemd: sudo dockerd > /var/log/dockerd.log 2>&1 &)" ;;
    esac
  fi
  log "Docker engine $(docker version -f '{{.Server.Version}}' 2> /dev/null) at ${DOCKER_HOST:-the default socket}"
}

# Sets BASE_IMAGE: the user's, else debian:bookworm from the engine or a registry, else one made offline.
pick_base() {
  if [ -n "${BASE_IMAGE:-}" ]; then
    log "base image $BASE_IMAGE (BASE_IMAGE)"
  elif docker image inspect debian:bookworm > /dev/null 2>&1; then
    BASE_IMAGE=debian:bookworm
  elif docker image inspect ecpi-base:bookworm > /dev/null 2>&1; then
    BASE_IMAGE=ecpi-base:bookworm
    log "base image ecpi-base:bookworm (made offline by an earlier run)"
  elif timeout 120 docker pull debian:bookworm > "$work/pull.log" 2>&1; then
    BASE_IMAGE=debian:bookworm
  else
    log "no registry answers ($(tail -1 "$work/pull.log")): the offline route"
    BASE_IMAGE=ecpi-base:bookworm
    make_base "$BASE_IMAGE"
  fi
  export BASE_IMAGE
}

wait_for_server() {
  command -v curl > /dev/null || { log "curl is not installed: not waiting for the server"; return; }
  for _ in $(seq 120); do
    curl -fs -o /dev/null -H "Authorization: token $token" "http://127.0.0.1:$port/api/status" && return
    sleep 1
  done
  compose logs --no-color --tail=30 jupyter
  die "the container started but Jupyter did not answer on 127.0.0.1:$port within 120 s (its log is above)"
}

main() {
  check_engine
  pick_compose
  pick_base
  copy_cas
  if [ "${ECPI_HOST_NETWORK:-0}" = 1 ]; then
    { echo "services:"; echo "  jupyter:"; echo "    environment:"; host_network_override; } > "$work/override.yml"
  fi
  log "building the image with BASE_IMAGE=$BASE_IMAGE (log: $work/build.log)"
  local t=$SECONDS
  compose build jupyter > "$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; die "the image build failed: $(explain_build_failure "$work/build.log")"; }
  log "image ecpi:latest built in $((SECONDS - t)) s, $(docker image inspect -f '{{.Size}}' ecpi:latest | awk '{printf "%.2f GB", $1/1e9}')"
  compose up -d --no-build jupyter > "$work/up.log" 2>&1 ||
    { cat "$work/up.log"; die "compose up failed (above); is port $port taken? ECPI_PORT=8890 make docker moves it"; }
  wait_for_server
  log "Jupyter with the ecpi kernel: http://localhost:$port/tree?token=$token"
  log "stop it with: $compose_cmd down   (notebooks stay in ./notebooks, runs in the ecpi-runs volume)"
}

main "$@"; exit # one line: bash has read it all before main runs, so edits to this file cannot leak in
