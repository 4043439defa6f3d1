# mcpsite — `make demo` runs the whole system with demo data; `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
HOST    ?= 127.0.0.1
PORT    ?= 8000
# A Python >= 3.12: the pyenv shim (honours .python-version), python3.13/3.12, or pyenv's versions.
PYTHON  ?= $(shell for c in python3 python3.13 python3.12 $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -Vr); do \
             command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { command -v $$c; break; }; done)

.PHONY: help venv demo serve test conformance lint bench clean system-deps messages gettext

help:
	@echo "make demo   - install, migrate, seed demo data, print an API key, serve on http://$(HOST):$(PORT)"
	@echo "make serve  - migrate, collectstatic, uvicorn --workers \$$WORKERS (docs/production.md: the supervised recipe)"
	@echo "make test   - every test on SQLite and on a throwaway PostgreSQL, plus the MCP conformance suite"
	@echo "make lint   - ruff;  make bench - benchmarks (ratios)"

$(VENV)/.installed: requirements.txt
	@if [ -z "$(PYTHON)" ]; then echo "mcpsite needs Python >= 3.12 (python3.12 or python3.13 on PATH, or pyenv)." >&2; exit 1; fi
	@echo "Creating $(VENV) with $(PYTHON)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# (this machine's pip config names local indexes that may be absent; those warnings are noise)
	@$(PIP) install -q --disable-pip-version-check -r requirements.txt 2> >(grep -v "^WARNING: Location" >&2)
	@touch $@

venv: $(VENV)/.installed

demo: venv messages
	@$(PY) manage.py migrate --noinput -v 0
	@LOG_LEVEL=WARNING $(PY) manage.py seed_demo --host $(HOST):$(PORT)
	@$(PY) manage.py collectstatic --noinput -v 0
	@echo "Serving on http://$(HOST):$(PORT) (admin: /admin/, MCP: /mcp) with the task worker and the reminder scheduler; Ctrl-C stops all."
	@# The task worker writes its metrics where the web process's /metrics reads them (scripts/serve's directory).
	@trap 'kill 0' EXIT INT TERM; \
	  export PROMETHEUS_MULTIPROC_DIR="$${PROMETHEUS_MULTIPROC_DIR:-$${MCPSITE_VAR_DIR:-$$PWD/var}/metrics}"; \
	  mkdir -p "$$PROMETHEUS_MULTIPROC_DIR"; \
	  $(PY) manage.py db_worker --queue-name '*' & \
	  $(PY) manage.py reminders_scheduler --interval 30 & \
	  HOST=$(HOST) PORT=$(PORT) WORKERS=1 scripts/serve

# Production (docs/production.md): the environment names the database, Redis, hosts and secret; migrate alone
# prepares a fresh database; N uvicorn worker processes serve it, stateless, behind any load balancer. Forwarded
# headers are believed only from TRUSTED_PROXY_IPS (scripts/serve; default none).
WORKERS ?= 2
# Each process writes its metrics under PROMETHEUS_MULTIPROC_DIR (scripts/serve sets it: var/metrics unless the
# environment names one; give the task worker the same); /metrics sums them. Never emptied here: the task worker
# may be writing there.
serve: venv messages
	@$(PY) manage.py migrate --noinput -v 0
	@$(PY) manage.py collectstatic --noinput -v 0
	@HOST=$(HOST) PORT=$(PORT) WORKERS=$(WORKERS) scripts/serve  # X-Forwarded-For only from $$TRUSTED_PROXY_IPS

test: venv system-deps messages
	@scripts/run-tests

conformance: venv messages
	@scripts/conformance

# The staff's Japanese: locale/ja/LC_MESSAGES/django.po and djangojs.po (the admin's JavaScript widgets), committed,
# compiled to .mo files (build artifacts, like .pyc) by Django's compilemessages, which runs GNU gettext's msgfmt.
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/*.po))
messages: $(MO_FILES)

locale/%.mo: locale/%.po | venv gettext
	@$(PY) manage.py compilemessages -v 0 --locale $(firstword $(subst /, ,$*))

gettext:
	@if ! command -v msgfmt >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing gettext (compiles the Japanese catalogue)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; \
	  else echo "Install the Debian package gettext (msgfmt compiles the Japanese catalogue)" >&2; exit 1; fi; fi

# System packages the tests use: Debian chromium (Playwright drives it) with CJK fonts, so screenshots
# of the Japanese admin are legible, redis-server (the REDIS_URL cache is tested against a real one), gettext
# (msgfmt: compilemessages), prometheus (scrapes two workers; promtool checks the exposition) and haproxy (the
# balancer of scripts/serve-balanced, in front of two processes: mcpsite/tests/test_balanced.py).
SYSTEM_PACKAGES := chromium fonts-noto-cjk redis-server gettext prometheus haproxy
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1 \
	    || ! command -v msgfmt >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1 \
	    || ! command -v haproxy >/dev/null 2>&1 \
	    || ! fc-list 2>/dev/null | grep -qi "noto sans cjk"; then \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing $(SYSTEM_PACKAGES) for the tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null; \
	  else echo "Install the Debian packages $(SYSTEM_PACKAGES) for the tests" >&2; fi; fi

lint: venv
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/ruff format --check .

# bench_serving drives real uvicorn processes with wrk (Debian) and starts its own PostgreSQL and redis-server.
bench: venv system-deps messages
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; } \
	  || echo "Install the Debian package wrk for bench/bench_serving.py" >&2
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) var/*.sqlite3* var/mail var/static $(MO_FILES)
