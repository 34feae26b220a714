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
# Two pytest workers (three measured no faster on two cores: 18:54 vs 19:22, and timing tests get flakier);
# xdist_group keeps the hub chain and the make-lab chain on one worker each.
JOBS ?= 2

.PHONY: install lab test test-deps test-fast browser sandbox services bench notebooks slides release clean hub dist

install: $(STAMP)

$(STAMP): requirements.txt requirements-student.txt pyproject.toml
	@# Developers and CI: uv (from PyPI, into the venv) installs everything first, bytecode compiled
	@# as pip does (the sandboxes cannot write it): 39 CPU-s against pip's 44 from empty caches, same
	@# versions. pip's index (PIP_INDEX_URL or pip config's index-url: a school mirror, README) is
	@# uv's too. Should uv fail, pip below installs it all, as it did before. (A Python too old for
	@# the pins gets no .venv here: course install below says so, in Chinese and English.)
	@test -x $(BIN)/python || { $(PYTHON) -c "import sys; sys.exit(sys.version_info < (3, 11))" && $(PYTHON) -m venv $(VENV); } || true
	@if test -x $(BIN)/python; then \
	  index=$${PIP_INDEX_URL:-$$($(BIN)/python -m pip config list 2>/dev/null | sed -n "s/^[a-z:]*\.index-url='\(.*\)'$$/\1/p" | tail -n 1)}; \
	  { $(BIN)/python -m pip install --quiet uv && \
	    $${index:+env UV_DEFAULT_INDEX="$$index"} $(BIN)/python -m uv pip install --quiet --compile-bytecode \
	      --python $(BIN)/python -r requirements.txt -e . ; } || echo "uv failed: pip installs instead" >&2; \
	fi
	@# the student's part, the same code as `python3 -m course lab`: .venv, requirements-student.txt, -e .
	$(PYTHON) -m course install
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

LAB_ARGS ?=
# The six graded assignments, in the order of the course (course/launcher.py releases the same).
ASSIGNMENTS := laplace exponential randomized_response private_mean privacy_budget local_frequency

# The instructor's view on one machine (course/launcher.py --instructor, course/instructor.py):
# JupyterLab in Chinese (.lab-settings/ selects the zh_CN language pack) on the repository itself,
# the table of contents (course/README.md, rendered: .lab-settings/ makes Markdown Preview the
# default viewer), live ipympl figures (no MPLBACKEND, see helpers/plots.py), kernels over IPC
# sockets where their paths fit, the Formgrader, and the six assignments released into the
# course's own exchange (nbgrader_exchange/, or NBGRADER_EXCHANGE), redone only when source/ or
# the config changed. Students run `python3 -m course lab` instead (their own folder, no exchange).
# LAB_ARGS go to JupyterLab. tests/browser/test_lectures.py starts JupyterLab through this target.
lab: install
	@$(PYTHON) -m course lab --instructor $(LAB_ARGS)

# The real-browser test needs Debian's Chromium; installed here when missing.
browser:
	@bash tests/browser/ensure_chromium.sh

# The autograder runs student code in bubblewrap (Debian package); installed here when missing.
# bubblewrap runs the student's code; libseccomp2 builds its syscall filter (without it the
# sandbox runs unfiltered and report.json says so).
sandbox:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -q && apt-get install -y -q -o DPkg::Lock::Timeout=600 bubblewrap; } || { echo "install bubblewrap (apt-get install bubblewrap)"; exit 1; }
	@ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || { [ "$$(id -u)" = 0 ] && apt-get update -q && apt-get install -y -q -o DPkg::Lock::Timeout=600 libseccomp2; } || echo "warning: libseccomp2 missing (apt-get install libseccomp2): sandboxes run without a seccomp filter"

# The class server's account test attacks through sshd, cron and at (Debian packages): installed here
# when missing, as root.
services:
	@bash tests/hub/ensure_services.sh

test: test-deps
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --timeout=900 --durations=40

# install and the Debian packages of browser, sandbox and services at once: apt and pip share no
# lock, and on a fresh machine each takes about half a minute (apt: chromium and fonts-noto-cjk are
# 170 MB to unpack). Either failing fails `make test`, as before.
test-deps:
	@$(MAKE) --no-print-directory browser sandbox services & debian=$$!; \
	 $(MAKE) --no-print-directory install; python=$$?; wait $$debian; debian=$$?; \
	 [ $$python = 0 ] && [ $$debian = 0 ]

