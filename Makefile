# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m pipeline.demo

test: $(STAMP)
	$(BIN)/python -m pytest --cov --cov-report=term-missing:skip-covered -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline cli.py

bench: $(STAMP)
	$(BIN)/python -m pipeline.bench $(if $(QUICK),--quick,)

clean:
	rm -rf $(VENV) .pytest_cache .coverage bench-results.json
