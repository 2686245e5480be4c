#!/usr/bin/env bash
# Installs the Go toolchain ecpi needs (Go 1.27.3) and downloads the module's dependencies. Idempotent.
# With any Go >= 1.21 on the machine, GOTOOLCHAIN=go1.27.3 (scripts/env.sh) makes the go command fetch
# 1.27.3 from the Go module proxy itself. Without Go, the same toolchain module is fetched from the
# proxy directly and unpacked into /usr/local/go (what the go command would do).
set -euo pipefail
cd "$(dirname "$0")/.."
version=go1.27.3
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
  proxy="${GOPROXY:-https://proxy.golang.org}"
  proxy="${proxy%%,*}"
  url="$proxy/golang.org/toolchain/@v/v0.0.1-$version.linux-amd64.zip"
  echo "setup: no Go found; fetching $version from the Go module proxy" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL -o "$tmp/go.zip" "$url"
  (cd "$tmp" && unzip -q go.zip)
  rm -rf /usr/local/go
  mv "$tmp/golang.org/toolchain@v0.0.1-$version.linux-amd64" /usr/local/go
  chmod +x /usr/local/go/bin/* /usr/local/go/pkg/tool/*/* 2>/dev/null || true
fi
source scripts/env.sh
go version
go mod download
