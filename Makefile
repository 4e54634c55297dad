# smuves-sync — `make help` lists the targets.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORTAL ?=
TYPES ?=
TYPE ?= site_page
FORMAT ?= csv
KINDS ?= fetch,export,push
CONCURRENCY ?= 4

.DEFAULT_GOAL := help
.PHONY: help install browser test test-fast lint format migrate schema sync demo fake serve dashboard worker bench bench-queue bench-queue-costs bench-client bench-sync bench-resync bench-fleet bench-diff bench-push export clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install the package with its dev tools and the benchmarks' peer (pgqueuer)

browser: ## install Debian's chromium for the dashboard's browser tests (apt, as root; idempotent)
	scripts/install_browser.sh

test: $(STAMP) ## run the whole test suite (unit, integration, acceptance)
	$(BIN)/pytest

test-fast: $(STAMP) ## run the tests not marked slow or acceptance
	$(BIN)/pytest -m "not slow and not acceptance"

lint: $(STAMP) ## ruff check, ruff format --check, mypy, import contracts (pyproject's importlinter)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP) ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrate: $(STAMP) ## apply database migrations (embedded Postgres when SMUVES_DATABASE_URL is unset)
	$(BIN)/smuves db migrate

schema: $(STAMP) ## rewrite migrations/schema.sql, the catalog of a freshly migrated database (tests compare it)
	$(BIN)/python scripts/dump_schema.py

demo: $(STAMP) ## start here: embedded Postgres + fake HubSpot portal (20k objects), full sync, CSV export; settings left in .env
	$(BIN)/python scripts/demo.py

fake: $(STAMP) ## serve the demo's fake HubSpot portal again, at the address in .env, until Ctrl-C
	$(BIN)/python scripts/demo.py --serve-fake

sync: $(STAMP) ## fetch a portal now with progress bars: make sync PORTAL=<id> [TYPES=site_page,blog_post]
	@test -n "$(PORTAL)" || { echo "usage: make sync PORTAL=<portal id> [TYPES=a,b]"; exit 2; }
	$(BIN)/smuves sync $(PORTAL) $(if $(TYPES),--types $(TYPES),)

export: $(STAMP) ## export stored content: make export PORTAL=<id> [TYPE=site_page] [FORMAT=csv|jsonl]
	@test -n "$(PORTAL)" || { echo "usage: make export PORTAL=<portal id> [TYPE=..] [FORMAT=..]"; exit 2; }
	$(BIN)/smuves export $(PORTAL) --type $(TYPE) --format $(FORMAT)

worker: $(STAMP) ## run a worker until Ctrl-C: make worker [KINDS=fetch,export,push] [CONCURRENCY=4]
	$(BIN)/smuves worker --kinds $(KINDS) --concurrency $(CONCURRENCY)

serve: $(STAMP) ## run the HTTP API on :8000 (needs SMUVES_JWT_SECRET, SMUVES_JWT_AUDIENCE, SMUVES_SECRET_KEY); make serve [PORT=8000]
	$(BIN)/smuves serve --port $(or $(PORT),8000)

dashboard: $(STAMP) ## the operators' dashboard on :8800; open the link it prints. make dashboard [PORT=8800]
	$(BIN)/smuves dashboard --port $(or $(PORT),8800)

bench: bench-queue bench-queue-costs bench-client bench-sync bench-resync bench-fleet bench-diff bench-push ## run every benchmark (extra flags for each: ARGS=...)

bench-queue: $(STAMP) ## benchmark queue drain rate and NOTIFY wake-up (scripts/bench_queue.py)
	$(BIN)/python scripts/bench_queue.py $(ARGS)

bench-queue-costs: $(STAMP) ## what each queue guarantee costs a drain, each taken out in turn (scripts/bench_queue_costs.py)
	$(BIN)/python scripts/bench_queue_costs.py $(ARGS)

bench-fleet: $(STAMP) ## benchmark a fleet: N portals, K workers, a wave of schedules and a person's sync (scripts/bench_fleet.py)
	$(BIN)/python scripts/bench_fleet.py $(ARGS)

bench-push: $(STAMP) ## benchmark a push of 10,000 field edits against the fake at its rate limit (scripts/bench_push.py)
	$(BIN)/python scripts/bench_push.py $(ARGS)

bench-client: $(STAMP) ## benchmark the HubSpot client against the rate-limit bound (scripts/bench_client.py)
	$(BIN)/python scripts/bench_client.py $(ARGS)

bench-sync: $(STAMP) ## benchmark sync, ingest and export (scripts/bench_sync.py; --json with ARGS=--json)
	$(BIN)/python scripts/bench_sync.py $(ARGS)

bench-diff: $(STAMP) ## what content history's text diffs cost, at and past their bounds (scripts/bench_json_diff.py)
	$(BIN)/python scripts/bench_json_diff.py $(ARGS)

bench-resync: $(STAMP) ## what re-syncs write and cost: rows, WAL, size; incremental requests (scripts/bench_sync.py --resync)
	$(BIN)/python scripts/bench_sync.py --resync $(ARGS)

clean: ## remove the virtualenv, caches and the embedded database
	rm -rf $(VENV) .smuves .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
