#!/usr/bin/env bash
# `make demo` keeps its promise: its model reaches under 2.5 bits per byte on foldoc's whole validation split, where
# samples read as words, and it prints a sample. Runs the demo as a user does (about 3 minutes on 2 cores) and reads
# its output: the `ecpi eval` line and the text under "== a sample".
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# On the backend a user gets: make test's GOMLX_BACKEND=go would train on the much slower Go backend.
if ! env -u GOMLX_BACKEND bash scripts/demo.sh 2>&1 | tee "$log"; then
  echo "FAIL: scripts/demo.sh exited with an error"
  exit 1
fi
fail=0
bpc=$(sed -n 's/^ecp on foldoc (valid split, step [0-9]*): .*  bpc \([0-9.]*\) .*/\1/p' "$log")
if [ -z "$bpc" ]; then
  echo "FAIL: the demo printed no 'ecp on foldoc (valid split, ...) ... bpc X' line"
  fail=1
elif ! awk -v bpc="$bpc" 'BEGIN { exit !(bpc < 2.5) }'; then
  echo "FAIL: the demo's model reaches $bpc bits per byte on valid, not under 2.5"
  fail=1
fi
# The sample is the lines between its header and the next one; the prompt alone is no sample.
sample=$(sed -n '/^== a sample/,/^== /{/^== /d;p}' "$log")
if [ "$(printf '%s' "$sample" | tr -d '[:space:]' | wc -c)" -lt 100 ]; then
  echo "FAIL: the demo printed no sample of 100 characters or more, only: '$sample'"
  fail=1
fi
[ $fail -eq 0 ] && echo "ok: the demo reaches $bpc bits per byte on valid and prints a sample"
exit $fail
