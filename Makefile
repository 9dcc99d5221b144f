# Needs only Python >= 3.11 and make. PostgreSQL and Redis come from wheels
# (see tools/services.py) unless DATABASE_URL / REDIS_URL point elsewhere.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# First interpreter on PATH that is really >= 3.11 (pyenv shims may exist without one).
FIND_PYTHON := for p in python3.13 python3.12 python3.11 python3; do \
	  if $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then echo $$p; break; fi; \
	done

.PHONY: help venv run dev test test-fast lint lint-commits prose stateful services-up services-down clean faults restore-drill payment-faults cluster-test partition-test e2e bench captcha-attack screenshots scan fairness draw-bench record-opening

# `make help` lists every target whose line carries a `## description`, in this file's order.
# The README's table of targets is made from the same comments (tools/readme_commands.py):
# after changing one, run `.venv/bin/python -m tools.readme_commands` (a test checks it).
help: ## this list
	@grep -E '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "make %-15s %s\n", $$1, $$2}'

venv: $(STAMP)

# Reinstall only when the requirements change.
$(STAMP): requirements.txt requirements-dev.txt
	@python="$$($(FIND_PYTHON))"; \
	if [ -z "$$python" ]; then echo "error: Python >= 3.11 not found on PATH (tried python3.13 python3.12 python3.11 python3)" >&2; exit 1; fi; \
	if [ ! -x $(PY) ]; then echo "creating $(VENV) with $$python"; "$$python" -m venv $(VENV); fi
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	@touch $@

run: venv ## start the demo: http://127.0.0.1:8000/goods/goodsList (Ctrl-C stops it; RELOAD=1 reloads on code changes)
	$(PY) -m tools.run

# The same with Django's runserver, which reloads on code changes.
dev: venv ## the same with Django's runserver and its autoreloader
	$(PY) -m tools.run --dev

# What the tiers of `make test` run on beyond Python, PostgreSQL and Redis (command or path :
# Debian package): the browser tests (Chromium, CJK fonts), the edge tests (Varnish, vmod
# xkey), promtool on deploy/, the skewed clock (libfaketime), Redis over TLS, the translations'
# check, the page scripts' plan (node), wrk, network namespaces and the AMQP burst (RabbitMQ:
# the broker on 5672, else a private node the test starts). As root they are installed when
# missing; otherwise the tiers that need them skip, naming the package, and under CI=true such
# a skip fails the run (conftest.py).
TEST_PACKAGES = chromium:chromium /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc:fonts-noto-cjk \
	$(EDGE_PACKAGES) promtool:prometheus /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1:libfaketime \
	redis-server:redis-server openssl:openssl xgettext:gettext msgattrib:gettext node:nodejs wrk:wrk \
	ip:iproute2 iptables:iptables /usr/lib/rabbitmq/bin/rabbitmq-server:rabbitmq-server

# Each step inside one `sh -c` with `set -e`: the first failure is the exit code.
test: venv ## ruff (lint and format), mypy, lint-imports, migrations check, promtool on deploy/ and pytest against real PostgreSQL/Redis, every tier (installs what the tiers need as root)
	@tools/need.sh --optional "make test" $(TEST_PACKAGES)
	$(PY) -m tools.with_services -- sh -c '\
	  set -e; export PATH="$(CURDIR)/$(VENV)/bin:$$PATH"; \
	  ruff check .; \
	  ruff format --check .; \
	  mypy; \
	  lint-imports --no-logo; \
	  DJANGO_SETTINGS_MODULE=seckill_site.settings.test python manage.py makemigrations --check --dry-run; \
	  if command -v promtool >/dev/null; then \
	    promtool check config --syntax-only deploy/prometheus.yml; \
	    promtool check rules deploy/alerts.yml; \
	    promtool test rules deploy/alerts-test.yml; \
	  elif [ "$${CI:-}" = true ]; then echo "error: promtool not found (Debian package prometheus): deploy/*.yml not checked" >&2; exit 1; \
	  else echo "note: promtool not found (Debian package prometheus); deploy/*.yml not checked"; fi; \
	  python -m pytest'

