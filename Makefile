# trncost — build, test, synth and deploy. Every target sets up what it needs (.venv, node_modules).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
STAGE ?= dev
PYTEST_ARGS ?=
# make test's pytest workers (pytest-xdist): one per core; 0 runs in one process
PYTEST_WORKERS ?= auto

VENV := .venv
# What `make run` needs (requirements-run.txt), and everything else (synth, deploy, tests).
RUN_STAMP := $(VENV)/.trncost-run.stamp
VENV_STAMP := $(VENV)/.trncost.stamp
NODE_STAMP := node_modules/.trncost.stamp
# uv installs the pinned requirements (in parallel, from its cache): itself pinned, from PyPI.
UV_VERSION := 0.13.9
UV := $(VENV)/bin/uv
UV_PIP := $(UV) pip install --quiet --python $(VENV)/bin/python
RUN_ARGS ?=
CDK := npx --no-install cdk

# jsii (the bridge aws-cdk-lib runs on) warns on every call about Node 20; CDK CLI telemetry off.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true

.PHONY: help run test test-fast bench calibrate synth deploy openapi lint typecheck checkov clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  variables: PYTHON=$(PYTHON) STAGE=$(STAGE) PYTEST_ARGS=$(PYTEST_ARGS)"

$(UV):
	[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# the runtime alone: the CLI and `make run` (no CDK, no test tools)
$(RUN_STAMP): requirements-run.txt layers/trncost/requirements.txt pyproject.toml | $(UV)
	$(UV_PIP) -r requirements-run.txt
	$(UV_PIP) --no-build-isolation --no-deps -e .
	touch $@

$(VENV_STAMP): requirements.txt requirements-dev.txt $(RUN_STAMP)
	$(UV_PIP) -r requirements-dev.txt
	touch $@

# checkov in a virtualenv of its own (its pins clash with ours); the infra tests run it.
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.trncost.stamp
$(CHECKOV_STAMP): requirements-checkov.txt | $(UV)
	[ -x $(CHECKOV_VENV)/bin/python ] || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(UV) pip install --quiet --python $(CHECKOV_VENV)/bin/python -r requirements-checkov.txt
	touch $@

# Debian's chromium and chromium-driver for the e2e browser tests (the report pages rendered and
# measured for real, driven by Selenium). Installed when this runs as root with apt (CI, fresh
# machines); otherwise those tests say they are skipped.
CHROMIUM_STAMP := $(VENV)/.chromium.stamp
$(CHROMIUM_STAMP): | $(VENV_STAMP)
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian chromium and chromium-driver for the e2e browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	    chromium-driver >/dev/null) \
	    || echo "chromium could not be installed: the browser tests will be skipped"; \
	else echo "chromium or chromedriver missing and not root: the browser tests will be skipped"; fi
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

run: $(RUN_STAMP) ## serve the API locally on http://127.0.0.1:8080 (embedded AWS, example seeded; RUN_ARGS="--port N")
	$(VENV)/bin/trncost serve $(RUN_ARGS)

test: export AWS_DEFAULT_REGION := us-east-1
test: export AWS_ACCESS_KEY_ID := testing
test: export AWS_SECRET_ACCESS_KEY := testing
test: $(VENV_STAMP) $(CHECKOV_STAMP) $(CHROMIUM_STAMP) ## lint, type-check, then run the test suite (PYTEST_ARGS="-m infra" etc.)
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(MAKE) --no-print-directory typecheck
ifeq ($(PYTEST_WORKERS),0)
	$(VENV)/bin/python -m pytest -q $(PYTEST_ARGS)
else
	@# on every core, then the schemathesis tests in one process (tests/conftest.py says why);
	@# exit 5 is "PYTEST_ARGS selected none here"
	$(VENV)/bin/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder \
	  $(PYTEST_ARGS) || [ $$? -eq 5 ]
	TRNCOST_TESTS=serial $(VENV)/bin/python -m pytest -q $(PYTEST_ARGS) || [ $$? -eq 5 ]
endif

test-fast: export AWS_DEFAULT_REGION := us-east-1
test-fast: export AWS_ACCESS_KEY_ID := testing
test-fast: export AWS_SECRET_ACCESS_KEY := testing
test-fast: $(VENV_STAMP) ## the inner loop: the unit tier without infra and slow tests (< 30 s)
	$(VENV)/bin/python -m pytest -q -m "not infra and not slow" $(PYTEST_ARGS) tests/unit

bench: $(VENV_STAMP) ## print the benchmark figures (estimate, prices, ingest, API, analysis, trial logs, billing exports, JSON check, reads)
	$(VENV)/bin/python benchmarks/bench_estimate.py
	$(VENV)/bin/python benchmarks/bench_prices.py
	$(VENV)/bin/python benchmarks/bench_ingest.py
	$(VENV)/bin/python benchmarks/bench_api.py
	$(VENV)/bin/python benchmarks/bench_analysis.py
	$(VENV)/bin/python benchmarks/bench_logs.py
	$(VENV)/bin/python benchmarks/bench_actuals.py
	$(VENV)/bin/python benchmarks/bench_safejson.py
	$(VENV)/bin/python benchmarks/bench_reads.py

calibrate: $(VENV_STAMP) ## P10–P90 coverage and P50 error against public multi-scale training results
	$(VENV)/bin/python benchmarks/calibrate.py

synth: $(VENV_STAMP) $(NODE_STAMP) ## synthesize all stages to cdk.out (offline)
	$(CDK) synth --no-notices -q

deploy: $(VENV_STAMP) $(NODE_STAMP) ## deploy STAGE (default dev) to the current AWS credentials
	$(CDK) deploy --no-notices -c stage=$(STAGE) '$(STAGE)/*'

openapi: $(VENV_STAMP) ## regenerate the OpenAPI document, layers/trncost/api/openapi.json (openapi.json links to it)
	$(VENV)/bin/python -m trncost.api.openapi layers/trncost/api/openapi.json

checkov: $(VENV_STAMP) $(CHECKOV_STAMP) ## checkov over the synthesized templates (findings not acknowledged in stacks/checkov.py)
	$(VENV)/bin/python -m pytest -q tests/infra/test_checkov.py

lint: $(VENV_STAMP) ## ruff check and ruff format --check (the pre-commit hooks run the same)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV_STAMP) ## mypy (pydantic plugin; strict on model, estimate, services, store, errors)
	$(VENV)/bin/mypy
	@for h in lambdas/*/handler.py; do $(VENV)/bin/mypy --no-error-summary "$$h" || exit 1; done

clean: ## remove .venv, node_modules, cdk.out and stamps
	rm -rf $(VENV) $(CHECKOV_VENV) node_modules cdk.out .pytest_cache .ruff_cache .hypothesis
