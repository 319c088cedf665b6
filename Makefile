# Two commands do all the set-up on a fresh machine with only python3:
#   make run   - the nightly calibration into warehouse/ (prints where to look)
#   make test  - the test suite (what .ci/run runs); installs Debian's Chromium for the
#                browser test and starts (or installs) PostgreSQL for the instance tests when
#                missing and run as root (scripts/ensure_chromium.sh, scripts/ensure_postgres.sh)
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
# pytest-xdist workers for `make test` (a file's tests stay in one worker: its fixtures are built once)
TEST_WORKERS ?= 2

.PHONY: run test lint ui bench validate clean mutate

$(STAMP): pyproject.toml
	@echo "first run: installing boardgen and its dependencies into $(VENV) (a few minutes; once)"
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@echo "compiling the installed packages to bytecode (every Dagster process then starts in half the time)"
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m assets.nightly

test: $(STAMP)
	bash scripts/ensure_chromium.sh
	bash scripts/ensure_postgres.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

ui: $(STAMP)
	$(PY) -m assets.ui

validate: $(STAMP)
	$(VENV)/bin/boardgen validate

bench: $(STAMP)
	$(PY) benchmarks/generator_vs_c.py

# Mutation testing of the checks (issue 24; docs/testing.md): not part of `make test` nor CI (it
# takes about 20 minutes on 2 cores). A fresh mutants/ (no result kept from older code or tests), then
# one module at a time at low priority ([tool.mutmut] in pyproject.toml); the scores at the end.
MUTATE_MODULES := calibration.assertions steps.table_check variants.checks variants.outcomes \
                  nodemap.validate tables.shape tables.tomlio tables.board_gen
mutate: $(STAMP)
	rm -rf mutants
	@for m in $(MUTATE_MODULES); do \
	    echo "mutate: boardgen_pipeline.$$m"; \
	    nice -n 10 $(VENV)/bin/mutmut run --max-children 2 "boardgen_pipeline.$$m.*" || exit 1; \
	done
	$(PY) scripts/mutation_scores.py

clean:
	rm -rf warehouse .dagster_home
