# Sourced (not run) by scripts/docker.sh (`make docker`) and scripts/docker-test.sh (`make docker-test`):
# what both need to build the image on any machine — a Compose command, a base image where no registry
# answers, the host's extra CA certificates.
# The caller sets log_tag (the prefix of log lines) and work (a temporary folder), and may read back
# compose_cmd, imported_base (1 when make_base imported the base) and copied_cas (the CA copies to remove).
started=${started:-$SECONDS}
imported_base=0
copied_cas=()

log() { printf '[%s %4ds] %s\n' "$log_tag" "$((SECONDS - started))" "$*"; }
die() { log "FAILED: $*"; exit 1; }

# The Compose v2 plugin, else docker-compose 1.29; ECPI_COMPOSE ("docker-compose" or "docker compose") decides.
pick_compose() {
  if [ -n "${ECPI_COMPOSE:-}" ]; then
    compose_cmd="$ECPI_COMPOSE"
  elif docker compose version > /dev/null 2>&1; then
    compose_cmd="docker compose"
  elif command -v docker-compose > /dev/null; then
    compose_cmd="docker-compose"
    log "no Docker Compose v2 plugin (\`docker compose\`): using docker-compose"
  else
    die "no Docker Compose: install the v2 plugin (docker-compose-plugin) or docker-compose 1.29 (apt-get install docker-compose)"
  fi
  log "compose: $compose_cmd ($($compose_cmd version --short 2> /dev/null || $compose_cmd version | head -1))"
}

# The first Debian mirror apt uses here (deb822 or one-line sources), unless ECPI_DEBIAN_MIRROR says.
debian_mirror() {
  if [ -n "${ECPI_DEBIAN_MIRROR:-}" ]; then echo "$ECPI_DEBIAN_MIRROR"; return; fi
  local m
  m="$(cat /etc/apt/sources.list.d/*.sources 2> /dev/null | awk '/^URIs:/ {print $2}' | grep -E '/debian/?$' | head -1)"
  [ -n "$m" ] || m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2> /dev/null |
    awk '$1 == "deb" && $2 !~ /^\[/ {print $2}' | grep -E '/debian/?$' | head -1)"
  echo "${m:-http://deb.debian.org/debian}"
}

# make_base IMAGE: a Debian bookworm root made with debootstrap, imported as IMAGE (unless IMAGE exists):
# the base image where no registry can be reached.
make_base() {
  local image=$1 mirror rootfs="$work/rootfs"
  if docker image inspect "$image" > /dev/null 2>&1; then
    log "base image $image exists; using it"
    return
  fi
  [ "$(id -u)" = 0 ] || die "building the base image $image with debootstrap needs root: run as root (sudo)"
  command -v debootstrap > /dev/null || die "debootstrap is not installed: apt-get install debootstrap"
  mirror="$(debian_mirror)"
  log "debootstrap bookworm (minbase) from $mirror"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; die "debootstrap failed (log above): check that $mirror answers, or set ECPI_DEBIAN_MIRROR"; }
  # The suites of the official debian:bookworm image, on the same mirror.
  rm -f "$rootfs/etc/apt/sources.list"
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" << EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian*}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  tar -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$image" > /dev/null
  imported_base=1
  rm -rf "$rootfs"
  log "imported $image"
}

# The host's extra CAs (a TLS-inspecting proxy in front of the registries) go into the build: without them
# the image cannot download the Go toolchain, the modules or the XLA plugin. The caller removes copied_cas.
copy_cas() {
  local ca dest
  for ca in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$ca" ] || continue
    dest="docker/ca-certificates/$(basename "$ca")"
    [ -e "$dest" ] && continue
    cp "$ca" "$dest"
    copied_cas+=("$PWD/$dest")
  done
  [ "${#copied_cas[@]}" = 0 ] || log "build trusts the host's extra CAs: ${copied_cas[*]##*/}"
}

# Compose override lines for engines without a working bridge network: build and run on the host's network.
host_network_override() {
  echo "      JUPYTER_IP: 127.0.0.1"
  echo "    build:"
  echo "      network: host"
  echo "    network_mode: host"
}

# explain_build_failure LOG: one line that says why an image build failed and what to do, when it is known.
explain_build_failure() {
  local build_log=$1
  if grep -q -E 'x509: certificate|certificate verify failed|SSL certificate problem' "$build_log"; then
    echo "a TLS-inspecting proxy's certificate is not trusted in the build: put its CA (PEM, *.crt) in" \
      "/usr/local/share/ca-certificates/ (copied in automatically) or docker/ca-certificates/, then run again"
  elif grep -q -E 'no such host|Temporary failure resolving|dial tcp|Could not resolve' "$build_log"; then
    echo "the build cannot reach the network (Debian mirror, Go module proxy, PyPI): check the engine's DNS and" \
      "proxy settings, or run with ECPI_HOST_NETWORK=1 to build on the host's network"
  elif grep -q -E 'no space left on device' "$build_log"; then
    echo "the engine ran out of disk space: docker system prune, or free space under its data root"
  else
    echo "see the build log above"
  fi
}
