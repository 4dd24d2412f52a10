# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pyspark (about 490 MB) only for the Spark engine and its test: `make spark`, which `make test` runs
SPARK_STAMP := $(VENV)/.installed-spark

.PHONY: demo test lint bench venv spark clean system-deps compiled test-compiled

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Redone whenever the venv's install is (a new pyproject.toml), so the extra always matches it.
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,spark]'
	touch $(SPARK_STAMP)

spark: $(SPARK_STAMP)

demo: $(STAMP)
	$(BIN)/python -m dashboards.demo

# What the tests need from the system, nothing more (no recommended packages, a Java runtime without a GUI):
# Debian's chromium (the report tests open the HTML in a real browser), a CJK font (Chinese chart labels; fc-list,
# from fontconfig, finds it) and a headless Java 17 runtime (the Spark engine's test). Installed when missing and
# apt is there; without them those tests skip with their reason.
SYSTEM_PACKAGES := chromium fonts-noto-cjk fontconfig openjdk-17-jre-headless
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q . \
	    || ! command -v java >/dev/null 2>&1 ; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	      $(SYSTEM_PACKAGES)) || echo "warning: could not install $(SYSTEM_PACKAGES)"; \
	  else echo "warning: chromium, a CJK font or java is missing and cannot be installed here ($(SYSTEM_PACKAGES))"; fi; \
	fi

test: $(SPARK_STAMP) system-deps
	$(BIN)/python -m pytest --cov --cov-report=term-missing:skip-covered -p no:cacheprovider --durations=15
	$(MAKE) --no-print-directory test-compiled

# The optional compiled engine (setup.py: mypyc, XUEZHAN_COMPILE=1), built into build/compiled beside the
# editable pure-Python install, which it never shadows. `make test` runs the engine's tests against it too.
COMPILED := build/compiled
ENGINE_TESTS := tests/test_rules_tiles.py tests/test_rules_hand.py tests/test_rules_fan.py tests/test_rules_settle.py \
	tests/test_rules_table.py tests/test_rules_shanten_reference.py tests/test_game_start.py tests/test_game_edges.py \
	tests/test_record_parse_edges.py tests/test_validate_lines.py tests/test_validate_properties.py \
	tests/test_validate_cli.py tests/test_record_events.py tests/test_engine_build.py

compiled: $(STAMP)
	rm -rf $(COMPILED) build/lib.* build/temp.*
	XUEZHAN_COMPILE=1 $(BIN)/python -m pip install --quiet --no-build-isolation --no-deps --target $(COMPILED) . \
	  2>&1 | grep -v "Treating generator comprehension as list" || true
	test -f $(COMPILED)/pipeline/game/state.py

test-compiled: compiled
	cd $(COMPILED) && XUEZHAN_EXPECT_COMPILED=1 $(CURDIR)/$(BIN)/python -m pytest -c $(CURDIR)/pyproject.toml \
	  --rootdir $(CURDIR) -p no:cacheprovider $(addprefix $(CURDIR)/,$(ENGINE_TESTS))

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline dashboards schemas cli.py

bench: $(STAMP)
	$(MAKE) --no-print-directory compiled || echo "warning: the compiled engine did not build; bench measures pure Python only"
	$(BIN)/python -m pipeline.bench --compiled $(COMPILED) $(if $(QUICK),--quick,)

clean:
	rm -rf $(VENV) .pytest_cache .coverage bench-results.json build
