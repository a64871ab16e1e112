# symsgd — two commands do all the set-up:
#   make lab    create .venv on first use, open JupyterLab on notebooks/ (127.0.0.1, token on)
#   make test   create .venv on first use, run lint, unit tests, every notebook (nbval), then the
#               real-browser suite (JupyterLab and Voila in headless Chromium); what CI runs
#   make test-fast  the edit-test loop: lint and the unit tests not marked slow; no notebook, no browser
# Other targets: make test-unit | test-browser | bench-browser | bench-cold | site | handout | test-handout | test-site | classroom | instructor | check | bench | strip | lock | clean

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test test-unit test-fast test-browser bench-browser bench-cold site handout test-handout test-site classroom instructor check bench strip lock clean

$(STAMP): requirements-lock.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $$(grep -E '^(pip|setuptools|wheel)==' requirements-lock.txt)
	$(PY) -m pip install --quiet -r requirements-lock.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m symsgd_jupyter --enable
	@# every numba kernel compiled into its on-disk cache once, here: no reader's first Run and no test pays it
	$(PY) -m symsgd_core warm
	touch $(STAMP)

# JupyterLab refuses to start as root without --allow-root; containers and WSL often run as root.
lab: $(STAMP)
	@if [ "$$(id -u)" = 0 ]; then echo "make lab: running as root (a container or WSL?), so JupyterLab gets --allow-root"; fi
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks --no-browser \
		$$([ "$$(id -u)" = 0 ] && echo --allow-root)

# Lint; then the unit tests with every notebook (nbval) and, beside them, the static edition's build (its notebook
# kernels take the share of the two cores the unit workers leave); then the real-browser suite and the edition's
# test in one pytest session. Unit tests go to the two workers one at a time; each notebook's cells stay together on
# one worker (an xdist group per notebook, see conftest.py). --output-sync keeps each part's output together.
test: $(STAMP)
	$(VENV)/bin/ruff check symsgd_core symsgd_jupyter tests notebooks tools
	$(MAKE) --no-print-directory -j2 --output-sync=target test-unit site
	$(PY) -m pytest tests/browser tests/static_site -m "browser and not bench" -n 2 --dist loadgroup -p no:cacheprovider
	@cat test-artifacts/static-site/report.txt 2>/dev/null || true

# Unit tests and every notebook top to bottom (nbval): the first half of `make test` (no lint, no browser).
test-unit: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup --nbval-lax --nbval-current-env -p no:cacheprovider -m "not browser" \
		--ignore=tests/gallery --durations=20

# The fast tier, for the edit-test loop: lint, then every unit test except those marked slow (their own subprocess,
# server or long Monte-Carlo run) and the browser suite; no notebook is executed. `make test` runs all of them.
test-fast: $(STAMP)
	$(VENV)/bin/ruff check symsgd_core symsgd_jupyter tests notebooks tools
	$(PY) -m pytest tests -n 2 -p no:cacheprovider -m "not browser and not slow"

# Real-browser suite alone: two workers (one per core: with four, a kernel on a busy two-core machine missed the
# suite's waits), the tests handed out two at a time in file order; each worker starts
# the servers its tests need (JupyterLab, JupyterLab under a base URL, Voila at 127.0.0.1, Voila at localhost).
test-browser: $(STAMP)
	$(PY) -m pytest tests/browser -m "browser and not bench" -n 2 --dist loadgroup -p no:cacheprovider

# Browser benchmarks, not tests: every slider of every controller moved in JupyterLab and Voila (the slider->figure
# latency table in test-artifacts/browser/latency_report.txt), and the notebooks with the most figures on a 6x
# slowed CPU (SYMSGD_SLOW_NOTEBOOKS=all: every notebook). Latency is reported, never asserted.
bench-browser: $(STAMP)
	$(PY) -m pytest tests/browser -m "browser and bench" -n 2 --dist loadgroup -p no:cacheprovider

# First Run All of each notebook with an empty compiled-kernel cache against the second (wall and kernel CPU seconds):
# what a clone that skipped the set-up's warm-up would pay. A benchmark: nothing asserted.
bench-cold: $(STAMP)
	$(PY) tools/bench_cold_start.py

# The static edition: every notebook executed, its main sliders precomputed as plotly frames, written
# to site/ (git-ignored) with plotly.js and MathJax from the installed packages. Publish the folder as it is.
site: $(STAMP)
	$(PY) -m tools.site.build --out site

# The printed handout: one PDF per notebook and handout/course.pdf (all six) in handout/ (git-ignored), printed
# from the static edition by headless Chromium; figures at their notebook value, each precomputed slider as small
# multiples, no code (HANDOUT_FLAGS="--code" adds it, "--solutions" the exercises' worked solutions).
handout: site
	$(PY) -m tools.site.handout --site site --out handout $(HANDOUT_FLAGS)

# Every notebook's handout printed and read back (make test-site prints notebook 02's only; a minute or more each).
test-handout: site
	SYMSGD_HANDOUT_NOTEBOOKS=all $(PY) -m pytest tests/static_site/test_handout.py -m browser -n 2 -p no:cacheprovider

# The edition in headless Chromium from a static file server (and from file://), offline, each page compared with a
# kernel that ran its notebook; page weights in test-artifacts/static-site/report.txt. `make test` runs these tests
# in one session with the browser suite.
test-site: site
	$(PY) -m pytest tests/static_site -m browser -n 2 -p no:cacheprovider
	@cat test-artifacts/static-site/report.txt 2>/dev/null || true

classroom: $(STAMP)
	$(PY) tools/classroom.py --no-browser

# The instructor variant for the lecturer's screen: classroom mode with every worked solution shown open.
# (The static edition's instructor copy: $(PY) -m tools.site.build --solutions --out site-instructor)
instructor: $(STAMP)
	$(PY) tools/classroom.py --no-browser --solutions

check: $(STAMP)
	$(PY) -m symsgd_core check

bench: $(STAMP)
	$(PY) -m symsgd_core bench

strip: $(STAMP)
	$(PY) -m tools.strip_notebooks notebooks/*.ipynb tests/gallery/*.ipynb

lock:
	rm -rf /tmp/symsgd-lock && $(PYTHON) -m venv /tmp/symsgd-lock
	/tmp/symsgd-lock/bin/pip install --quiet --upgrade pip setuptools wheel
	/tmp/symsgd-lock/bin/pip install --quiet "torch==2.13.0" ".[test,site,sweep]"
	/tmp/symsgd-lock/bin/pip freeze --all --exclude symsgd-core | sed 's/+cpu$$//' > requirements-lock.txt.new
	{ sed '/^[^#]/,$$d' requirements-lock.txt; cat requirements-lock.txt.new; } > requirements-lock.txt.tmp
	mv requirements-lock.txt.tmp requirements-lock.txt && rm requirements-lock.txt.new

clean:
	rm -rf $(VENV) test-artifacts site
