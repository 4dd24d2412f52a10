# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pyspark (about 490 MB) only for the Spark engine and its test: `make spark`, which `make test` runs
SPARK_STAMP := $(VENV)/.installed-spark

# The default build (setup.py: compiled with mypyc where a C compiler exists) into build/compiled, beside the
# editable pure-Python install of .venv, which it never shadows; rebuilt when a source changes. Its
# bin/xuezhan runs it. ON_COMPILED puts it first on the path (PYTHONSAFEPATH: not the working directory, whose
# sources would come first; children inherit both).
COMPILED := build/compiled
COMPILED_STAMP := $(COMPILED)/.built
PACKAGE_SOURCES := $(wildcard setup.py pyproject.toml cli.py) $(shell find pipeline schemas dashboards -type f \
	\( -name '*.py' -o -name '*.sql' -o -name '*.toml' -o -name '*.json' -o -name '*.md' \
	-o -name '*.css' -o -name '*.js' \) 2>/dev/null)
ON_COMPILED := PYTHONPATH=$(CURDIR)/$(COMPILED) PYTHONSAFEPATH=1

.PHONY: demo test lint bench bench-scale venv spark clean system-deps compiled test-compiled

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

$(COMPILED_STAMP): $(STAMP) $(PACKAGE_SOURCES)
	rm -rf $(COMPILED) build/lib.* build/temp.*
	$(BIN)/python -m pip install --quiet --no-build-isolation --no-deps --target $(COMPILED) . \
	  2>&1 | grep -v "Treating generator comprehension as list" || true
	test -f $(COMPILED)/pipeline/game/state.py
	mkdir -p $(COMPILED)/bin
	echo '#!/bin/sh' > $(COMPILED)/bin/xuezhan
	echo '$(ON_COMPILED) exec "$(CURDIR)/$(BIN)/python" -c "from cli import app; app(prog_name=\"xuezhan\")" "$$@"' \
	  >> $(COMPILED)/bin/xuezhan
	chmod +x $(COMPILED)/bin/xuezhan
	$(ON_COMPILED) $(BIN)/python -c "import pipeline; print('built $(COMPILED): engine', pipeline.engine())"
	touch $@

compiled: $(COMPILED_STAMP)

# The demo runs what a user's `pip install .` gives: the compiled build (pure Python, with a warning, where no C
# compiler exists), from build/compiled; XUEZHAN_REPO tells it where the sample is.
demo: $(COMPILED_STAMP)
	XUEZHAN_REPO=$(CURDIR) $(ON_COMPILED) $(BIN)/python -m dashboards.demo

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

# Two runs. First the pure-Python sources under coverage: the engine's tests (rules, hand state machine, parser,
# validator, the regression corpus), which hold pipeline/rules, pipeline/game and pipeline/validate.py at 100%,
# and every doctest. Then the whole tests folder (the engine's tests once more) on the compiled build a user
# installs (no coverage: tracing cannot see compiled code, and it would double the time of every
# simulation-heavy test). Both spread over the machine's cores (pytest-xdist; JOBS=1 for one process).
COVERAGE_TESTS := tests/test_rules_*.py tests/test_game_*.py tests/test_record_*.py tests/test_validate_*.py \
	tests/test_xzlog_schema.py tests/test_sample_data.py tests/test_tables_mixed.py tests/test_engine_build.py \
	tests/test_levels.py tests/test_levels_observer.py tests/corpus pipeline schemas dashboards tools cli.py
JOBS ?= auto
PARALLEL := $(if $(filter 1,$(JOBS)),,-n $(JOBS))
# The system parts found after system-deps (tests/system_parts.py): a test needing one that is expected fails where
# it cannot find it, instead of skipping.
EXPECT := XUEZHAN_EXPECT="$$(fc-list :lang=zh 2>/dev/null | grep -q . && printf cjk,)$$(command -v chromium \
	>/dev/null 2>&1 && printf chromium)"

test: $(SPARK_STAMP) system-deps $(COMPILED_STAMP)
	$(EXPECT) $(BIN)/python -m pytest $(PARALLEL) --cov --cov-report=term-missing:skip-covered -p no:cacheprovider \
	  --durations=10 $(COVERAGE_TESTS)
	$(MAKE) --no-print-directory test-compiled

test-compiled: $(COMPILED_STAMP)
	$(EXPECT) XUEZHAN_EXPECT_COMPILED=$(if $(wildcard $(COMPILED)/pipeline/_engine.txt),0,1) $(ON_COMPILED) \
	  $(BIN)/python -m pytest $(PARALLEL) -p no:cacheprovider --durations=10 tests

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline dashboards schemas tools cli.py

# make bench: 20k, 200k and 1M hands (the 1M warehouse cached in $XUEZHAN_BENCH_CACHE, keyed by the code it
# depends on); QUICK=1: 4k and 20k, about 2 minutes; SKIP_1M=1: 20k and 200k; BENCH_ARGS: e.g. --timeout 600
bench: $(COMPILED_STAMP)
	$(BIN)/python -m tools.bench --compiled $(COMPILED) $(if $(QUICK),--quick,) $(if $(SKIP_1M),--skip-1m,) $(BENCH_ARGS)

# make bench-scale: the screens at 200k, 1M and 5M hands against the issue's floors (time linear in hands, memory
# flat); the warehouses are made once and cached (the 5M one cloned from the 1M one); the screens take an hour at 5M
bench-scale: $(COMPILED_STAMP)
	$(BIN)/python -m tools.bench_scale --compiled $(COMPILED) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .coverage bench-results.json bench-scale-results.json build
