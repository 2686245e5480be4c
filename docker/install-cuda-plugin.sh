#!/usr/bin/env bash
# Installs the XLA CUDA PJRT plugin and the NVIDIA libraries (docker/cuda-requirements.txt, wheels from PyPI)
# into $ECPI_HOME/xla/nvidia, the layout go-xla expects: the plugin's RPATH looks for the libraries in
# $ORIGIN/../nvidia/<library>/lib, and go-xla points XLA at that folder for ptxas (bin/ptxas).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
dest="$ECPI_HOME/xla/nvidia"
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT

python3 -m pip download --no-deps --only-binary=:all: --dest "$wheels" -r docker/cuda-requirements.txt
rm -rf "$dest" && mkdir -p "$dest/bin"
for whl in "$wheels"/nvidia_*.whl; do
  unzip -q -o "$whl" 'nvidia/*' -d "$wheels/unpacked"
done
cp -a "$wheels/unpacked/nvidia/." "$dest/"
unzip -q -p "$wheels"/jax_cuda12_pjrt-*.whl 'jax_plugins/xla_cuda12/xla_cuda_plugin.so' > "$dest/pjrt_c_api_cuda_plugin.so"
ln -sfn ../cuda_nvcc/bin/ptxas "$dest/bin/ptxas"

# go-xla v0.4.13 is built against PJRT C API 0.104: an older plugin lacks functions it calls.
python3 - "$dest/pjrt_c_api_cuda_plugin.so" <<'PY'
import ctypes, struct, sys
lib = ctypes.CDLL(sys.argv[1])
lib.GetPjrtApi.restype = ctypes.c_void_p
# PJRT_Api starts with struct_size, extension_start, then PJRT_Api_Version {struct_size, extension_start, major, minor}.
major, minor = struct.unpack_from("<QQQQii", ctypes.string_at(lib.GetPjrtApi(), 40))[4:]
if (major, minor) < (0, 104):
    sys.exit(f"{sys.argv[1]}: PJRT C API {major}.{minor}, go-xla needs 0.104 or newer")
print(f"installed {sys.argv[1]} (PJRT C API {major}.{minor})")
PY
