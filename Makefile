# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench venv clean system-deps

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m pipeline.demo

# Debian's chromium (the report test opens the HTML in a real browser), a CJK font (Chinese chart labels) and
# Java 17 (the Spark engine's test). Installed when missing and apt is there; without them those tests skip
# with their reason.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q . \
	    || ! command -v java >/dev/null 2>&1 ; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-cjk \
	      openjdk-17-jre-headless) || echo "warning: could not install chromium / fonts-noto-cjk / java"; \
	  else echo "warning: chromium, a CJK font or java is missing and cannot be installed here"; fi; \
	fi

test: $(STAMP) system-deps
	$(BIN)/python -m pytest --cov --cov-report=term-missing:skip-covered -p no:cacheprovider --durations=15

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline cli.py

bench: $(STAMP)
	$(BIN)/python -m pipeline.bench $(if $(QUICK),--quick,)

clean:
	rm -rf $(VENV) .pytest_cache .coverage bench-results.json
