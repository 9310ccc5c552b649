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

.PHONY: help build venv demo test unit unit-tests acceptance bench docs catalog fuzz fuzz-install fuzz-short reliability fmt lint clean release install

help:
	@echo "make demo    build the provider and run a real 'terraform plan' of examples/quickstart"
	@echo "make test    fmt check, clippy, unit tests, then the acceptance suite (real Terraform)"
	@echo "make build   cargo build of the provider and tfplugin's example provider (debug)"
	@echo "make venv    Python venv with Terraform 1.15 and 1.0.3 for the acceptance suite"
	@echo "make bench   start-up latency, memory, plan-time and offer-query figures (vs gpuhunt)"
	@echo "make docs    regenerate docs/ from the provider schema"
	@echo "make catalog rebuild crates/core/data/offers.csv from the live price APIs (internet; see SOURCE.md)"
	@echo "make fuzz    fuzz the msgpack and JSON value decoders (FUZZ_SECONDS each, default 300)"
	@echo "make fuzz-short  15 s per fuzz target (FUZZ_SHORT_SECONDS), reliability rows, fails on a crash"
	@echo "make reliability  faults, interruption, bad input, secrets, mTLS, fuzz: the table (all rows at goal)"
	@echo "make release  the registry's files for this platform under dist/ (zip, SHA256SUMS, manifest)"
	@echo "make install  the provider in Terraform's local mirror (~/.terraform.d/plugins): plain 'terraform init'"
	@echo "make fmt | lint | clean"

# The provider, and tfplugin's example provider (the tfplugin acceptance test and the
# start-up baseline of `make bench`), in one invocation over the workspace: every
# dependency is built with the features the whole workspace asks for, as the unit tests
# build it, so after `make unit` this only links the binaries (building `-p` one package
# at a time gave shared dependencies other features and rebuilt ~60 crates).
build:
	$(CARGO) build --workspace --bins --examples

venv:
	@acceptance/setup.sh

# The files the Terraform registry publishes for one platform, from a release build:
# dist/terraform-provider-gpu_<version>_<os>_<arch>.zip, _SHA256SUMS, _manifest.json.
release: venv
	$(CARGO) build --release -p terraform-provider-gpu
	$(PY) scripts/release.py package --binary "$(CARGO_TARGET_DIR)/release/terraform-provider-gpu" --out "$(CURDIR)/dist"

# The provider where Terraform looks without any CLI configuration (its implied local
# mirror), so `source = "gpu-tf/gpu"` works with plain `terraform init`.
install: venv
	$(CARGO) build --release -p terraform-provider-gpu
	$(PY) scripts/release.py install --binary "$(CARGO_TARGET_DIR)/release/terraform-provider-gpu"

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

# fmt, clippy (the workspace; gpu-core without its cloud features; tfplugin without its
# server, as the fuzz targets build it), then the unit tests.
unit: lint unit-tests

unit-tests: venv
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
	  echo "$(CARGO) nextest run --workspace"; $(CARGO) nextest run --workspace --no-tests=warn; \
	else \
	  echo "cargo-nextest not found; using cargo test"; $(CARGO) test --workspace; \
	fi

# Two pytest sessions at once (acceptance/run_suite.sh): the modules that keep a core
# busy in ACCEPTANCE_JOBS workers (one per core), those marked `waits` in
# ACCEPTANCE_WAIT_JOBS (more than the cores: they mostly sleep). A module stays in one
# worker (`--dist loadfile`): modules share no emulator, so they are independent.
ACCEPTANCE_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ACCEPTANCE_WAIT_JOBS ?= 4
ACCEPTANCE_TMP ?= $(CARGO_TARGET_DIR)/acceptance-tmp
acceptance: build venv
	@rm -rf acceptance/.reliability
	acceptance/run_suite.sh $(PY) $(ACCEPTANCE_JOBS) $(ACCEPTANCE_WAIT_JOBS) "$(ACCEPTANCE_TMP)" $(PYTEST_ARGS)
	@echo; $(PY) acceptance/reliability_report.py --present

# The lints and the venv's downloads at once (one waits on the CPU, the other on the
# network), then the unit tests, then the acceptance suite.
test:
	@$(MAKE) --no-print-directory -j2 lint venv
	@$(MAKE) --no-print-directory unit-tests
	@$(MAKE) --no-print-directory acceptance

# Start-up/plan figures, then offer-query figures against gpuhunt (installed here only).
# BENCH_RELEASE=1 also builds the release provider, which bench_offers.py then times.
bench: build venv
	$(PY) acceptance/bench.py
	$(PY) -m pip install -q --disable-pip-version-check -r acceptance/bench-requirements.txt
	@if [ -n "$(BENCH_RELEASE)" ]; then $(CARGO) build --release -p terraform-provider-gpu; fi
	CARGO="$(CARGO)" $(PY) acceptance/bench_offers.py

