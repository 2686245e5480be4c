#!/usr/bin/env bash
# Docker build stage: writes DEST/mod and DEST/build, the Go caches the final image keeps.
#  mod:   the unpacked source of the modules that ecpi's packages import (what a notebook cell compiles
#         against), and the small .mod/.info files of every module in the graph (the go command reads
#         them to load it). No zips, no toolchain module, no sources of GoNB's or gopls's dependencies.
#  build: a build cache holding exactly ecpi's packages and their dependencies, compiled as the kernel
#         compiles (GOEXPERIMENT=simd): the first cell links against them instead of compiling GoMLX.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
dest=$1
modcache=$(go env GOMODCACHE)
mkdir -p "$dest/mod/cache/download" "$dest/build"

(cd "$modcache/cache/download" && find . -name '*.mod' -o -name '*.info' -o -name '*.ziphash') |
  tar -C "$modcache/cache/download" -cf - -T - | tar -C "$dest/mod/cache/download" -xf -
# Module paths are case-encoded on disk: an upper-case letter X is stored as !x.
go list -deps -f '{{with .Module}}{{if .Version}}{{.Path}}@{{.Version}}{{end}}{{end}}' ./... | sort -u |
  sed -e 's/[A-Z]/!\L&/g' | tar -C "$modcache" -cf - -T - | tar -C "$dest/mod" -xf -

# The cut-down module cache must hold every package (checked offline); the build cache is filled from the
# full one at its usual path, which the final image keeps: cache keys include the source folder.
GOMODCACHE="$dest/mod" GOPROXY=off go list -deps ./... > /dev/null
GOCACHE="$dest/build" go build ./...
du -sh "$dest/mod" "$dest/build"
