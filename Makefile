# The two commands a new user runs: `make demo` and `make test`.
# Each creates .venv on first use; the stamp makes the install idempotent.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench clean

# uv resolves the same versions as pip, in a quarter of pip's CPU time (docs/performance.md,
# "`make test`"). It reads no pip.conf: where it cannot be installed or cannot reach the
# index (one set only in pip's configuration), pip installs instead.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	( $(BIN)/python -m pip install --quiet uv \
	  && $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]' ) \
	  || $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/evalflow demo

# worksteal: each worker starts on one contiguous half of the tests (a module's tests, and so
# its module fixtures, mostly stay on one worker); one that runs out takes half of what the
# other has left, so neither idles at the end behind the other's long tail.
test: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist worksteal -m "not slow" --timeout=300

lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# `make bench` measures at full size; `make bench BENCH_ARGS=--smoke` (CI) runs every script at
# its smallest size, to prove each one still runs. The CPU seconds of each script follow it.
BENCH_ARGS ?=
bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; \
	  bash -c 'TIMEFORMAT="== $$0: %U s user + %S s system CPU, %R s wall"; time "$$@"' \
	    $$b $(BIN)/python $$b $(BENCH_ARGS) || exit 1; done

clean:
	rm -rf $(VENV) data/warehouse