# libFuzzer through cargo-fuzz on the stable toolchain: RUSTC_BOOTSTRAP lets cargo-fuzz pass
# its -Z flags; no sanitizer runtime is needed with --sanitizer none (the decoders are safe
# Rust: a crash is a panic, which libFuzzer reports without ASan). Each target starts from
# its corpus (git-ignored, grows run to run) plus the committed regressions/<target>/
# inputs, which `cargo test` also runs (crates/tfplugin/tests/fuzz_regressions.rs).
FUZZ_SECONDS ?= 300
FUZZ_SHORT_SECONDS ?= 15
FUZZ_TARGETS := msgpack_decode json_decode
FUZZ_DIR := crates/tfplugin/fuzz
FUZZ_LOG_DIR ?= $(CARGO_TARGET_DIR)/fuzz-logs
FUZZ_ENV := CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)/fuzz" RUSTC_BOOTSTRAP=1
FUZZ_RUN = $(FUZZ_ENV) $(CARGO) fuzz run --sanitizer none $$t corpus/$$t regressions/$$t --
PYTHON ?= python3

# cargo finds cargo-fuzz in $$CARGO_HOME/bin even when that is not on PATH.
fuzz-install:
	@$(CARGO) fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked

fuzz: fuzz-install
	cd $(FUZZ_DIR) && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t; \
	  $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS); \
	done

# The short CI run: FUZZ_SHORT_SECONDS per target (built first, so the time is fuzzing),
# logs in FUZZ_LOG_DIR, then tools/fuzz_summary.py writes the `fuzz executions` and
# `fuzz crashes` reliability rows and fails on a crash.
fuzz-short: fuzz-install
	@rm -rf "$(FUZZ_LOG_DIR)"; mkdir -p "$(FUZZ_LOG_DIR)"
	cd $(FUZZ_DIR) && for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_ENV) $(CARGO) fuzz build --sanitizer none $$t; \
	done
	@cd $(FUZZ_DIR) && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t; rc=0; \
	  echo "fuzzing $$t for $(FUZZ_SHORT_SECONDS) s (log: $(FUZZ_LOG_DIR)/$$t.log)"; \
	  $(FUZZ_RUN) -max_total_time=$(FUZZ_SHORT_SECONDS) -print_final_stats=1 \
	    > "$(FUZZ_LOG_DIR)/$$t.log" 2>&1 || rc=$$?; \
	  echo $$rc > "$(FUZZ_LOG_DIR)/$$t.rc"; \
	done
	$(PYTHON) tools/fuzz_summary.py --seconds $(FUZZ_SHORT_SECONDS) --log-dir "$(FUZZ_LOG_DIR)" $(FUZZ_TARGETS)

# The reliability table (issue 6): the fault, interruption, bad-input, secret and mTLS
# tests (FAULT_RUNS seeded fault runs; `make test` runs 2), the short fuzz run, then every
# row printed; fails when a row misses its goal or is missing. Runs everything first.
FAULT_RUNS ?= 5
RELIABILITY_TESTS := $(addprefix acceptance/tests/,protocol/test_bad_input.py \
  node_pool/test_faults.py node_pool/test_node_pool_aks_gke.py \
  node_pool/test_many_pools_aks_gke.py \
  node_pool/test_interrupt.py protocol/test_secrets.py \
  protocol/test_plugin_mtls.py)
reliability: build venv
	@rm -rf acceptance/.reliability; rc=0; \
	FAULT_RUNS=$(FAULT_RUNS) $(PY) -m pytest $(RELIABILITY_TESTS) -n $(ACCEPTANCE_JOBS) --dist loadfile $(PYTEST_ARGS) || rc=1; \
	$(MAKE) --no-print-directory fuzz-short PYTHON=$(PY) || rc=1; \
	echo; $(PY) acceptance/reliability_report.py || rc=1; \
	exit $$rc

docs: build
	$(PROVIDER_BIN) docs --dir $(CURDIR)

# Rebuild the embedded snapshot from the live price sources (needs internet; Google's
# needs GOOGLE_CLOUD_BILLING_API_KEY, AWS spot the usual AWS credentials; a source that
# cannot answer leaves its prices as they were, with a warning). Writes
# crates/core/data/offers.csv and crates/core/data/PROVENANCE.md; review, then commit.
catalog: build
	$(PROVIDER_BIN) catalog --out crates/core/data/offers.csv --provenance crates/core/data/PROVENANCE.md

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p gpu-core --no-default-features --all-targets -- -D warnings
	$(CARGO) clippy -p tfplugin --no-default-features --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf "$(VENV)" acceptance/.work .pytest_cache acceptance/.pytest_cache
	find acceptance -name __pycache__ -type d -prune -exec rm -rf {} +
