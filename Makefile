# Two commands do all the set-up on a fresh machine with only python3:
#   make run   - the nightly calibration into warehouse/ (`boardgen nightly`; prints where to look)
#   make test  - the test suite (what .ci/run runs): ruff, import-linter, pytest; installs Debian's
#                Chromium for the browser test when missing and run as root (scripts/ensure_chromium.sh),
#                and PostgreSQL's binaries, never a cluster (scripts/ensure_postgres_binaries.sh); the
#                PostgreSQL tests run on a throwaway server the tests start (tests/postgres_server.py)
VENV    ?= .venv
PY      := $(VENV)/bin/python
BOARDGEN := $(VENV)/bin/boardgen
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
# pytest-xdist workers for `make test` (a file's tests stay in one worker: its fixtures are built once)
TEST_WORKERS ?= 2

.PHONY: run test lint ui bench validate clean clean-all mutate

# the library and the pipeline (`make run`, `make ui`); the test tools on top (`make test`)
$(VENV)/.stamp-pipeline: pyproject.toml
	@echo "first run: installing boardgen[pipeline] into $(VENV) (a few minutes; once)"
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[pipeline]'
	@echo "compiling the installed packages to bytecode (every Dagster process then starts in half the time)"
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@

$(VENV)/.stamp-test: pyproject.toml $(VENV)/.stamp-pipeline
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

# the project's own modules to bytecode too (up to date: a tenth of a second), which Python skips
# under PYTHONDONTWRITEBYTECODE: each of the night's processes then imports them in 0.3 s less
PYC := $(PY) -m compileall -q boardgen_pipeline assets > /dev/null

run: $(VENV)/.stamp-pipeline
	@$(PYC)
	$(BOARDGEN) nightly

test: $(VENV)/.stamp-test
	bash scripts/ensure_chromium.sh
	bash scripts/ensure_postgres_binaries.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(VENV)/.stamp-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

ui: $(VENV)/.stamp-pipeline
	@$(PYC)
	$(BOARDGEN) ui

validate: $(VENV)/.stamp-pipeline
	$(BOARDGEN) validate

bench: $(VENV)/.stamp-pipeline
	$(PY) benchmarks/generator_vs_c.py

# What a run makes again (the datasets, the DuckDB file, the Dagster home's runs); keeps the
# calibration history and a dagster.yaml you wrote, and says so. `make clean-all` deletes those too,
# after naming them (FORCE=1 where nobody can answer the question).
clean:
	python3 scripts/clean.py

clean-all:
	python3 scripts/clean.py --all

# Mutation testing of the checks (docs/testing.md): not part of `make test` nor CI (it takes about
# 20 minutes on 2 cores). A fresh mutants/ (no result kept from older code or tests), then one module
# at a time at low priority ([tool.mutmut] in pyproject.toml); the scores at the end.
MUTATE_MODULES := calibration.assertions steps.table_check variants.checks variants.outcomes \
                  nodemap.validate tables.shape tables.tomlio tables.board_gen
mutate: $(VENV)/.stamp-test
	rm -rf mutants
	@for m in $(MUTATE_MODULES); do \
	    echo "mutate: boardgen_pipeline.$$m"; \
	    nice -n 10 $(VENV)/bin/mutmut run --max-children 2 "boardgen_pipeline.$$m.*" || exit 1; \
	done
	$(PY) scripts/mutation_scores.py
