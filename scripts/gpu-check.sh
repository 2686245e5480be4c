#!/usr/bin/env bash
# ecpi's GPU check, in two halves (bench/gpu/README.md):
#   bash scripts/gpu-check.sh prepare          # here, with Go: build what travels into bench/gpu/carry
#   bash scripts/gpu-check.sh run [--cpu] [--out DIR] [--set key=value ...]
#                                               # there, without Go: the check, one results file
# `run` without --cpu targets the CUDA PJRT plugin of the machine's Python (jax-cuda13-pjrt) or
# $ECPI_CUDA_PLUGIN; `run --cpu` is the same check on the XLA CPU plugin with tiny sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
carry=bench/gpu/carry
# The device machine takes the working tree plus carried paths up to 64 MiB in all; the tree
# itself is a good part of that, so what travels must leave a wide margin.
limit_mib=48

prepare() {
  source scripts/env.sh
  if ! command -v go >/dev/null 2>&1; then
    echo "gpu-check prepare: needs the Go toolchain (make toolchain); run it where Go is, then carry $carry" >&2
    exit 1
  fi
  local data="$ECPI_HOME/data/opticks"
  if [ ! -f "$data/train.txt" ]; then
    echo "gpu-check prepare: no corpus at $data (bench train reads it): run make data" >&2
    exit 1
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/carry/home/data"
  # Stripped (-s -w) and gzipped: about 20 MB instead of 80 for the two binaries. Panics still
  # name their functions (the line tables stay); only the debugger's symbols go.
  echo "gpu-check prepare: building ecpi and the models test binary" >&2
  go build -ldflags="-s -w" -o "$tmp/ecpi" ./cmd/ecpi
  go test -c -ldflags="-s -w" -o "$tmp/models.test" ./models/
  gzip -6 -c "$tmp/ecpi" >"$tmp/carry/ecpi.gz"
  gzip -6 -c "$tmp/models.test" >"$tmp/carry/models.test.gz"
  cp -r "$data" "$tmp/carry/home/data/"
  # The PJRT C API version go-xla was compiled against: a plugin must speak it (or a newer minor).
  local goxla header
  goxla=$(go list -m -f '{{.Dir}}' github.com/gomlx/go-xla)
  header="$goxla/pjrt/pjrt_c_api.h"
  python3 - "$tmp" "$header" "$(go list -m -f '{{.Version}}' github.com/gomlx/go-xla)" <<'PY'
import json, os, re, subprocess, sys, datetime
tmp, header, goxla = sys.argv[1:4]
text = open(header).read()
api = "%s.%s" % (re.search(r"#define PJRT_API_MAJOR (\d+)", text).group(1), re.search(r"#define PJRT_API_MINOR (\d+)", text).group(1))
def out(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
# The newest glibc symbol version the binaries ask for: the machine that runs them needs at least that.
need = "0"
for name in ("ecpi", "models.test"):
    for v in re.findall(r"GLIBC_([\d.]+)", out("objdump", "-T", os.path.join(tmp, name))):
        if tuple(map(int, v.split("."))) > tuple(map(int, need.split("."))):
            need = v
tests = out(os.path.join(tmp, "models.test"), "-test.list", ".").split()
manifest = dict(commit=out("git", "rev-parse", "HEAD"), dirty=bool(out("git", "status", "--porcelain", "--untracked-files=no")),
                built=datetime.datetime.now().isoformat(timespec="seconds"), go=out("go", "version"),
                goexperiment=os.environ.get("GOEXPERIMENT"), go_xla=goxla, pjrt_api=api, glibc_needed=need,
                models_tests=tests, files={n: os.path.getsize(os.path.join(tmp, "carry", n)) for n in ("ecpi.gz", "models.test.gz")})
json.dump(manifest, open(os.path.join(tmp, "carry", "manifest.json"), "w"), indent=1)
print(f"gpu-check prepare: commit {manifest['commit'][:12]}{' + uncommitted changes' if manifest['dirty'] else ''}, "
      f"go-xla {goxla} (PJRT C API {api}), glibc >= {need}", file=sys.stderr)
PY
  local carry_bytes tree_bytes total_mib
  carry_bytes=$(du -sb "$tmp/carry" | cut -f1)
  tree_bytes=$(git ls-files -z -co --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  total_mib=$(((carry_bytes + tree_bytes) / 1048576))
  echo "gpu-check prepare: carry $((carry_bytes / 1048576)) MiB + working tree $((tree_bytes / 1048576)) MiB = $total_mib MiB (device limit 64 MiB)" >&2
  if [ "$total_mib" -gt "$limit_mib" ]; then
    echo "gpu-check prepare: over $limit_mib MiB: the device machine would refuse or barely take it" >&2
    exit 1
  fi
  rm -rf "$carry"
  mkdir -p "$(dirname "$carry")"
  mv "$tmp/carry" "$carry"
  echo "gpu-check prepare: ready in $carry; on the GPU machine: bash scripts/gpu-check.sh run" >&2
}

case "${1:-}" in
  prepare)
    prepare
    ;;
  run)
    shift
    if ! command -v python3 >/dev/null 2>&1; then
      echo "gpu-check run: needs python3 (standard library only)" >&2
      exit 1
    fi
    exec python3 bench/gpu/check.py --carry "$carry" "$@"
    ;;
  *)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
