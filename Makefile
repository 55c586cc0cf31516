# Two commands matter: `make demo` and `make test`. Both install everything they need first.
SHELL := /bin/bash
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
RUN := $(UV) run --frozen

.PHONY: install demo dev test test-unit test-embedded lint bench clean

$(UV):
	$(PYTHON) -m venv .tools && .tools/bin/pip install --quiet uv

install: $(UV)
	$(UV) sync --frozen

demo: install
	$(RUN) scoreline demo

dev: install
	$(RUN) scoreline dev

test: install
	$(RUN) pytest $(PYTEST_ARGS)

# The pure code only (domain, rules, normaliser, push plans …): no service is started, seconds.
test-unit: install
	$(RUN) pytest -m unit $(PYTEST_ARGS)

# The same suite on embedded Postgres and Redis even where the machine has its own.
test-embedded: install
	SCORELINE_TEST_EMBEDDED=1 $(RUN) pytest $(PYTEST_ARGS)

lint: install
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) mypy

bench: install
	@for bench in bench/[!_]*.py; do echo "== $$bench"; $(RUN) python $$bench || exit 1; done

clean:
	rm -rf .venv .tools .scoreline .pytest_cache .mypy_cache .ruff_cache
