# terraform-provider-gpu — `make demo`, `make test`. See README.md.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

export CARGO_TARGET_DIR ?= $(CURDIR)/target
VENV ?= $(CURDIR)/.venv
export VENV
PROVIDER_BIN ?= $(CARGO_TARGET_DIR)/debug/terraform-provider-gpu
export PROVIDER_BIN
PYTEST_ARGS ?= -q

CARGO ?= cargo
PY := $(VENV)/bin/python
TERRAFORM := $(VENV)/bin/terraform

.PHONY: help build venv demo test unit acceptance bench docs fuzz fmt lint clean

help:
	@echo "make demo    build the provider and run a real 'terraform plan' of examples/quickstart"
	@echo "make test    fmt check, clippy, unit tests, then the acceptance suite (real Terraform)"
	@echo "make build   cargo build of the provider (debug)"
	@echo "make venv    Python venv with Terraform 1.15 and 1.0.3 for the acceptance suite"
	@echo "make bench   start-up latency, memory, plan-time and offer-query figures (vs gpuhunt)"
	@echo "make docs    regenerate docs/ from the provider schema"
	@echo "make fuzz    fuzz the msgpack and JSON value decoders (FUZZ_SECONDS each, default 300)"
	@echo "make fmt | lint | clean"

build:
	$(CARGO) build -p terraform-provider-gpu

venv:
	@acceptance/setup.sh

# A real plan of examples/quickstart, through dev_overrides: no init, no credentials.
demo: build venv
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	printf 'provider_installation {\n  dev_overrides {\n    "registry.terraform.io/gpu-tf/gpu" = "%s"\n  }\n  direct {}\n}\n' \
	  "$$(dirname "$(PROVIDER_BIN)")" > "$$tmp/terraformrc"; \
	cp -r examples/quickstart "$$tmp/quickstart"; \
	export TF_CLI_CONFIG_FILE="$$tmp/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1; \
	echo; echo "== $$($(TERRAFORM) version | head -n1), provider $(PROVIDER_BIN)"; \
	echo "== examples/quickstart/main.tf:"; echo; sed 's/^/    /' examples/quickstart/main.tf; \
	echo; echo "== terraform plan"; echo; \
	$(TERRAFORM) -chdir="$$tmp/quickstart" plan -input=false -compact-warnings $$([ -t 1 ] || echo -no-color)

unit: venv
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p gpu-core --no-default-features --all-targets -- -D warnings
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
	  echo "$(CARGO) nextest run --workspace"; $(CARGO) nextest run --workspace --no-tests=warn; \
	else \
	  echo "cargo-nextest not found; using cargo test"; $(CARGO) test --workspace; \
	fi

acceptance: build venv
	$(PY) -m pytest acceptance $(PYTEST_ARGS)

test: unit acceptance

# Start-up/plan figures, then offer-query figures against gpuhunt (installed here only).
# BENCH_RELEASE=1 also builds the release provider, which bench_offers.py then times.
bench: build venv
	$(PY) acceptance/bench.py
	$(PY) -m pip install -q --disable-pip-version-check -r acceptance/bench-requirements.txt
	@if [ -n "$(BENCH_RELEASE)" ]; then $(CARGO) build --release -p terraform-provider-gpu; fi
	CARGO="$(CARGO)" $(PY) acceptance/bench_offers.py

# libFuzzer through cargo-fuzz on the stable toolchain: RUSTC_BOOTSTRAP lets cargo-fuzz pass
# its -Z flags; no sanitizer runtime is needed with --sanitizer none (the decoders are safe
# Rust: a crash is a panic, which libFuzzer reports without ASan).
FUZZ_SECONDS ?= 300
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	cd crates/tfplugin/fuzz && for t in msgpack_decode json_decode; do \
	  CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)/fuzz" RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run --sanitizer none $$t -- -max_total_time=$(FUZZ_SECONDS); \
	done

docs: build
	$(PROVIDER_BIN) docs --dir $(CURDIR)

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf "$(VENV)" acceptance/.work .pytest_cache acceptance/.pytest_cache
	find acceptance -name __pycache__ -type d -prune -exec rm -rf {} +