# What to run between edits: no mypy, no migrations check, no test marked `slow` or `processes`
# (conftest.py marks the tests whose fixtures start a web server, a Celery worker or a private
# redis-server). make test runs everything before a commit. Bytecode, pytest's rewritten test
# modules among it, is cached in .run/pycache even where PYTHONDONTWRITEBYTECODE is set, so a
# run does not compile some 400 modules again; the venv stays untouched. Two pytest-xdist
# workers, each with a test database and a Redis key prefix of its own (settings.test).
test-fast: venv ## the edit-test loop: ruff, lint-imports and the tests that are not slow and start no server process (ARGS="-k ...")
	env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$(CURDIR)/.run/pycache" \
	  $(PY) -m tools.with_services -- sh -c '\
	  set -e; export PATH="$(CURDIR)/$(VENV)/bin:$$PATH"; \
	  ruff check .; \
	  ruff format --check .; \
	  lint-imports --no-logo; \
	  python -m pytest -q -n 2 -m "not slow and not processes" $(ARGS)'

lint: venv ## ruff check + ruff format --check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The commit rule of CONTRIBUTING.md (.gitlint) over BASE..HEAD. Without BASE: origin/main where
# that exists, else the last 20 commits. Older history predates the rule: name a BASE after it.
lint-commits: venv ## gitlint (.gitlint) over BASE..HEAD (BASE=origin/main where it exists, else HEAD~20)
	@base='$(BASE)'; \
	if [ -z "$$base" ]; then \
	  if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; \
	  else base="$$(git rev-list --max-count=21 HEAD | tail -n 1)"; fi; \
	fi; \
	echo "gitlint --commits $$base..HEAD"; \
	$(VENV)/bin/gitlint --config .gitlint --commits "$$base..HEAD"

prose: venv ## lines of prose (docstrings, comments) per line of code, per package
	$(PY) -m tools.prose $(ARGS)

# The sale's life as a Hypothesis state machine (seckill/tests/test_stateful.py) on real Redis and
# PostgreSQL, with many more examples than `make test` gives it.
STATEFUL_EXAMPLES ?= 1000
STATEFUL_STEPS ?= 50
stateful: venv ## the sale's state machine with many examples (STATEFUL_EXAMPLES=1000, STATEFUL_STEPS=50; docs/architecture.md#proof)
	STATEFUL_EXAMPLES=$(STATEFUL_EXAMPLES) STATEFUL_STEPS=$(STATEFUL_STEPS) \
	  $(PY) -m tools.with_services -- $(PY) -m pytest seckill/tests/test_stateful.py users/tests/test_stateful_revocation.py -p no:cacheprovider -q

# An opening replayed in real time over HTTP against a production-like deployment (web server,
# Celery worker, beat) on real PostgreSQL and Redis: first come, first served, with a draw,
# behind a waiting room against ten times the scripts, and a draw whose every third winner does
# not pay (lab/fairness.py, docs/draw.md); ARGS=--in-process through the services instead.
fairness: venv ## people vs a scalper's scripts at a sale's opening, over HTTP: first come, first served vs a draw (ARGS="--seeds 5 ..."; --modes room: a waiting room; --modes unpaid: a third of the winners don't pay; docs/draw.md#measuring-fairness-make-fairness)
	$(PY) -m tools.with_services -- $(PY) -m lab.fairness $(ARGS)

# A draw sale's Redis side at 10^4, 10^5 and 10^6 entrants, with 1 and 16 entry shards, on a
# redis-server and a 3-primary cluster of its own (lab/draw_bench.py, docs/draw.md "Scale").
draw-bench: venv ## a draw sale's entries/s, draw time and memory at 10^4..10^6 entrants, K entry shards, one server and a 3-primary cluster (ARGS=...; docs/draw-shards.md)
	$(PY) -m tools.with_services -- $(PY) -m lab.draw_bench $(ARGS)

services-up: venv ## start the embedded PostgreSQL/Redis and print their URLs
	$(PY) -m tools.services up

services-down: ## stop the embedded servers (data stays in .run/)
	@if [ -x $(PY) ]; then $(PY) -m tools.services down; fi

# How often off-the-shelf OCR (ddddocr, Tesseract) and a small model trained on the generator
# solve the captcha (lab/captcha_attack). Its dependencies stay out of the shop's .venv:
# they go into .venv-attack. As root, installs Debian's tesseract-ocr when it is missing.
ATTACK_VENV := .venv-attack
ATTACK_STAMP := $(ATTACK_VENV)/.installed

