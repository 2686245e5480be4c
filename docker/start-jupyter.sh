#!/usr/bin/env bash
# The image's command: the Jupyter Notebook server on the notebooks folder (a volume in docker-compose.yml),
# with the ecpi toolchain environment that the "ecpi (Go)" kernel inherits. Deleting deletes: a trash
# folder would otherwise appear inside the mounted notebooks folder (.Trash-0).
set -euo pipefail
cd "${ECPI_SRC:-/opt/ecpi/src}"
source scripts/env.sh
exec jupyter notebook \
  --no-browser --allow-root \
  --ip="${JUPYTER_IP:-0.0.0.0}" --port="${JUPYTER_PORT:-8888}" \
  --NotebookApp.token="${JUPYTER_TOKEN:-ecpi}" \
  --notebook-dir="$PWD/notebooks" \
  --FileContentsManager.delete_to_trash=False
