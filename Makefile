# gpukit: `make report` renders the report, `make test` runs the tests.
# Both start from a bare Python 3.11+: the virtual environment, the pinned packages,
# the package itself and its Jupyter kernel are set up by `make setup` (idempotent).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gpukit-setup
# GPU=1 adds TensorFlow's CUDA libraries (tensorflow[and-cuda]) for an NVIDIA GPU.
GPU    ?=
# Extra arguments for `gpukit report`, e.g. make report ARGS='-p gpus "[A40, V100]"'
ARGS   ?=
# Extra arguments for pytest, e.g. make test PYTEST_ARGS='-k specs'
PYTEST_ARGS ?=
# `make test` runs in this many pytest-xdist workers, a test file to a worker (a module's fixtures are
# made once; tests/test_measurements.py measures one thing at a time). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2

TF_VERSION := $(shell sed -n 's/^tensorflow==//p' requirements.txt)
# uv installs the pinned packages: the same wheels pip would take, unpacked and compiled to bytecode
# on every core (here 44 to 59 s against 138 s for pip, which compiles one file at a time).
# Bytecode matters: without it every TensorFlow import compiles again (twice as slow). uv reads no
# pip.conf (a private index, certificates): where it cannot install, pip does, as before.
UV_VERSION := 0.13.9
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode --link-mode copy
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
define install
{ test -x $(BIN)/uv && $(UV) $(1); } || { echo "gpukit: uv could not install the packages; pip will (slower)"; $(PIP) $(1); }
endef

.PHONY: setup browser report test test-fast lint format lab docs accuracy walks clean help

help:
	@echo "make report   render the report into outputs/latest/index.html"
	@echo "make test     run the whole test suite (what CI runs)"
	@echo "make test-fast  the unit tier: no notebook kernels, no TensorFlow, nothing slow (under 30 s)"
	@echo "make lint     ruff: the formatter's check and the linter (make test runs it first)"
	@echo "make format   rewrite the tree in the house format (ruff format, then ruff check --fix)"
	@echo "make setup    create .venv, install pinned requirements, gpukit and its Jupyter kernel"
	@echo "make lab      JupyterLab on notebooks/"
	@echo "make docs     build docs/ into site/ with MkDocs (strict: a broken link fails)"
	@echo "make accuracy write again, from the committed runs, the data files gpukit reads (memory error bands)"
	@echo "make walks    write again the layer walks the kit ships for the README's questions (after editing gpukit/graph or gpukit/models)"
	@echo "make clean    remove .venv, .venv-docs and site/ (outputs/ is kept)"

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(PIP) uv==$(UV_VERSION) || echo "gpukit: pip could not install uv; it will install the packages itself (slower)"
	$(call install,-r requirements.txt)
	@if [ -n "$(GPU)" ]; then $(call install,"tensorflow[and-cuda]==$(TF_VERSION)"); fi
	$(PIP) --no-deps -e .
	$(BIN)/gpukit kernel
	@touch $@

report: setup
	$(BIN)/gpukit report $(ARGS)

test: setup browser lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The inner loop: tests marked neither `notebooks` (Jupyter kernels), `tensorflow` nor `slow`.
# pytest keeps its assertion-rewritten test modules, and Python the package's bytecode, in
# __pycache__ (ignored by git); where the environment asks for none (PYTHONDONTWRITEBYTECODE), every
# run would rewrite and compile them all again, some 5 s of the fast tier.
test test-fast: export PYTHONDONTWRITEBYTECODE :=
test-fast: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not notebooks and not tensorflow and not slow" $(PYTEST_ARGS)

# Style is ruff's, configured in pyproject.toml: the formatter's layout and the linter's rules.
LINT_PATHS := gpukit benchmarks tests tools

lint: setup
	$(BIN)/ruff format --check --quiet $(LINT_PATHS)
	$(BIN)/ruff check --quiet $(LINT_PATHS)

# The docs site: MkDocs and its theme in their own environment (.venv-docs), pinned in
# requirements-docs.txt, so the kit's pins never meet them. Strict: a warning fails the build.
DOCS_VENV := .venv-docs
DOCS_STAMP := $(DOCS_VENV)/.gpukit-docs

$(DOCS_STAMP): requirements-docs.txt
	@test -x $(DOCS_VENV)/bin/python || $(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-docs.txt
	@touch $@

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --quiet

# The files under data/ that gpukit reads at run time and an accuracy script writes: the memory
# estimate's error bands, from the measured runs committed under benchmarks/runs/ (re-estimated by
# this version, measured again by nothing). A test fails when they are stale.
MEMORY_RUNS := benchmarks/runs
accuracy: setup
	$(BIN)/python -m benchmarks.memory_accuracy --from-raw $(MEMORY_RUNS)/memory-accuracy-runs-*.json \
		--outside $(MEMORY_RUNS)/memory-outside-grid-runs.json \
		--bands data/memory_error.csv --model-bands data/memory_error_models.csv > /dev/null

# The layer walks the kit ships for the README's questions (gpukit/models/walks): remake them after
# an edit under gpukit/graph or gpukit/models, or a new Keras or TensorFlow (a test says when).
walks: setup
	$(BIN)/python -m benchmarks.walk_seeds

format: setup
	$(BIN)/ruff format --quiet $(LINT_PATHS)
	$(BIN)/ruff check --quiet --fix $(LINT_PATHS)

# The browser test loads the rendered report in Debian's Chromium. Install it where missing
# (root with apt-get); otherwise say so: that test then skips, naming the reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser test"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "gpukit: chromium is missing and cannot be installed here (needs root and apt-get); the browser test will skip"; fi; }

# JupyterLab refuses to run as root unless told; containers often are root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: setup
	$(BIN)/jupyter lab notebooks/ $(LAB_ARGS)

clean:
	rm -rf $(VENV) $(DOCS_VENV) site
