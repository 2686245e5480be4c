#!/usr/bin/env bash
# `make demo`: train a small ECP model on real text (the FOLDOC computing dictionary, a WikiText-103
# stand-in shipped by Debian), then report its cost, its validation perplexity and a sample.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ecpi=bin/ecpi
steps="${DEMO_STEPS:-300}"
# Every ecpi command is its own process: the sample reads the checkpoint of this run folder.
run="$ECPI_HOME/runs/demo-ecp-foldoc-$(date +%Y%m%d-%H%M%S)"

echo "== backend"
$ecpi doctor
echo
echo "== what ECP computes at the paper's scale (n=4096, half-segments of 256)"
$ecpi cost model=ecp n=4096 segment=256
echo
echo "== training a small ECP model on foldoc for $steps steps"
$ecpi train model=ecp data=foldoc n=256 segment=32 dim=128 heads=4 layers=4 steps="$steps" batch=8 eval_every=100 run="$run"
echo
echo "== a sample from the trained model"
$ecpi sample "A compiler is" tokens=200 checkpoint="$run"
