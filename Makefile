# Two commands for a newcomer: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/flowpilot db migrate
	$(BIN)/flowpilot seed demo --if-empty
	$(BIN)/flowpilot up

test: lint unit

lint: $(STAMP)
	$(BIN)/ruff check shared functions tests bench
	$(BIN)/ruff format --check shared functions tests bench
	$(BIN)/mypy
	$(BIN)/cfn-lint template.yaml

unit: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	@for b in bench/*.py; do echo "# $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
