# ecpi — the two commands that matter: `make demo` and `make test`.
SHELL := /bin/bash
ENV := source scripts/env.sh &&

.PHONY: setup toolchain data xla-plugin kernel build demo test check notebook test-notebooks experiments bench bench-peer docker docker-test clean

## setup: everything a fresh machine needs (Go toolchain, data, XLA plugin, Jupyter kernel).
setup: toolchain data xla-plugin kernel build

toolchain:
	bash scripts/setup-toolchain.sh

data: toolchain
	bash scripts/setup-data.sh

xla-plugin: toolchain
	bash scripts/setup-xla.sh

kernel: toolchain build xla-plugin
	bash scripts/setup-kernel.sh

build: toolchain
	$(ENV) go build -o bin/ecpi ./cmd/ecpi

## demo: set up what is missing, train a small ECP model on real text and report.
demo: setup
	bash scripts/demo.sh

## test: set up what is missing, then run every test (Go packages, CLI, REPL, notebooks). The notebooks' kernel is
## installed for the run only (scripts/test.sh), so the user's own stays as `make kernel` left it.
test: toolchain data xla-plugin build
	bash scripts/test.sh

## check: everyday work: go vet and the Go tests with -short on the Go backend (under a minute;
## needs `make setup` once). `make test` is the whole suite.
check: build
	$(ENV) go vet ./... && GOMLX_BACKEND=go go test -short -count=1 ./...

## notebook: Jupyter with the ecpi kernel on 127.0.0.1 (installs what is missing); prints the URL with its token.
notebook: kernel
	bash scripts/notebook.sh

## test-notebooks: only the notebooks, headless in quick mode (needs `make kernel`).
test-notebooks: kernel
	bash scripts/test-notebooks.sh

## experiments: every notebook in full mode, outputs saved in place, then EXPERIMENTS.md rebuilt from their results
## (hours on 2 cores; NOTEBOOKS="01-ecp-language-modeling 04-pi-attention-language-modeling" runs some only).
experiments: kernel
	bash scripts/run-notebooks.sh $(NOTEBOOKS)
	$(ENV) bin/ecpi experiments

## bench: attention and training benchmarks (the numbers in the README).
bench: build
	$(ENV) bin/ecpi bench attention models=full,local,s2,ecp,pi n=1024,2048,4096
	$(ENV) go test -run '^$$' -bench . -benchtime 3x ./bench/

## bench-peer: ecpi against its PyTorch twins, interleaved, as a Markdown table (bench/peer/README.md).
## Installs PyTorch from PyPI into $$ECPI_HOME/venv-peer when missing. Quick (minutes): make bench-peer PEER=--quick
bench-peer: build data xla-plugin
	$(ENV) py=$$(bash bench/peer/setup.sh) && $$py bench/peer/selftest.py --quiet && $$py bench/peer/run.py $(PEER)

## docker: build the workshop image and start its Jupyter container (offline-capable; see docs/docker.md).
docker:
	bash scripts/docker.sh

docker-test:
	bash scripts/docker-test.sh

clean:
	rm -rf bin
