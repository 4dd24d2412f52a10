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
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m pipeline.demo

# Debian's chromium (the report test opens the HTML in a real browser) and a CJK font (Chinese chart labels).
# Installed when missing and apt is there; without them the browser test skips with its reason.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q . ; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-cjk) \
	      || echo "warning: could not install chromium / fonts-noto-cjk"; \
	  else echo "warning: chromium or a CJK font is missing and cannot be installed here"; fi; \
	fi

test: $(STAMP) system-deps
	$(BIN)/python -m pytest --cov --cov-report=term-missing:skip-covered -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline cli.py

bench: $(STAMP)
	$(BIN)/python -m pipeline.bench $(if $(QUICK),--quick,)

clean:
	rm -rf $(VENV) .pytest_cache .coverage bench-results.json
