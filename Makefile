# Two entry points do all the set-up on a fresh machine (Python 3.11 + pip):
#   make demo   -> creates .venv, installs the package (no dev tools), reviews the contract lab over real HTTP
#   make test   -> creates .venv, installs the package with dev tools (and redis-server + nginx from
#                  Debian when missing, for the scale-out tests), runs lint, types and tests
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: services interop-peers demo test test-under-load api-docs test-fast lint typecheck artifacts-check pytest bench conformance conformance-docs interop interop-docs poisoning-real-servers poisoning-real-servers-docs load reliability-docs

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# The demo needs the package alone, not the dev tools (a .venv that `make test` made has the package too).
# Its cost is mostly CPU: ~26 s of it measured on the documented machine (venv 4 s, pip 15-18 s, the review
# 3 s), plus the index's answers; the wall time grows with the machine's load (236 s at a load of ~10).
# Modules are compiled when first imported, not all at install (--no-compile: the demo imports a part).
$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --no-compile --disable-pip-version-check -e .
	touch $@

demo: $(VENV)/.runtime
	$(VENV)/bin/agent-connector review --demo

lint: $(VENV)/.installed
	$(PY) -m ruff check src tests bench scripts examples
	$(PY) -m ruff format --check src tests bench scripts examples

typecheck: $(VENV)/.installed
	$(PY) -m mypy --strict src tests

artifacts-check: $(VENV)/.installed
	$(PY) -m scripts.generate_schema_disclosure --check

# The scale-out tests start real redis-server and nginx processes (on ephemeral loopback ports).
services:
	sh scripts/ensure_services.sh

# The interop tests' peers: Node 22 and the npm packages of interop/package-lock.json (integrity-checked)
# and the Python peers of interop/python-peers.txt, into .cache/ (about 30 s on a fresh machine, and a
# check of each pin, about a second, when they are there). Set-up, not a test: pytest only looks them up.
interop-peers: $(VENV)/.installed
	$(PY) -m scripts.interop --install-only

# The suite runs on PYTEST_WORKERS processes (pytest-xdist), a test module per worker at a time (its
# module fixtures start once); most tests wait on real servers, so three workers keep two cores busy.
# --durations lists the slowest tests at the end of every run.
PYTEST_WORKERS ?= 3
pytest: $(VENV)/.installed services interop-peers
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=25

# The inner loop: unit and in-process tests only (no CLI processes, shell blocks, real HTTP servers or
# npm peers; see the `process` marker in tests/conftest.py).
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "not process"

# The static checks `make test` runs before pytest (`.ci/run` also runs them beside the conformance suite,
# so a failing check stops CI early; `make test STATIC_CHECKS=` skips them when they just ran).
STATIC_CHECKS ?= lint typecheck artifacts-check
test: $(STATIC_CHECKS) api-docs pytest

# `make test` beside a CPU-bound load of LOAD processes (scripts/cpu_load.py; 2 by default, `LOAD=1`
# for one): no test may depend on the machine's speed, and a busy machine is where that shows.
LOAD ?= 2
test-under-load: $(VENV)/.installed
	$(PY) -m scripts.cpu_load $(LOAD) -- $(MAKE) test

# The API reference from the docstrings (mkdocs + mkdocstrings, mkdocs.yml): built --strict, so a
# docstring the parser cannot read or a broken reference fails `make test`. Output: .cache/api-site/.
api-docs: $(VENV)/.installed
	$(VENV)/bin/mkdocs build --strict --quiet

# External conformance: the official MCP suite (pinned) on Node 22 from the npm registry, cached in .cache/.
conformance: $(VENV)/.installed
	$(PY) -m scripts.conformance

conformance-docs: $(VENV)/.installed
	$(PY) -m scripts.conformance_table

# Interop matrix: our host against pinned third-party MCP servers (npm, lock-verified) on the same Node 22;
# fails when a cell fails or docs/interop.md is stale. `make interop-docs` rewrites the file.
interop: $(VENV)/.installed
	$(PY) -m scripts.interop --check-docs

interop-docs: $(VENV)/.installed
	$(PY) -m scripts.interop --docs

# False positives of the poisoning rules on 13 real servers (their own pinned set in interop/poisoning/,
# ~500 MB, about a minute to install, so only here); fails on any finding or when the table in docs/reference.md or the listings in
# tests/core/contracts/real_servers/ are stale. `make poisoning-real-servers-docs` rewrites both.
poisoning-real-servers: $(VENV)/.installed
	$(PY) -m scripts.poisoning_real_servers --check-docs

poisoning-real-servers-docs: $(VENV)/.installed
	$(PY) -m scripts.poisoning_real_servers --docs

# Benchmarks print ratios measured side by side in one run (they fetch the pinned GitHub description).
bench: $(VENV)/.installed
	$(PY) -m bench.product_path
	$(PY) -m bench.disclosure_build
	$(PY) -m bench.disclosure_read
	$(PY) -m bench.disclosure_scale
	$(PY) -m bench.contract_overhead
	$(PY) -m bench.host_core
	$(PY) -m bench.validator_choice
	$(PY) -m bench.scale_out

# Load and soak on loopback (50 clients, two rounds); and docs/reliability.md regenerated from a fresh run.
load: $(VENV)/.installed
	$(PY) -m bench.load

reliability-docs: $(VENV)/.installed
	$(PY) -m scripts.reliability_report
