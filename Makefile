# Two commands matter: `make demo` and `make test`. Both install everything they need first.
SHELL := /bin/bash
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
RUN := $(UV) run --frozen

.PHONY: install ops-tools browser-tools demo dev test test-unit test-embedded lint soak bench clean

$(UV):
	$(PYTHON) -m venv .tools && .tools/bin/pip install --quiet uv

install: $(UV)
	$(UV) sync --frozen

# promtool and amtool, which tests/ops runs against ops/prometheus and ops/alertmanager. They come
# from Debian's packages (prometheus 2.42, prometheus-alertmanager 0.25: the versions the rules and
# the compose images are written for); nothing happens when both are already on PATH or in /usr/bin.
# - `apt-get update` only when apt knows no candidate for them, so a warm machine stays offline.
# - The packages' postinst starts the daemons (`invoke-rc.d ... start || exit 1`). We need only the
#   two CLIs: a started daemon would hold :9090/:9093 on a dev box, and a start that fails (no init,
#   port taken) fails the whole install. So while apt runs, a policy-rc.d that answers 101 ("action
#   forbidden") is put in place when the machine has none; invoke-rc.d and deb-systemd-invoke then
#   skip the start and the postinst succeeds. A policy-rc.d already there (Docker images ship one)
#   is left alone. On a systemd host the units are still enabled for the next boot, as any Debian
#   install does: `systemctl disable prometheus prometheus-alertmanager` if that is unwanted.
POLICY_RC_D := /usr/sbin/policy-rc.d
ops-tools:
	@if { command -v promtool || test -x /usr/bin/promtool; } >/dev/null && \
	    { command -v amtool || test -x /usr/bin/amtool; } >/dev/null; then exit 0; fi; \
	set -e; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null; then sudo=sudo; \
	else echo "ops-tools: promtool/amtool are missing and installing them needs root or sudo" >&2; exit 1; fi; \
	command -v apt-get >/dev/null || { echo "ops-tools: no apt-get here; put Prometheus 2.42's promtool and Alertmanager 0.25's amtool on PATH" >&2; exit 1; }; \
	if [ "$$(apt-cache policy prometheus prometheus-alertmanager | grep -c 'Candidate: [0-9]')" != 2 ]; then \
	    $$sudo apt-get update -qq; fi; \
	if [ ! -e $(POLICY_RC_D) ]; then \
	    trap '$$sudo rm -f $(POLICY_RC_D)' EXIT; \
	    printf '#!/bin/sh\n# written by `make ops-tools` for the duration of one apt-get install\nexit 101\n' | \
	        $$sudo tee $(POLICY_RC_D) >/dev/null; \
	    $$sudo chmod 755 $(POLICY_RC_D); \
	fi; \
	$$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager; \
	promtool --version | head -1; amtool --version 2>&1 | head -1

# Chromium for the browser tests (tests/web): Playwright drives Debian's build through
# `executable_path`, because Playwright's own browser download is not reachable from every machine
# and would pin a second browser beside the distribution's. Nothing happens when /usr/bin/chromium
# is already there. `apt-get update` runs only when apt knows no candidate (or the install fails on
# a stale list), and the same
# policy-rc.d guard as `ops-tools` keeps any postinst among its dependencies from starting a
# service. `SCORELINE_CHROMIUM` points the tests at another binary.
browser-tools:
	@if test -x /usr/bin/chromium; then exit 0; fi; \
	set -e; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null; then sudo=sudo; \
	else echo "browser-tools: chromium is missing and installing it needs root or sudo" >&2; exit 1; fi; \
	command -v apt-get >/dev/null || { echo "browser-tools: no apt-get here; install Chromium and set SCORELINE_CHROMIUM to its binary" >&2; exit 1; }; \
	if ! apt-cache policy chromium | grep -q 'Candidate: [0-9]'; then $$sudo apt-get update -qq; fi; \
	if [ ! -e $(POLICY_RC_D) ]; then \
	    trap '$$sudo rm -f $(POLICY_RC_D)' EXIT; \
	    printf '#!/bin/sh\n# written by `make browser-tools` for the duration of one apt-get install\nexit 101\n' | \
	        $$sudo tee $(POLICY_RC_D) >/dev/null; \
	    $$sudo chmod 755 $(POLICY_RC_D); \
	fi; \
	install="$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium"; \
	$$install || { $$sudo apt-get update -qq && $$install; }; \
	/usr/bin/chromium --version

demo: install
	$(RUN) scoreline demo

dev: install
	$(RUN) scoreline dev

# The suite in TEST_WORKERS processes (pytest-xdist), a test file per process at a time: most of a
# test's time is spent waiting on Temporal, Postgres and the simulators, so two share two cores.
# The browser tests then run alone: they time what a page shows (a version within 5 s, a board
# that does not move) and missed it with the other process busy on the same two cores.
# PYTEST_ARGS runs just those arguments, in one process.
TEST_WORKERS ?= 2
test: install ops-tools browser-tools
ifeq ($(strip $(PYTEST_ARGS)),)
	$(RUN) pytest -n $(TEST_WORKERS) --dist loadfile --ignore=tests/web
	$(RUN) pytest tests/web
else
	$(RUN) pytest $(PYTEST_ARGS)
endif

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
	$(RUN) lint-imports

# The chaos soak (`scoreline soak`): SOAK_MINUTES of load while a seeded plan breaks the stack.
SOAK_MINUTES ?= 30
soak: install
	$(RUN) scoreline soak --minutes $(SOAK_MINUTES) $(if $(SOAK_SEED),--seed $(SOAK_SEED))

bench: install
	@for bench in bench/[!_]*.py; do echo "== $$bench"; $(RUN) python $$bench || exit 1; done

clean:
	rm -rf .venv .tools .scoreline .pytest_cache .mypy_cache .ruff_cache