# The edit-test loop (<= 5 min on 2 cores): everything but a browser, the class server, a whole
# notebook run and the batches through the sandboxed grader (marks set in tests/conftest.py and
# the slow modules; pyproject.toml lists them). `make test` runs these too, and is what CI runs.
FAST := not browser and not hub and not notebook and not slow
test-fast: install sandbox
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --timeout=900 --durations=15 -m "$(FAST)"

# The class server: JupyterHub + nbgrader for the roster hub/roster.csv (see README, "A class
# server"). Needs root: it creates OS users. No account gets a password: set them yourself
# (`sudo passwd ID`, `sudo chpasswd`) or use LTI 1.3 (hub/README.md). `sudo make hub DEMO=1`
# gives everyone the guessable demo-<id> (a demo on loopback only); a later run without
# DEMO=1 removes those again. HUB_ARGS go to hub/provision.py; DP_HUB_* variables in
# hub/jupyterhub_config.py (port, folders, culling, limits).
DEMO ?=
HUB_ARGS ?=
CHP := hub/node_modules/.bin/configurable-http-proxy

$(CHP): hub/package.json hub/package-lock.json
	command -v npm >/dev/null || { apt-get update && apt-get install -y -o DPkg::Lock::Timeout=600 nodejs npm; }
	cd hub && npm ci --no-audit --no-fund
	touch $(CHP)

hub: install $(CHP)
	@test "$$(id -u)" = 0 || { echo "make hub creates OS users and spawns servers as them: run it as root (sudo make hub)" >&2; exit 1; }
	$(BIN)/python hub/provision.py $(if $(DEMO),--demo-passwords) $(HUB_ARGS)
	@echo "class server: $${DP_HUB_URL:-http://hub.localhost:$${DP_HUB_PORT:-8000}} (each person's server and the Formgrader on a subdomain of it)"
	$(BIN)/jupyterhub -f hub/jupyterhub_config.py

bench: install
	$(BIN)/python -m helpers.bench

notebooks: install
	$(BIN)/python course/build.py

# The class-meeting slides: slides/html/index.html and one offline reveal.js deck per class meeting
# of each teaching path (course/_src/plan.toml), text from course/_src/slides/, figures from running
# the Chinese lecture notebooks headless (see slides/build.py). reveal.js and KaTeX come from the npm
# registry (slides/package-lock.json) and are copied next to the decks: opening them needs no network.
# Each deck is also written as an editable PowerPoint file (slides/html/<deck>.pptx, slides/pptx_deck.py).
# Rebuilt only when a source changed (about a minute: the notebooks' code runs for the figures).
SLIDE_INPUTS := $(wildcard course/_src/*.md course/_src/slides/*.md course/data/*) course/_src/plan.toml course/_src/assignments.toml \
	course/build.py $(wildcard course/builder/*.py) slides/build.py slides/pptx_deck.py slides/deck.css \
	$(shell find helpers -name '*.py' -not -path '*/__pycache__/*' 2>/dev/null)
SLIDES_NPM := slides/node_modules/.package-lock.json

$(SLIDES_NPM): slides/package.json slides/package-lock.json
	command -v npm >/dev/null || { apt-get update && apt-get install -y -o DPkg::Lock::Timeout=600 nodejs npm; }
	cd slides && npm ci --no-audit --no-fund
	touch $@

slides/html/index.html: $(SLIDE_INPUTS) $(SLIDES_NPM) $(STAMP)
	$(BIN)/python slides/build.py

# One PDF per deck (slides/pdf/, for the LMS or a handout): the decks' print view in headless Chromium.
slides/pdf/.printed: slides/html/index.html slides/pdf.py
	$(BIN)/python slides/pdf.py
	touch $@

slides: install browser slides/html/index.html slides/pdf/.printed
	@echo "slides: open slides/html/index.html in a browser (F: full screen, S: speaker notes); PDFs in slides/pdf/"

# The release packs under dist/: dp-course-student-<version>.zip (what students get: no solutions,
# hidden tests or answers) and dp-course-lecturer-<version>.zip (decks as offline HTML, PDF and PPTX,
# the guide and exam papers, the grader). autograder/dist.py.
dist: slides
	$(BIN)/python -m autograder dist --out dist

# Regenerate the committed student versions (release/) from source/.
release: install
	for a in $(ASSIGNMENTS); do $(BIN)/nbgrader generate_assignment $$a --force || exit 1; done

# The generated parts of the instructor's guide (docs/teacher-guide.md): plan, 学习要求, graded cells,
# diagnoses, question bank; and the exam papers with their keys (docs/exam/), all from docs/questions.toml.
.PHONY: guide exam
guide: install
	$(BIN)/python docs/build_guide.py

exam: guide

clean:
	rm -rf $(VENV) .pytest_cache artifacts
