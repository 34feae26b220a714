# Two commands for a newcomer (see README.md):
#   make lab    install everything into .venv and open the course in JupyterLab
#   make test   install everything into .venv and run the whole test suite
# Both are idempotent: the install step reruns only when requirements change.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# nbgrader runs the `alembic` executable: the venv's bin/ must be on PATH.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export MPLBACKEND ?= Agg
JOBS ?= 2

.PHONY: install lab test browser bench notebooks release clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Jupyter refuses to start as root without --allow-root (containers, CI); LAB_ARGS adds more.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
LAB_ARGS ?=

lab: install
	MPLBACKEND= $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/course $(ROOT_FLAG) $(LAB_ARGS)

# The real-browser test needs Debian's Chromium; installed here when missing.
browser:
	@bash tests/browser/ensure_chromium.sh

test: install browser
	$(BIN)/python -m pytest -n $(JOBS) --timeout=900

bench: install
	$(BIN)/python -m helpers.bench

notebooks: install
	$(BIN)/python course/build.py

# Regenerate the committed student versions (release/) from source/.
release: install
	for a in laplace exponential randomized_response privacy_budget local_frequency; do $(BIN)/nbgrader generate_assignment $$a --force || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache artifacts
