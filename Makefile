# smuves-sync — `make help` lists the targets.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORTAL ?=
TYPES ?=

.DEFAULT_GOAL := help
.PHONY: help install test test-fast lint format typecheck migrate sync demo serve worker bench clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install the package with its dev tools

test: $(STAMP) ## run the whole test suite (unit, integration, acceptance)
	$(BIN)/pytest

test-fast: $(STAMP) ## run the tests not marked slow or acceptance
	$(BIN)/pytest -m "not slow and not acceptance"

lint: $(STAMP) ## ruff check, ruff format --check, mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP) ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrate: $(STAMP) ## apply database migrations (embedded Postgres when SMUVES_DATABASE_URL is unset)
	$(BIN)/smuves db migrate

clean: ## remove the virtualenv, caches and the embedded database
	rm -rf $(VENV) .smuves .pytest_cache .mypy_cache .ruff_cache
