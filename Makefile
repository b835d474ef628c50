# Inside vmap: set-up, the JupyterLab server and the test suite. `make` alone lists the targets.
# Every target line that ends in "## text" is listed by `make help`; targets without it are internal.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

# The Python of every environment; empty: tools/find-python picks the newest 3.13 / 3.12 (PATH, then pyenv).
PYTHON ?=
PORT ?= 8888
LAB_ARGS ?=
LESSONS ?= $(wildcard lessons/*.md)

VENV := .venv
OLD_VENV := .venv-jax0438
GPU_VENV := .venv-gpu
BUILD := build

# Environment of every test and notebook run: no GUI backend, fixed hashing, the venv's own kernel, a quiet debugger.
RUN_ENV := MPLBACKEND=Agg PYTHONHASHSEED=0 JUPYTER_PREFER_ENV_PATH=1 PYDEVD_DISABLE_FILE_VALIDATION=1
CPU_ENV := $(RUN_ENV) JAX_PLATFORMS=cpu
NBVAL_STRICT := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval-sanitize.cfg
NBVAL_LAX := --nbval-lax --nbval-current-env
# Jupyter refuses to run as root (CI containers) unless told.
LAB_ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--ServerApp.allow_root=True)

# $(call pytest-on,VENV,ENV,ARGS,PATHS): pytest ARGS on PATHS, with VENV's bin first on PATH (nbgrader calls alembic,
# jupytext and jupyter from there). A missing path, or one with nothing to collect, fails: an empty lessons/ or
# exercises/ is a broken checkout, never a pass.
define pytest-on
$(if $(filter-out $(wildcard $(4)),$(4)),@echo "inside-vmap: $(filter-out $(wildcard $(4)),$(4)) missing; nothing to test there" >&2; exit 1,$(2) PATH="$(CURDIR)/$(1)/bin:$$PATH" $(1)/bin/python -m pytest $(3) $(4) || { rc=$$?; if [ $$rc -eq 5 ]; then echo "inside-vmap: no tests collected from $(4)" >&2; fi; exit $$rc; })
endef

.PHONY: help setup setup-all setup-old practice lab lint test test-gpu test-matrix test-latest lessons sync-check lock clean distclean

help: ## list the targets and what each does (the default)
	@echo "usage: make TARGET [PORT=8888] [PYTHON=python3.12]"
	@grep -hE '^[A-Za-z0-9_.-]+:.*## ' $(MAKEFILE_LIST) \
	    | sed -E 's/^([^:]+):.*## (.*)$$/\1\t\2/' \
	    | awk -F'\t' '{ printf "  %-12s %s\n", $$1, $$2 }'

# ---- environments -------------------------------------------------------------------------------------------------
# A stamp per venv: re-running with an unchanged lock costs nothing; tools/make-venv says in one line what went wrong.
# .venv holds the student's set first (requirements/lock-student.txt: what `make lab` needs); the instructor's and the
# test tools (the rest of requirements/lock.txt, a superset at the same versions) are added on top when a target
# needs them.
$(VENV)/.installed: requirements/lock-student.txt pyproject.toml
	@tools/make-venv "$(PYTHON)" $(VENV) requirements/lock-student.txt

$(VENV)/.installed-all: requirements/lock.txt pyproject.toml $(VENV)/.installed
	@tools/make-venv "$(PYTHON)" $(VENV) requirements/lock.txt .installed-all

$(OLD_VENV)/.installed: requirements/lock-jax0438.txt pyproject.toml
	@tools/make-venv "$(PYTHON)" $(OLD_VENV) requirements/lock-jax0438.txt

# The main lock with jax's CUDA extra on the same jax/jaxlib pins: jax 0.12.0.1 declares cuda12 (= cuda) and cuda13;
# cuda13 is JAX's recommended one for its newest releases (NVIDIA driver >= 580); CUDA=cuda12 for drivers >= 525.
CUDA ?= cuda13
$(BUILD)/lock-gpu-$(CUDA).txt: requirements/lock.txt
	@mkdir -p $(@D)
	sed 's/^jax==/jax[$(CUDA)]==/' $< >$@

$(GPU_VENV)/.installed: $(BUILD)/lock-gpu-$(CUDA).txt pyproject.toml
	@tools/make-venv "$(PYTHON)" $(GPU_VENV) $(BUILD)/lock-gpu-$(CUDA).txt

setup: $(VENV)/.installed ## create .venv for students (the newest JAX, JupyterLab, nbgrader, Matplotlib) from requirements/lock-student.txt

setup-all: $(VENV)/.installed-all ## add the instructor's and the test tools to .venv (requirements/lock.txt); the targets that need them do it

setup-old: $(OLD_VENV)/.installed ## create .venv-jax0438 (JAX 0.4.38) from requirements/lock-jax0438.txt

# $(call freeze,IN,LOCK[,PIP_ARGS]): install IN (with PIP_ARGS, e.g. a constraints file) into a throw-away venv and write its pip freeze to LOCK (left untouched, stamp
# and all, when nothing changed).
define freeze
rm -rf $(BUILD)/lock-venv
py=$$(tools/find-python $(PYTHON)) || { echo "$$py"; exit 1; }; "$$py" -m venv $(BUILD)/lock-venv
$(BUILD)/lock-venv/bin/python -m pip install --disable-pip-version-check --no-input --progress-bar off -r $(1) $(3)
$(BUILD)/lock-venv/bin/python -m pip freeze --disable-pip-version-check >$(2).new
if cmp -s $(2).new $(2); then rm $(2).new; echo "inside-vmap: $(2) unchanged"; else mv $(2).new $(2); fi
rm -rf $(BUILD)/lock-venv
endef

lock: ## regenerate requirements/lock*.txt from requirements/*.in in throw-away venvs (needs the package index)
	@tools/find-python $(PYTHON) >/dev/null || { tools/find-python $(PYTHON); exit 1; }
	$(call freeze,requirements/main.in,requirements/lock.txt)
	$(call freeze,requirements/student.in,requirements/lock-student.txt,-c requirements/lock.txt)
	$(call freeze,requirements/jax0438.in,requirements/lock-jax0438.txt)

# ---- the course ---------------------------------------------------------------------------------------------------
# What JupyterLab, its kernels and Matplotlib write for themselves (the server's cookie secret and connection files,
# settings and workspaces, IPython's history, the font cache, the log of the npm that JupyterLab asks about its
# build) goes under build/home/, never into your home folder.
# Only the project's own Jupyter paths are read too (the venv's, JUPYTER_PREFER_ENV_PATH), so no kernel or extension
# of your account changes what the course runs.
LOCAL_HOME := $(CURDIR)/$(BUILD)/home
LOCAL_ENV := JUPYTER_CONFIG_DIR="$(LOCAL_HOME)/jupyter-config" JUPYTER_DATA_DIR="$(LOCAL_HOME)/jupyter-data" \
    IPYTHONDIR="$(LOCAL_HOME)/ipython" MPLCONFIGDIR="$(LOCAL_HOME)/matplotlib" npm_config_cache="$(LOCAL_HOME)/npm"
# The server also reads jupyter/jupyter_server_config.py: no terminals, and a Content-Security-Policy (the
# formgrader shows students' notebooks in this origin).
# Its Assignments tab uses the course's exchange, or build/exchange where that does not exist (a student alone;
# course/nbgrader_config.py, INSIDE_VMAP_LAB_EXCHANGE).
lab: setup ## serve the course with JupyterLab on 127.0.0.1:PORT (default 8888) and print its URL
	@echo "inside-vmap: Open the URL printed below (it carries the access token); Ctrl-C stops the server."
	$(LOCAL_ENV) JUPYTER_CONFIG_PATH="$(CURDIR)/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	INSIDE_VMAP_LAB_EXCHANGE="$(CURDIR)/$(BUILD)/exchange" \
	JUPYTER_PREFER_ENV_PATH=1 PATH="$(CURDIR)/$(VENV)/bin:$$PATH" exec $(VENV)/bin/jupyter lab --no-browser \
	    --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --ServerApp.root_dir="$(CURDIR)" \
	    --LabApp.default_url=/lab/tree/lessons $(LAB_ROOT_ARGS) $(LAB_ARGS)

practice: setup ## write the exercises as students get them (no solutions, no hidden tests) into practice/, keeping your work
	@tools/practice

# Per lesson: carry the .md's cells into the .ipynb (--update keeps the cell ids, so diffs stay small), execute the
# .ipynb in place (JAX on CPU; `--update --execute` together would keep the old outputs), then rewrite the .md from it:
# the .md gets jupytext's own header, so JupyterLab's jupytext extension finds the twins identical and opens either.
lessons: setup ## re-execute lessons/*.ipynb from their MyST twins lessons/*.md (JAX on CPU); LESSONS=... picks some
	$(if $(LESSONS),,@echo "inside-vmap: no lessons/*.md yet; nothing to execute")
	for md in $(LESSONS); do \
	    nb="$${md%.md}.ipynb"; \
	    $(VENV)/bin/jupytext --to ipynb --update --set-kernel python3 "$$md"; \
	    $(CPU_ENV) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupytext --execute "$$nb"; \
	    $(VENV)/bin/python tools/tidy-notebook "$$nb"; \
	    $(VENV)/bin/jupytext --to md:myst "$$nb"; \
	done

sync-check: setup-all ## fail if a lessons/*.md and its .ipynb twin disagree on their cells, or one lacks its twin
	$(CPU_ENV) $(VENV)/bin/python -m pytest tests/test_lessons_sync.py

# ---- a term with nbgrader (instructors) ---------------------------------------------------------------------------
# Thin wrappers over nbgrader's own commands, run from course/ so nbgrader reads course/nbgrader_config.py, the one
# place of the term's settings (course id, exchange, gradebook, due dates, late policy; `make term` shows them).
# bin/nbgrader runs any other nbgrader command the same way (docs/instructors.md). NBGRADER_ARGS goes to every
# nbgrader command of these targets (not `make lab`: settings shared with the formgrader belong in the config);
# ASSIGNMENT=NAME limits a target to one assignment; COURSE=DIR runs them on another copy of course/ (its
# nbgrader_config.py finds the assignments in DIR/../exercises).
NBGRADER_ARGS ?=
ASSIGNMENT ?=
COURSE ?= course
FILE ?=
ID_COLUMN ?=
FORMAT ?= long
SIM ?= $(BUILD)/class
# EXCHANGE=DIR: a trial term's own exchange instead of the config's machine-wide one, for every target and bin/nbgrader
# started from them (course/nbgrader_config.py reads INSIDE_VMAP_EXCHANGE); STUDENT and KIND: make try-submit's.
EXCHANGE ?=
ifneq ($(EXCHANGE),)
export INSIDE_VMAP_EXCHANGE := $(abspath $(EXCHANGE))
endif
STUDENT ?= tryout
KIND ?= full
NOTEBOOK ?=
# Grading on a Dask cluster (docs/performance.md, "Grading on a cluster"): `make scheduler` on one host, `make workers
# SCHEDULER=tcp://HOST:8786` on every grading host (WORKERS processes of one thread each, default one per core), then
# `make autograde SCHEDULER=tcp://HOST:8786` hands every submission to them (grader/instructor/distributed.py).
SCHEDULER ?=
WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
DASK_PORT ?= 8786
DASHBOARD_PORT ?= 8787
# bin/ first: `nbgrader` in these recipes is bin/nbgrader (nbgrader's CLI, started lighter: docs/performance.md).
INSTRUCTOR = cd $(COURSE) && export $(CPU_ENV) PATH="$(CURDIR)/bin:$(CURDIR)/$(VENV)/bin:$$PATH"
# $(call assignments-in,GLOB): names of the folders GLOB/NAME holding a notebook (or just ASSIGNMENT when given)
assignments-in = $(if $(ASSIGNMENT),$(ASSIGNMENT),$(sort $(notdir $(patsubst %/,%,$(dir $(wildcard $(1)/*/*.ipynb))))))
# make export FORMAT=...: the nbgrader exporter of each format (grader/nbgrader_plugins/export.py)
EXPORTERS := long=StatusExportPlugin canvas=CanvasExportPlugin moodle=MoodleExportPlugin
exporter = $(patsubst $(FORMAT)=%,%,$(filter $(FORMAT)=%,$(EXPORTERS)))
ifneq ($(findstring Exchange.root,$(NBGRADER_ARGS)),)
$(warning inside-vmap: NBGRADER_ARGS sets Exchange.root, which `make lab` and the students' servers do not see; set c.Exchange.root in $(COURSE)/nbgrader_config.py instead)
endif

.PHONY: term roster assign collect autograde feedback export demo class-roster class-submit try-submit

term: setup-all ## show the term's settings (course id, exchange, gradebook, due dates, late policy) from the course config
	$(INSTRUCTOR) && python -m grader.instructor term $(NBGRADER_ARGS)

roster: setup-all ## import FILE, a roster CSV (Canvas or Moodle export, or nbgrader's columns), into the gradebook
	$(if $(FILE),,$(error inside-vmap: say which roster: make roster FILE=path/to/roster.csv))
	$(INSTRUCTOR) && python -m grader.instructor roster "$(abspath $(FILE))" \
	    $(if $(ID_COLUMN),--id-column="$(ID_COLUMN)") $(NBGRADER_ARGS)

assign: setup-all ## generate and release every assignment of exercises/ (nbgrader generate_assignment, release_assignment)
	$(INSTRUCTOR) && for a in $(call assignments-in,$(COURSE)/../exercises); do \
	    nbgrader generate_assignment "$$a" --force $(NBGRADER_ARGS); \
	    nbgrader release_assignment "$$a" --force $(NBGRADER_ARGS); \
	done && python -m grader.instructor term $(NBGRADER_ARGS)

collect: setup-all ## collect the submissions of every released assignment from the exchange (nbgrader collect)
	$(INSTRUCTOR) && for a in $(call assignments-in,$(COURSE)/release); do \
	    nbgrader collect "$$a" --update $(NBGRADER_ARGS); \
	done

autograde: setup-all ## autograde every collected submission, a line each, then a table of statuses (re-runs skip done ones)
	$(INSTRUCTOR) && "$(CURDIR)/$(VENV)/bin/python" -m grader.instructor autograde $(ASSIGNMENT) \
	    $(if $(SCHEDULER),--scheduler=$(SCHEDULER)) $(NBGRADER_ARGS)

.PHONY: scheduler workers
scheduler: setup-all ## start a Dask scheduler here for make workers / make autograde SCHEDULER=tcp://THIS-HOST:8786
	$(CPU_ENV) exec $(VENV)/bin/dask scheduler --port $(DASK_PORT) --dashboard-address :$(DASHBOARD_PORT)

workers: setup-all ## start WORKERS Dask grading workers here (default one per core) for SCHEDULER=tcp://HOST:8786
	$(if $(SCHEDULER),,$(error inside-vmap: say which scheduler: make workers SCHEDULER=tcp://HOST:8786))
	$(CPU_ENV) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" exec $(VENV)/bin/dask worker $(SCHEDULER) \
	    --nworkers $(WORKERS) --nthreads 1

# A student whose feedback cannot be generated costs only that student: nbgrader goes on with the others (and exits
# 1 at the end), their feedback is released all the same, and the target fails last, saying so.
# A failed submission (its kernel died, it timed out, it could not be read) gets a page saying what happened and what
# to do, released with the others (grader/instructor/failed_feedback.py).
feedback: setup-all ## generate and release feedback for every autograded submission (nbgrader generate/release_feedback), and for every failed one
	$(INSTRUCTOR) && failed="" && for a in $(call assignments-in,$(COURSE)/autograded/*); do \
	    nbgrader generate_feedback "$$a" --force $(NBGRADER_ARGS) || failed="$$failed $$a"; \
	    python -m grader.instructor failed-feedback "$$a" $(NBGRADER_ARGS) || failed="$$failed $$a"; \
	    nbgrader release_feedback "$$a" $(NBGRADER_ARGS) || failed="$$failed $$a"; \
	done; if [ -n "$$failed" ]; then echo "inside-vmap: feedback of some students of$$failed could not be made \
	(nbgrader's messages above); everyone else's was released"; exit 1; fi

export: setup-all ## FORMAT=long (course/grades.csv, default), canvas or moodle: the grades with status and reason (nbgrader export)
	$(if $(exporter),,$(error inside-vmap: FORMAT=$(FORMAT) is not one of long, canvas, moodle))
	$(INSTRUCTOR) && nbgrader export --exporter=grader.nbgrader_plugins.$(exporter) $(NBGRADER_ARGS)

demo: setup-all ## run a simulated class from release to export in a throw-away course and print its grade table
	$(CPU_ENV) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -m tools.classroom.demo

# A simulated class for a whole term typed from docs/instructors.md: a Canvas-style roster of N students in SIM (default
# build/class), then every one of them handing in every released assignment through the course's exchange.
class-roster: setup-all ## write SIM/roster.csv (SIM=build/class): a simulated class of N students, as Canvas lists them
	$(VENV)/bin/python -m tools.classroom.simclass roster --students $(N) --sim "$(abspath $(SIM))"

class-submit: setup-all ## every simulated student of SIM/roster.csv fetches, answers and submits every released assignment
	$(INSTRUCTOR) && PYTHONPATH="$(CURDIR)" python -m tools.classroom.simclass submit --sim "$(abspath $(SIM))"

try-submit: setup-all ## hand in ASSIGNMENT as STUDENT (default tryout) from SIM/homes/STUDENT: fetch, answer as KIND (full, partial, blank) or copy NOTEBOOK=path in, submit
	$(if $(ASSIGNMENT),,$(error inside-vmap: say which assignment: make try-submit ASSIGNMENT=01-the-rule-per-primitive))
	$(INSTRUCTOR) && PYTHONPATH="$(CURDIR)" python -m tools.classroom.simclass try --sim "$(abspath $(SIM))" --student "$(STUDENT)" \
	    --assignment "$(ASSIGNMENT)" --kind "$(KIND)" $(if $(NOTEBOOK),--notebook "$(abspath $(NOTEBOOK))")

# ---- grading speed (instructors) ---------------------------------------------------------------------------------
# Stock nbgrader autograde against `make autograde` (every integrity check on), timed in one run on classes of solved
# submissions: SIZES (default 1,8) and N (default 16) students, median of REPEAT runs; the serial run's scores and
# feedback compared; the distributed column (the N=8 class on a fresh local Dask cluster of each of CLUSTER workers;
# CLUSTER= skips it); the time of each step and of every exercise's visible check (docs/performance.md).
# About 10 minutes here; the class run of docs/performance.md: make bench N=40 CLUSTER=.
N ?= 16
SIZES ?= 1,8
REPEAT ?= 1
CLUSTER ?= 1,2
.PHONY: bench
bench: setup-all ## time stock nbgrader and make autograde on N=1, 8 and N (default 16) students, and on Dask; speedups last
	$(CPU_ENV) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -m tools.bench --n $(N) \
	    --sizes $(SIZES) --repeat $(REPEAT) --cluster "$(CLUSTER)"

# ---- tests --------------------------------------------------------------------------------------------------------
# ruff's rules and what it skips (the notebooks) are pyproject.toml's [tool.ruff]; it formats nothing.
lint: setup-all ## check the Python with ruff: pyflakes, pycodestyle, import order, bugbear, pyupgrade (seconds)
	$(VENV)/bin/ruff check .

# lint first: it takes seconds, the rest minutes.
test: setup-all lint setup-old ## run everything: ruff, tests/ on the locked newest JAX, core tests on JAX 0.4.38, strict nbval over lessons/
	@mkdir -p $(BUILD); command -v bwrap >/dev/null 2>&1 || { echo "inside-vmap: installing Debian's bubblewrap (the \
	judge's sandbox)"; { $(APT_GET) update -qq && $(APT_GET) install -y -qq bubblewrap; } >$(BUILD)/apt-bubblewrap.log \
	2>&1 || true; }
	@$(CPU_ENV) $(VENV)/bin/python -c 'from grader.judge import sandbox; raise SystemExit(not sandbox.available())' \
	    >/dev/null 2>&1 || echo "inside-vmap: SANDBOX TESTS SKIPPED: bubblewrap is missing or cannot run here (apt-get \
	install bubblewrap; $(BUILD)/apt-bubblewrap.log says why it was not installed); grading would run unsandboxed"
	$(call pytest-on,$(VENV),$(CPU_ENV),-m "not browser" --durations=40,tests)
	$(call pytest-on,$(OLD_VENV),$(CPU_ENV),-p no:cacheprovider,tests/core tests/properties tests/lessons)
	$(call pytest-on,$(VENV),$(CPU_ENV),$(NBVAL_STRICT),lessons)
	$(call pytest-on,$(OLD_VENV),$(CPU_ENV),$(NBVAL_LAX),lessons)

test-gpu: $(GPU_VENV)/.installed ## run lessons/ and exercises/ notebooks on CUDA JAX (needs an NVIDIA GPU and driver)
	@env -u JAX_PLATFORMS $(RUN_ENV) $(GPU_VENV)/bin/python -c 'import jax; assert jax.default_backend() == "gpu"' \
	    >$(BUILD)/gpu-check.log 2>&1 || { echo "inside-vmap: JAX sees no CUDA GPU; is there an NVIDIA GPU with its \
	driver? (JAX's messages: $(BUILD)/gpu-check.log)"; exit 1; }
	$(call pytest-on,$(GPU_VENV),env -u JAX_PLATFORMS $(RUN_ENV),$(NBVAL_LAX),lessons exercises)

# The release matrix (tools/test-matrix): per release a small venv under build/matrix/ (tools/matrix-venv; caps in
# requirements/matrix.txt), tests/core (HISTORY checked by tests/core/test_history.py) and nbval's lax mode over
# lessons/ and exercises/. MATRIX=... picks releases; tools/measure-history re-measures the history itself.
MATRIX ?=
test-matrix: ## run tests/core and the lessons' and exercises' notebooks on one JAX release per minor line (CPU)
	tools/test-matrix $(MATRIX)

test-latest: ## the same on the newest JAX the package index offers, in a fresh venv (the weekly canary)
	tools/test-matrix --latest

# The student's view: tests/browser drives the course's JupyterLab in headless Chromium through Playwright, which never
# downloads a browser: it launches Debian's chromium, installed here when missing. Screenshots go to build/screenshots/.
APT_GET := $(if $(filter 0,$(shell id -u)),,sudo -n) env DEBIAN_FRONTEND=noninteractive apt-get
.PHONY: test-browser
test-browser: setup-all ## run lessons 1, 3 and 4 and exercises 1, 3 and 4 in JupyterLab, and a hostile submission in the formgrader, in headless Chromium (installs chromium if missing)
	@mkdir -p $(BUILD)
	@command -v chromium >/dev/null 2>&1 || { echo "inside-vmap: installing Debian's chromium for the browser tests"; \
	    { $(APT_GET) update -qq && $(APT_GET) install -y -qq chromium; } >$(BUILD)/apt-chromium.log 2>&1 \
	    || { echo "inside-vmap: could not install Debian's chromium (apt-get install chromium; see \
	$(BUILD)/apt-chromium.log)"; exit 1; }; }
	$(CPU_ENV) INSIDE_VMAP_CHROMIUM="$$(command -v chromium)" PATH="$(CURDIR)/$(VENV)/bin:$$PATH" \
	    $(VENV)/bin/python -m pytest -m browser tests/browser

# ---- housekeeping -------------------------------------------------------------------------------------------------
clean: ## remove build/, caches and checkpoints (keeps the venvs)
	rm -rf $(BUILD) .pytest_cache .hypothesis *.egg-info
	find . \( -name '.venv*' -o -name .git \) -prune -o \
	    \( -name __pycache__ -o -name .ipynb_checkpoints -o -name .pytest_cache -o -name .hypothesis \) \
	    -type d -prune -exec rm -rf {} +

distclean: clean ## clean, and remove the venvs too
	rm -rf $(VENV) $(OLD_VENV) $(GPU_VENV)
