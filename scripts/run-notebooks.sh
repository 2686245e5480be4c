#!/usr/bin/env bash
# Executes notebooks headless through the "ecpi (Go)" kernel and saves their outputs in place: the way the
# committed outputs and notebooks/results/*.json (hence EXPERIMENTS.md) are produced.
#   scripts/run-notebooks.sh 01-ecp-language-modeling 04-pi-attention-language-modeling   (full mode)
#   ECPI_QUICK=1 scripts/run-notebooks.sh 00-tour                                            (quick mode)
#   ECPI_MODE=paper scripts/run-notebooks.sh 01-ecp-language-modeling     (paper mode: the declarations and the cells
#                                                                          tagged "paper" only; needs an accelerator)
# No name: every notebook. Each notebook's time is printed and appended to notebooks/results/times.log.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
if ! /usr/bin/python3 -m jupyter_client.kernelspecapp list 2>/dev/null | grep -w ecpi > /dev/null; then  # not -q: with pipefail, an early exit of grep fails the pipe
  echo "run-notebooks: the ecpi kernel is not installed; run \`make kernel\`" >&2
  exit 1
fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for path in notebooks/[0-9]*.ipynb; do names+=("$(basename "$path" .ipynb)"); done
fi
mode=${ECPI_MODE:-full}
[ "${ECPI_QUICK:-}" = 1 ] && mode=quick
export ECPI_MODE=$mode
mkdir -p notebooks/results
for name in "${names[@]}"; do
  path="notebooks/$name.ipynb"
  [ -f "$path" ] || { echo "run-notebooks: no notebook $path" >&2; exit 2; }
  echo "== $name ($mode mode), started $(date +%H:%M)"
  start=$(date +%s)
  /usr/bin/python3 - "$path" <<'PY' 2> >(grep -v -E '^[IWE][0-9]{4} |^\s+/root/go/pkg/mod/|^goroutine |^github.com/janpfeifer|^main\.' >&2)
import sys, nbformat
from nbclient import NotebookClient
import os, re
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, kernel_name="ecpi", timeout=None, allow_errors=False,
                        resources={"metadata": {"path": "notebooks"}})
try:
    if os.environ["ECPI_MODE"] != "paper":
        client.execute()
    else:  # GoNB keeps declarations (cells without %%) for the cells after them
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code" and ("paper" in cell.metadata.get("tags", []) or not re.search(r"^%%", cell.source, re.M)):
                    client.execute_cell(cell, index)
finally:
    nbformat.write(nb, path)
PY
  seconds=$(( $(date +%s) - start ))
  /usr/bin/python3 scripts/trim-live-plots.py "$path"  # a picture per training run would make the notebook megabytes
  echo "== $name: $((seconds / 60)) min $((seconds % 60)) s"
  echo "$(date -u +%Y-%m-%dT%H:%MZ) $name $mode $seconds s" >> notebooks/results/times.log
done
