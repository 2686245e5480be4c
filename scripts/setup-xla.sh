#!/usr/bin/env bash
# Installs the XLA CPU PJRT plugin into $ECPI_HOME/xla/pjrt_c_api_cpu_plugin.so: pip downloads the
# wheel pinned in xla/cpu-plugin.pin (name, version, sha256), and the .so is unpacked from it, so no
# Python is needed at run time. Idempotent. Without PyPI it says so and exits 0: ecpi then uses
# GoMLX's pure-Go backend (see `ecpi doctor`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source xla/cpu-plugin.pin

dir="$ECPI_HOME/xla"
target="$dir/pjrt_c_api_cpu_plugin.so"
if [ -f "$target" ]; then
  echo "setup-xla: XLA CPU plugin already installed at $target"
  exit 0
fi

python=$(command -v python3 || command -v python || true)
if [ -z "$python" ]; then
  echo "setup-xla: no python3 to run pip with; ecpi will use the pure-Go backend" >&2
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/download-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "setup-xla: downloading $WHEEL_NAME==$WHEEL_VERSION from PyPI"
if ! "$python" -m pip download --no-deps --disable-pip-version-check --only-binary=:all: \
    -d "$tmp" "$WHEEL_NAME==$WHEEL_VERSION" >"$tmp/pip.log" 2>&1; then
  tail -3 "$tmp/pip.log" >&2
  echo "setup-xla: PyPI unreachable or $WHEEL_NAME==$WHEEL_VERSION unavailable; ecpi will use the pure-Go backend" >&2
  exit 0
fi
echo "$WHEEL_SHA256  $tmp/$WHEEL_FILE" | sha256sum -c --quiet -
"$python" - "$tmp/$WHEEL_FILE" "$PLUGIN_IN_WHEEL" "$tmp/plugin.so" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
chmod 755 "$tmp/plugin.so"
mv "$tmp/plugin.so" "$target"
echo "setup-xla: installed the XLA CPU plugin (PJRT C API $PJRT_API_VERSION) at $target"
