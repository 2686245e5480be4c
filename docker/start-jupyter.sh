#!/usr/bin/env bash
# The image's command: the Jupyter Notebook server on the notebooks folder (a volume in docker-compose.yml),
# with the ecpi toolchain environment that the "ecpi (Go)" kernel inherits.
set -euo pipefail
cd "${ECPI_SRC:-/opt/ecpi/src}"
source scripts/env.sh
exec jupyter notebook \
  --no-browser --allow-root \
  --ip="${JUPYTER_IP:-0.0.0.0}" --port="${JUPYTER_PORT:-8888}" \
  --NotebookApp.token="${JUPYTER_TOKEN:-ecpi}" \
  --notebook-dir="$PWD/notebooks"
