# Developer entry points. Everything runs inside .venv, (re)built from pyproject.toml on demand.
#   make demo          the golden datasets on SQLite and the HTML report (installs lg_eval only)
#   make test          pytest (Postgres tests skip unless LG_EVAL_PG_DSN is set, see pg-start)
#   make pg-start      throwaway PostgreSQL on 127.0.0.1:54329; prints the export line to use
#   make test PYTEST_ARGS="-k sqlite -x"
#   make lint          ruff check, ruff format --check, mypy --strict lg_eval
#   make latest-langgraph   extraction tests against the newest released LangGraph (.venv-latest)

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
PYTEST_ARGS ?=
# One pytest-xdist worker per core (at most 4); tests sharing a server, Ray or the clock run
# on one worker (their groups: tests/conftest.py). XDIST_ARGS= runs the suite in one process.
XDIST_ARGS ?= -n auto --maxprocesses=4 --dist loadgroup

.PHONY: .venv venv demo test bench lint latest-langgraph pg-start pg-stop

# `make .venv` / `make venv`: create the venv and install the project with every extra the
# tests need (dev, postgres, openai: tests/judges import the openai SDK).
.venv venv: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Re-install whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,postgres,openai]"
	touch $@

# The demo needs lg_eval and its own dependencies only, not the test tools (pytest, Ray,
# langgraph-cli, Playwright, ...): a fresh `make demo` installs that much; `make test` adds the
# rest to the same .venv. A .venv already built for the tests serves the demo as it is.
$(DEMO_STAMP): pyproject.toml | $(PY)
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
	  $(PY) -m pip install --quiet --upgrade pip && \
	  $(PY) -m pip install --quiet -e . && touch $@; fi

demo: $(DEMO_STAMP)
	$(PY) examples/demo.py

# pytest exits 5 when it collected nothing; say so explicitly instead of a bare "Error 5".
test: $(STAMP)
	@$(PY) -m pytest $(XDIST_ARGS) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "ERROR: pytest collected no tests (exit code 5)" >&2; fi; \
	exit $$rc

# Benchmarks live in tests/benchmarks/bench_*.py, which pytest's test_*.py pattern never collects.
bench: $(STAMP)
	$(PY) -m tests.benchmarks

# All three run even when one fails (each is worth seeing); the target fails if any did.
lint: $(STAMP)
	@rc=0; \
	echo "ruff check ."; $(VENV)/bin/ruff check . || rc=1; \
	echo "ruff format --check ."; $(VENV)/bin/ruff format --check . || rc=1; \
	echo "mypy --strict lg_eval"; $(VENV)/bin/mypy --strict lg_eval || rc=1; \
	exit $$rc

latest-langgraph:
	bash .ci/latest-langgraph.sh

pg-start:
	@bash .ci/postgres.sh start

pg-stop:
	@bash .ci/postgres.sh stop
