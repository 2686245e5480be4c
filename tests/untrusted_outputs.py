"""Checks notebooks the way a notebook UI displays them when it does not trust them.

A notebook opened on another machine is untrusted. The classic Notebook then shows only PNG, JPEG, GIF,
LaTeX and plain text as they are, HTML after sanitising it, and nothing else (no SVG, no Markdown);
JupyterLab likewise renders no SVG and sanitises HTML. So every figure must carry an image/png output, and
no HTML may hold what a sanitiser strips or turns into visible text: SVG, scripts, data: images.

For each output of a notebook this reports:
  * text/html holding <svg, <script or <img src=data: (the plot became a run of text);
  * image/svg+xml or text/markdown without image/png or text/plain beside it (shown as nothing);
  * image/svg+xml even beside a PNG: nbconvert's HTML export prefers it and sanitises it into an empty box;
  * what nbconvert's SanitizeHTML (bleach; table markup allowed, as the UIs allow it) changes: a figure
    left without PNG or JPEG, or HTML markup escaped into visible text.

    /usr/bin/python3 tests/untrusted_outputs.py notebooks/*.ipynb      # exit 1 if any notebook fails

tests/notebooks_test.py applies the same check to every notebook it executes.
"""
import copy
import re
import sys

import nbformat

SHOWN_UNTRUSTED = ("image/png", "image/jpeg", "image/gif")
UNSAFE_HTML = re.compile(r"<svg|<script|<img[^>]*\bsrc\s*=\s*[\"']?data:", re.IGNORECASE)
# Markup the notebook UIs' sanitisers keep (bleach's defaults would escape tables into text).
KEPT_TAGS = ["table", "thead", "tbody", "tr", "th", "td", "caption", "p", "div", "span", "pre", "br", "h1", "h2",
             "h3", "h4", "code", "b", "i", "em", "strong", "ul", "ol", "li", "a", "sub", "sup", "hr"]


def text(value):
    return "".join(value) if isinstance(value, list) else value


def is_figure(data):
    html = text(data.get("text/html", ""))
    return any(k.startswith("image/") for k in data) or "<svg" in html or "<img" in html


def figures(nb):
    """How many outputs of the notebook are figures."""
    return sum(is_figure(out.get("data", {})) for cell in nb.cells for out in cell.get("outputs", []))


def rule_problems(data):
    found = []
    match = UNSAFE_HTML.search(text(data.get("text/html", "")))
    if match:
        found.append(f"text/html holds {match.group(0)!r}, which an untrusted notebook strips")
    if "image/svg+xml" in data and not any(t in data for t in SHOWN_UNTRUSTED):
        found.append("image/svg+xml without image/png: an untrusted notebook shows nothing")
    elif "image/svg+xml" in data:
        found.append("image/svg+xml: `jupyter nbconvert --to html` shows it, sanitised, as an empty box")
    if "text/markdown" in data and "text/plain" not in data:
        found.append("text/markdown without text/plain: the untrusted classic Notebook shows nothing")
    return found


def sanitised(nb):
    """The notebook after nbconvert's SanitizeHTML, or None where nbconvert lacks it."""
    try:
        from nbconvert.preprocessors.sanitize import SanitizeHTML
    except ImportError:
        return None
    nb = copy.deepcopy(nb)
    SanitizeHTML(tags=KEPT_TAGS).preprocess(nb, {})
    return nb


def sanitiser_problems(before, after):
    found = []
    if is_figure(before) and not any(t in after for t in SHOWN_UNTRUSTED):
        found.append(f"a figure with no PNG once sanitised (it had {sorted(before)})")
    html_before, html_after = text(before.get("text/html", "")), text(after.get("text/html", ""))
    if html_after.count("&lt;") > html_before.count("&lt;"):
        found.append("sanitising the HTML turns some of its markup into visible text")
    return found


def problems(nb):
    """Every problem of the notebook's outputs, as 'cell N output M: what'."""
    clean = sanitised(nb)
    found = []
    for i, cell in enumerate(nb.cells):
        for j, out in enumerate(cell.get("outputs", [])):
            if "data" not in out:
                continue
            issues = rule_problems(out["data"])
            if clean is not None:
                issues += sanitiser_problems(out["data"], clean.cells[i].outputs[j]["data"])
            found += [f"cell {i} output {j}: {issue}" for issue in issues]
    return found


def main(paths):
    failed = False
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        found = problems(nb)
        status = "ok  " if not found else "FAIL"
        print(f"{status} {path}: {figures(nb)} figures, {len(found)} problems for an untrusted notebook")
        for p in found:
            print("     " + p)
        failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
