#!/usr/bin/env bash
# Installs the Go toolchain ecpi needs (Go 1.27.3, fetched by the go command from the module proxy)
# and downloads the module's dependencies. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
  echo "setup: no Go found; installing Debian's golang-go to bootstrap Go 1.27.3" >&2
  apt-get update -qq && apt-get install -y -qq golang-go >/dev/null
fi
source scripts/env.sh
go version
go mod download
