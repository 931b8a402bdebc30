# The chapter's commands. Each one sets up .venv first (created and filled when
# missing, refreshed when requirements.txt or pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP_FLAGS ?= --no-cache-dir --disable-pip-version-check --quiet
# Chapter notebooks in reading order; `make execute NB=notebooks/01_x.ipynb` runs one.
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
SOLUTIONS := $(sort $(wildcard notebooks/solutions/*.ipynb))
NB ?= $(NOTEBOOKS) $(SOLUTIONS)

# The venv's own kernel, whatever kernels the user has installed elsewhere;
# and Jupyter's platform-dirs migration notice kept quiet.
export JUPYTER_PATH := $(CURDIR)/$(VENV)/share/jupyter
export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help chapter test execute lab lint bench clean

help:
	@echo "make chapter   execute every notebook and render the chapter into build/"
	@echo "make test      unit tests + every notebook re-executed by nbval (strict)"
	@echo "make execute   re-run notebooks in place to refresh their stored outputs"
	@echo "make lab       JupyterLab on notebooks/"
	@echo "make lint      ruff over d2lutil/, tests/, tools/, benchmarks/ and the notebooks"
	@echo "make bench     benchmarks (writes build/bench/)"

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade "pip>=24"
	$(BIN)/python -m pip install $(PIP_FLAGS) -r requirements.txt
	$(BIN)/python -m pip install $(PIP_FLAGS) --no-deps d2l==1.0.3
	touch $@

chapter: $(STAMP)
	$(BIN)/python tools/chapter.py render --out build $(NOTEBOOKS)

test: $(STAMP)
	$(BIN)/python -m pytest

execute: $(STAMP)
	$(BIN)/python tools/chapter.py execute $(NB)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks

lint: $(STAMP)
	$(BIN)/ruff check d2lutil tests tools benchmarks notebooks

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --out build/bench

clean:
	rm -rf build
