# Two commands matter: `make preview` (the offline preview of the reference stack) and
# `make test` (lint + the whole suite). Both create or refresh the locked environment.
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
RUN := $(UV) run --locked

.PHONY: e2e e2e-build env bytecode scan-env s3-standin nginx bwrap preview test lint format typecheck bench suite-profile check cost scan clean schema package-check docs

env: .venv/.aistack-synced

# aistack's own modules compiled, as `uv sync --compile-bytecode` compiles the SDKs (it
# leaves the editable project out): with PYTHONDONTWRITEBYTECODE set, every process would
# otherwise compile them again (about 0.35 s per preview and per test worker). Files that
# are up to date are skipped.
bytecode: env
	@$(RUN) python -m compileall -q -j 0 aistack components/aistack_components stacks >/dev/null

# Only what scans need: `make preview` does not pay for checkov's install.
scan-env: env tools/checkov/.venv/.aistack-synced

.venv/.aistack-synced: pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --locked --compile-bytecode
	@touch $@

# checkov in its own locked environment: it cannot share a resolution with pulumi
# (tools/checkov/pyproject.toml says why). `aistack scan` finds it there.
tools/checkov/.venv/.aistack-synced: tools/checkov/pyproject.toml tools/checkov/uv.lock
	$(UV) sync --locked --compile-bytecode --project tools/checkov
	@touch $@

# The AWS CLI and moto's S3 server the pod-view tests run a weights sync with, locked on
# their own (tools/s3-standin/pyproject.toml says why).
s3-standin: tools/s3-standin/.venv/.aistack-synced

tools/s3-standin/.venv/.aistack-synced: tools/s3-standin/pyproject.toml tools/s3-standin/uv.lock
	$(UV) sync --locked --project tools/s3-standin
	@touch $@

preview: bytecode
	$(RUN) aistack preview .

check: env
	$(RUN) aistack check .

cost: env
	$(RUN) aistack cost .

# checkov, the IAM action database and the Kubernetes schemas over every example stack
# (docs/scan.md). `make test` runs the same through tests/scan/, once per session.
scan: scan-env
	$(RUN) aistack scan .
	$(RUN) aistack scan stacks/minimal-training
	$(RUN) aistack scan stacks/gcp-guardrails
	$(RUN) aistack scan stacks/kubernetes
	$(RUN) aistack scan stacks/kubernetes-eks
	$(RUN) aistack scan stacks/kubernetes-operators
	$(RUN) aistack scan stacks/kubernetes-gke
	$(RUN) aistack scan stacks/gcp-training
	$(RUN) aistack scan stacks/gcp

# The component package's generated TypedDicts and its schema, from the pydantic Args
# (components/aistack_components/codegen.py); tests/components/ fails when they are stale.
schema: env
	cd components && PYTHONPATH=. $(abspath .venv/bin/python) -m aistack_components.codegen

lint: env
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) mypy aistack tests/typed_api

typecheck: env
	$(RUN) mypy aistack tests/typed_api

format: env
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

# The gateway tests drive a real nginx (shellcheck comes from the lock as a wheel).
# Installed with the system package manager when missing; one line says how otherwise.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "installing nginx-light (the gateway tests run a real nginx)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >/dev/null; \
	  else \
	    echo "error: the tests need nginx: install it (Debian/Ubuntu: sudo apt-get install nginx-light; macOS: brew install nginx), then run make test again" >&2; \
	    exit 2; \
	  fi; }

# The pod-view tests (tests/_harness/pod_view.py) build each container's filesystem with
# bubblewrap, without a container engine.
bwrap:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "installing bubblewrap (the pod-view tests run programs in each pod's filesystem)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null; \
	  else \
	    echo "error: the tests need bubblewrap: install it (Debian/Ubuntu: sudo apt-get install bubblewrap), then run make test again" >&2; \
	    exit 2; \
	  fi; }

# ruff first (a second); mypy beside the suite, at the lowest CPU priority: on a fresh clone
# (no .mypy_cache) it takes 45-50 s of one core, reading the cloud SDKs' stubs. Niced, it
# takes only the CPU the suite leaves idle and finishes after it, so pytest's clock shows the
# suite's own time (on fresh clones, 124-136 s by pytest's clock at the same priority, 83-95 s
# niced). Either failing fails the target; mypy's report follows the suite's.
#
# pytest keeps its assert-rewritten test modules in __pycache__ only where Python may write
# bytecode: with PYTHONDONTWRITEBYTECODE set, each xdist worker would parse, rewrite and
# compile every test module again on every run (about 3.7 s of CPU per worker).
test: bytecode nginx bwrap scan-env s3-standin
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	@typecheck_log=$$(mktemp); \
	nice -n 19 $(RUN) mypy aistack tests/typed_api >"$$typecheck_log" 2>&1 & typecheck=$$!; \
	env -u PYTHONDONTWRITEBYTECODE $(RUN) pytest -n auto --durations=20; suite=$$?; \
	wait $$typecheck; typed=$$?; \
	echo "$(RUN) mypy aistack tests/typed_api"; cat "$$typecheck_log"; rm -f "$$typecheck_log"; \
	[ $$suite = 0 ] && [ $$typed = 0 ]
	$(RUN) python tools/package-check/check.py
	@site=$$(mktemp -d); NO_MKDOCS_2_WARNING=1 $(RUN) mkdocs build --strict --quiet --site-dir "$$site"; built=$$?; rm -rf "$$site"; [ $$built = 0 ]

# The real engine (docs/e2e.md): the Pulumi CLI, the Kubernetes provider, etcd, the
# Kubernetes control plane, kwok, Kueue and JobSet built from source through the Go module
# proxy, once per version (tools/e2e/versions.env) into ~/.cache/aistack-e2e, then
# e2e/ runs the example stacks' `pulumi up` against them, on loopback, each test bounded.
e2e-build:
	tools/e2e/build.sh

e2e: env bwrap e2e-build
	env -u PYTHONDONTWRITEBYTECODE $(RUN) python -m pytest e2e --timeout=900 -rA

# The docs site (mkdocs.yml) into site/, strictly: a broken link or reference fails.
docs: env
	NO_MKDOCS_2_WARNING=1 $(RUN) mkdocs build --strict --site-dir site

# The wheel in a clean environment with aistack[gcp] only: stacks/gcp previews without the
# AWS and Kubernetes SDKs (tools/package-check/check.py).
package-check: env
	$(RUN) python tools/package-check/check.py

bench: bytecode
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }
	$(RUN) python benchmarks/preview_bench.py
	$(RUN) python benchmarks/gateway_bench.py

# Where the suite's CPU goes: workers, session jobs, the engine (runs, resources, refusals,
# repeated builds) and the floor of its CPU over the machine's cores (docs/performance.md).
suite-profile: bytecode nginx bwrap scan-env s3-standin
	$(RUN) python benchmarks/suite_profile.py

clean:
	rm -rf .venv tools/checkov/.venv .ruff_cache .pytest_cache