$(ATTACK_STAMP): requirements-attack.txt
	@python="$$($(FIND_PYTHON))"; \
	if [ -z "$$python" ]; then echo "error: Python >= 3.11 not found on PATH" >&2; exit 1; fi; \
	if [ ! -x $(ATTACK_VENV)/bin/python ]; then "$$python" -m venv $(ATTACK_VENV); fi
	$(ATTACK_VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-attack.txt
	@touch $@

captcha-attack: $(ATTACK_STAMP) ## OCR engines and a trained model against the old and new captcha (docs/bots.md)
	@tools/need.sh "make captcha-attack" tesseract:tesseract-ocr
	OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 $(ATTACK_VENV)/bin/python -m lab.captcha_attack $(ARGS)

# wapiti3 against the production settings on loopback (lab/scan.py), anonymous and logged in,
# bounded in time (ARGS="--seconds N" per scan); fails on any 5xx, anomaly or finding not on
# lab/scan_allowlist.txt. wapiti3 pins its own dependencies: it goes into .venv-scan.
SCAN_VENV := .venv-scan
SCAN_STAMP := $(SCAN_VENV)/.installed

$(SCAN_STAMP): requirements-scan.txt
	@python="$$($(FIND_PYTHON))"; \
	if [ -z "$$python" ]; then echo "error: Python >= 3.11 not found on PATH" >&2; exit 1; fi; \
	if [ ! -x $(SCAN_VENV)/bin/python ]; then "$$python" -m venv $(SCAN_VENV); fi
	$(SCAN_VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-scan.txt
	@touch $@

scan: venv $(SCAN_STAMP) ## wapiti3 against a production-like deployment, anonymous and logged in (a few minutes; docs/security.md)
	@command -v openssl >/dev/null || { echo "error: openssl is needed for the scan's TLS certificate" >&2; exit 1; }
	$(PY) -m tools.with_services -- $(PY) -m lab.scan $(ARGS)

# Stop the servers first: deleting .run/ under a running PostgreSQL would orphan it.
clean: services-down ## stop the embedded servers, then delete .run/ and .venv/
	rm -rf .run $(VENV)

# What the multi-node topology runs on (lab/cluster/): command or path : Debian package.
CLUSTER_PACKAGES := haproxy:haproxy pgbouncer:pgbouncer psql:postgresql-client \
	/usr/lib/rabbitmq/bin/rabbitmq-server:rabbitmq-server etcd:etcd-server patroni:patroni \
	/usr/lib/postgresql/15/bin/postgres:postgresql-15
# Its edge in front of HAProxy (deploy/edge.vcl: Varnish and vmod xkey); `make bench
# ARGS=--cluster` drives HAProxy itself and does without.
EDGE_PACKAGES := /usr/sbin/varnishd:varnish /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so:varnish-modules \
  /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_redis.so:varnish-redis \
  /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_digest.so:varnish-vmod-digest

# Fault injection against a private production-like deployment (see lab/faults.py).
faults: venv ## kill, freeze, restart and cut the services under load; check the invariants
	$(PY) -m lab.faults

# A backup restored to a point in time (lab/restore_drill/): a private PostgreSQL 15 archiving
# its WAL through pgBackRest (deploy/pgbackrest.conf), a sale's orders on both sides of a restore
# target, then the restore checked against the original. ARGS="--target name" restores to a named
# restore point instead of a time. As root, installs the Debian packages it needs when missing.
RESTORE_PACKAGES := /usr/lib/postgresql/15/bin/postgres:postgresql-15 pgbackrest:pgbackrest
restore-drill: venv ## back up a private PostgreSQL with pgBackRest, restore it to a point in time, check orders and invariants (docs/operations.md#backups-and-point-in-time-restore)
	@tools/need.sh "make restore-drill" $(RESTORE_PACKAGES)
	$(PY) -m lab.restore_drill $(ARGS)

# The payments' faults and bad input against the providers' stand-ins (docs/payments.md): lost,
# duplicated, late and forged notifications, a provider down, a web worker killed mid-capture.
payment-faults: venv ## payments under faults: notifications lost, repeated, late, forged; providers down; a worker killed
	$(PY) -m tools.with_services -- $(PY) -m pytest -v -p no:cacheprovider orders/tests/test_notifications.py \
	  orders/tests/test_payment_crash.py orders/tests/test_cashier.py orders/tests/test_closing.py \
	  orders/tests/test_refunds.py orders/tests/test_reconcile.py

# The multi-node topology of deploy/ on this machine, with faults during HTTP bursts through
# the edge (Varnish) and HAProxy (lab/cluster/, docs/topology.md). Takes minutes, so it stays
# out of `make test`.
# As root, installs the Debian packages it needs when they are missing.
cluster-test: venv ## Varnish edge, HAProxy, 3 web nodes, 2 workers, Redis Cluster, RabbitMQ x3, PgBouncer, PostgreSQL x3 under Patroni; faults under load (docs/topology.md, docs/database.md)
	@tools/need.sh "make cluster-test" $(CLUSTER_PACKAGES) $(EDGE_PACKAGES) cc:gcc \
	  /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1:libfaketime
	$(PY) -m lab.cluster $(ARGS)

# The same topology with every simulated host in its own network namespace on a bridge, and
# faults that cut or slow links (lab/cluster/partition.py, docs/topology.md). Root only: it
# creates namespaces, veths, a bridge and iptables rules, and removes them on exit, Ctrl-C or
# SIGTERM (`make partition-test ARGS=cleanup` removes what a kill -9 of the test left).
partition-test: venv ## the same, each host in its own network namespace (root): partitions, slow links (docs/topology.md, docs/database.md)
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "error: make partition-test needs root (network namespaces, veth pairs, a bridge, iptables)" >&2; exit 2; \
	fi
	@tools/need.sh "make partition-test" $(CLUSTER_PACKAGES) $(EDGE_PACKAGES) iptables:iptables ip:iproute2
	$(PY) -m lab.cluster.partition $(ARGS)

# Browser tests in the system's Chromium (Playwright cannot download its own here).
# As root, installs Debian's chromium when it is missing; `make test` runs them when present.
e2e: venv ## browser tests in Chromium (installs it as root when missing)
	@tools/need.sh "make e2e" chromium:chromium chromedriver:chromium-driver \
	  /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc:fonts-noto-cjk
	$(PY) -m tools.with_services -- $(PY) -m pytest e2e -v

# Real Chromium shoppers through a sale's opening, every request their pages make recorded
# (lab/record_opening.py): the rates per phase that `make bench`'s opening mix replays.
record-opening: venv ## record the requests an opening's pages make, in Chromium: lab/data/opening_mix.json (ARGS="--shoppers 20 --lead 75"; docs/performance.md)
	@tools/need.sh "make record-opening" chromium:chromium
	@case " $(ARGS) " in *" --edge "*) tools/need.sh "make record-opening ARGS=--edge" $(EDGE_PACKAGES);; esac
	$(PY) -m tools.with_services -- $(PY) -m lab.record_opening $(ARGS)

# The contact sheet of every shopper page and the merchant's main admin screens (e2e/screenshots.py).
screenshots: venv ## every shopper page and the main admin screens, desktop and phone, English and Chinese: docs/screenshots.png
	@command -v chromium >/dev/null || { echo "error: Chromium missing: make e2e installs it" >&2; exit 1; }
	$(PY) -m tools.with_services -- $(PY) -m pytest e2e/screenshots.py -q

# Load test (python -m lab.bench, code in lab/bench/): gunicorn + Celery on the
# given or embedded PostgreSQL/Redis, driven by wrk. As root, installs wrk when missing;
# otherwise falls back to a Python asyncio generator. Results land in bench-results/.
# ARGS=--cluster runs it through the cluster-test topology instead (lab/bench/cluster.py), which
# brings its own Redis and database: no embedded services; as root, installs its packages.
bench: venv ## load-test a production-like deployment with wrk (ARGS="--users 5000 ..."; ARGS=--cluster: through the cluster-test topology; ARGS=--edge: through Varnish; docs/performance.md)
	@tools/need.sh --optional "make bench (else the Python asyncio generator)" wrk:wrk
	@case " $(ARGS) " in *" --edge "*) \
	  tools/need.sh "make bench ARGS=--edge" $(EDGE_PACKAGES);; \
	esac
	@case " $(ARGS) " in *" --cluster "*) \
	  tools/need.sh "make bench ARGS=--cluster" $(CLUSTER_PACKAGES); \
	  echo "$(PY) -m lab.bench $(ARGS)"; $(PY) -m lab.bench $(ARGS);; \
	*) echo "$(PY) -m tools.with_services -- $(PY) -m lab.bench $(ARGS)"; \
	  $(PY) -m tools.with_services -- $(PY) -m lab.bench $(ARGS);; \
	esac
