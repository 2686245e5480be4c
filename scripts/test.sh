#!/usr/bin/env bash
# The whole test suite, as `make test` runs it after `make setup`:
#   1. every Go package (unit tests, CLI and REPL end-to-end tests in tests/) on the Go backend;
#   2. the models tests again on the XLA CPU plugin (same dense references, same tolerances);
#   3. every fuzz target for 10 s;
#   4. the notebooks and the workshop's exercise solutions, executed headless in quick mode through an ecpi kernel
#      of this checkout installed for this run only, and `make notebook`'s server started, asked for it and stopped;
#   5. the docker-compose file, validated; the committed verdicts recomputed (ecpi experiments verify); the GPU
#      check's CPU half (scripts/gpu-check.sh run --cpu);
#   6. `make demo`'s script, whole (about 3 minutes): its model must reach under 2.5 bits per byte and print a sample.
# Each step prints its runner's own summary; the script fails if any step fails.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
export GOMLX_BACKEND="${GOMLX_BACKEND:-go}"
# Tests never read or replay the user's work: this run gets a fresh run cache and session folder (run
# folders, `reuse=true` runs, notebook session sockets), so it computes what a fresh machine computes.
# Data, the XLA plugin and the toolchain stay shared.
test_state=$(mktemp -d)
export ECPI_RUNS="$test_state/runs" ECPI_SESSIONS="$test_state/sessions"
# The notebooks run through a kernel of this checkout installed for this run only, in a private Jupyter data folder:
# the user's own "ecpi" kernel keeps pointing where `make kernel` last pointed it (a clone that CI deletes after
# the run would otherwise leave it pointing at nothing).
export JUPYTER_DATA_DIR="$test_state/jupyter"
# The cluster tests in tests/slurm_test.go start a real Slurm (Debian's slurmctld, slurmd and munge, installed
# when missing) on this machine for about a minute, and stop it; without this they skip.
export ECPI_TEST_SLURM=1

status=0
step() {
  echo
  echo "==== $1"
  shift
  if ! "$@"; then
    echo "==== FAILED: $*"
    status=1
  fi
}

step "kernel for this run" bash scripts/setup-kernel.sh
step "go vet" go vet ./...
# CI shows the end of this script's output, where a timed-out test binary's goroutine dump would bury
# the test that hung: go test's output is also kept, and its failures are summed up last.
gotest_log=$(mktemp)
trap 'rm -rf "$gotest_log" "$test_state"' EXIT
go_test() { go test -count=1 -timeout 30m ./... 2>&1 | tee "$gotest_log"; }
step "go test (Go backend)" go_test
step "models on every backend" bash scripts/test-models-backends.sh
# The GPU check's CPU half (scripts/gpu-check.sh): the carried binaries, without Go, through every step on the XLA
# CPU plugin; its results go to a temporary folder, kept only when it fails.
gpu_check_cpu() { local out; out=$(mktemp -d) && bash scripts/gpu-check.sh prepare && bash scripts/gpu-check.sh run --cpu --out "$out" && rm -rf "$out"; }
step "GPU check, CPU half" gpu_check_cpu
# Fuzzing, 10 s a target: the command parser, option values, the checkpoint reader. A failing input
# is kept in the package's testdata/fuzz, which plain `go test` then replays. Inputs of tens of KB
# (a checkpoint) would spend the whole budget being minimised, hence -fuzzminimizetime 0.
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime 10s -fuzzminimizetime 0 "./$1"; }
for target in "repl FuzzParse" "repl FuzzExecute" "option FuzzValues" "train FuzzOptionValues" "train FuzzCheckpointReader"; do
  step "fuzz $target (10 s)" fuzz $target
done
if [ -x scripts/test-notebooks.sh ]; then
  step "notebooks (quick mode)" bash scripts/test-notebooks.sh
fi
step "make notebook serves" bash tests/notebook_server_test.sh
# Every committed verdict must follow from its stored values under the protocol (a hand edit fails here).
step "experiments verify" bin/ecpi experiments verify
# The compose file is validated without a Docker engine; docker-compose (1.29) comes from Debian.
if ! command -v docker-compose >/dev/null 2>&1; then
  { [ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] || apt-get update -qq; } &&
    apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi
step "docker-compose file" bash tests/compose_test.sh
step "make demo reaches words (about 3 min)" bash tests/demo_test.sh
if grep -q -E '^(--- FAIL|FAIL|panic: )' "$gotest_log"; then
  echo
  echo "==== go test's failures, in short (the whole output is above)"
  # A timeout names the running tests; the frames in _test.go files say where each one waits.
  awk '/^panic: test timed out/ {on = 1} on && /^$/ {exit} on' "$gotest_log"
  grep -E '^(--- FAIL|FAIL)|_test\.go:[0-9]+' "$gotest_log" | head -40
fi
echo
if [ $status -eq 0 ]; then echo "==== all test steps passed"; else echo "==== some test steps FAILED"; fi
exit $status
