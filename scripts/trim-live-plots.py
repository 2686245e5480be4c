#!/usr/bin/python3
"""Keeps executed notebooks small enough to commit and to carry to the GPU machine.

Every training run draws a live loss plot (figure.Live), so a cell that trains thirty runs saves thirty pictures
(notebook 05 in full mode: 18 MB). This keeps the text of every live plot (its title and series) and the pictures of
the last two in each cell; every other figure, and every output's text, stays as it is.
  scripts/trim-live-plots.py notebooks/05-long-range-tasks.ipynb [more.ipynb ...]
"""
import sys

import nbformat

KEEP = 2
LIVE_PLOT = "x: step, y: loss (nats); series: train, valid]"  # figure.Live's text form


def trim(nb):
    dropped = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        live = [output for output in cell.get("outputs", [])
                if "image/png" in output.get("data", {}) and output["data"].get("text/plain", "").endswith(LIVE_PLOT)]
        for output in live[:-KEEP]:
            del output["data"]["image/png"]
            dropped += 1
    return dropped


for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    dropped = trim(nb)
    if dropped:
        nbformat.write(nb, path)
    print(f"{path}: {dropped} live-plot pictures dropped")
