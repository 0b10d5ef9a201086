# Every target is self-sufficient on a fresh machine with Python 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_TEST := $(VENV)/.installed-test
STAMP_BASE := $(VENV)/.installed
STAMP_DOCS := $(VENV)/.installed-docs

.PHONY: test test-slow test-stress lint docs demo fuzz fuzz-native bench clean check-report

# The pip that venv brings (23.2 with Python 3.11.7) installs the editable package and its
# extras; upgrading it first cost a fresh clone ~13 s of waiting on the index.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP_BASE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The test extra holds the docs extra (mkdocs). The editable install also compiles the
# optional parser extension (hatch_build.py; pure Python when it cannot), so a change of
# the C source or of the hook installs again.
NATIVE_SOURCES := hatch_build.py sitemap_reader/parse/_native/_expatcore.c
$(STAMP_TEST): pyproject.toml $(NATIVE_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_BASE) $(STAMP_DOCS)

$(STAMP_DOCS): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@ $(STAMP_BASE)

LINT := $(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy
# The docs site (mkdocs.yml), strict: a broken link or anchor, or a page left out of the
# nav, fails the build. The site goes to build/docs.
DOCS := $(BIN)/mkdocs build --strict

lint: $(STAMP_TEST)
	$(LINT)

docs: $(STAMP_DOCS)
	$(DOCS)

# Test workers: more than the cores, as many tests wait on child processes, sockets and
# timers (on 2 quiet cores -n 2 left the machine ~63 % idle, and -n 4 took 271 s against
# 343-503 s: #29). TEST_WORKERS=2 make test compares; TEST_WORKERS=0 runs in-process.
TEST_WORKERS ?= 4
# Bytecode for our own modules first: with PYTHONDONTWRITEBYTECODE set, every child process
# (hundreds of CLI runs) would otherwise compile sitemap_reader again (~0.08 s each).
PYTEST := $(BIN)/python -m compileall -q -j0 sitemap_reader tests && \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# The parser's path (issue 39): the suite runs on the compiled path when it was built,
# then the parser, record, discovery and CLI tests run again on the pure-Python reference
# (SITEMAP_READER_NO_EXTENSIONS=1). Each pass first says which path it runs.
PURE_PASS := tests/parse tests/records tests/discovery tests/cli
PARSER_PATH = $(BIN)/python -c 'from sitemap_reader.parse import native as n; \
	print("--- parser path:", n.describe()); raise SystemExit(not n.active())'

# The linters and the docs' strict build run beside the tests (mypy works one core for
# about 15 s on a fresh clone, while the tests wait on their children); their report
# follows the tests'.
test: $(STAMP_TEST)
	@(($(LINT)); linted=$$?; $(DOCS) && test $$linted -eq 0) > $(VENV)/lint.log 2>&1 & \
	linter=$$!; \
	$(PARSER_PATH); compiled=$$?; \
	$(PYTEST) -m "not slow"; tests=$$?; \
	if test $$compiled -eq 0; then \
		export SITEMAP_READER_NO_EXTENSIONS=1; $(PARSER_PATH); \
		$(PYTEST) -m "not slow" $(PURE_PASS) || tests=1; \
	else echo "--- no second pass: the suite ran on the pure-Python path"; fi; \
	wait $$linter; linted=$$?; \
	echo "--- lint and docs (run beside the tests): exit $$linted"; cat $(VENV)/lint.log; \
	test $$tests -eq 0 && test $$linted -eq 0

# The long fault-injection and property runs (marked slow) that make test leaves out, then
# the CLI tests once more with the console script itself started for every run (make test
# forks the CLI from a zygote per worker: tests/cli_zygote.py).
test-slow: $(STAMP_TEST)
	$(PYTEST) -m slow
	$(PYTEST) -m "not slow" --real-cli tests/cli/test_commands.py
	$(MAKE) fuzz-native FUZZ_NATIVE_SECONDS=60

# The compiled parser built with AddressSanitizer and UBSan, fuzzed against the pure-Python
# path (benchmarks/native/fuzz_native.py; atheris with FUZZ_NATIVE_ENGINE=--atheris).
# Skipped where no extension is built. Differences: benchmarks/native/build/fuzz/diff-*.
FUZZ_NATIVE_SECONDS ?= 60
FUZZ_NATIVE_ENGINE ?=
fuzz-native: $(STAMP_TEST)
	@$(PARSER_PATH) || { echo "--- fuzz-native skipped: no compiled parser"; exit 0; }; \
	$(BIN)/python benchmarks/native/build.py --sanitize && \
	SITEMAP_NATIVE_BUILD=sanitize ASAN_OPTIONS=detect_leaks=0 \
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	$(BIN)/python benchmarks/native/fuzz_native.py $(FUZZ_NATIVE_ENGINE) \
		--seconds $(FUZZ_NATIVE_SECONDS)

# make test's suite beside CPU burners at the tests' priority (a load average near 20 on
# two cores): no test's verdict may depend on the machine's speed.
STRESS_BURNERS ?= 18
test-stress: $(STAMP_TEST)
	$(BIN)/python tests/burn.py $(STRESS_BURNERS) -- sh -c '$(PYTEST) -m "not slow"'

demo: $(STAMP_BASE)
	$(BIN)/sitemap-reader demo

# Long Hypothesis runs, then FUZZ_SECONDS of coverage-guided fuzzing with atheris (the
# `fuzz` extra, installed here only: make test never needs it). Crashes: .venv/fuzz/crash-*.
FUZZ_SECONDS ?= 300
fuzz: $(STAMP_TEST)
	$(BIN)/python -m pip install --quiet -e '.[test,fuzz]'
	SITEMAP_READER_FUZZ=long $(BIN)/python -m pytest -q tests/parse/test_fuzz.py tests/hostile/test_fuzz_structural.py
	$(BIN)/python tests/parse/atheris_parser.py $(FUZZ_SECONDS)

bench: $(STAMP_TEST)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/parse.py

# Renders `sitemap-reader report` in Debian's headless chromium and checks the screenshot
# (size, share of non-background pixels). Installs chromium when it is missing (as root).
check-report: $(STAMP_TEST)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(BIN)/python tests/report_render.py build/report

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist

# --- The engines (issue 31): real PySpark (local[2,3]) and Ray on this machine, offline. ---
# Not part of `make test` (a JVM and a Ray cluster take minutes); .ci/run runs both. Installs
# the spark and ray extras into .venv, and Debian's openjdk-17-jre-headless when no Java 17
# or newer is on PATH (as root). Every Python process the tests start loads
# tests/engines/netguard (its sitecustomize refuses any connection or name lookup off
# loopback); the tests never skip here.
STAMP_ENGINES := $(VENV)/.installed-engines

.PHONY: test-engines

$(STAMP_ENGINES): pyproject.toml $(STAMP_TEST)
	$(BIN)/python -m pip install --quiet -e '.[test,spark,ray]'
	touch $@

test-engines: $(STAMP_ENGINES)
	java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])' || \
		(apt-get update && apt-get install -y openjdk-17-jre-headless)
	SITEMAP_READER_ENGINES=1 PYTHONPATH=$(CURDIR)/tests/engines/netguard \
		SITEMAP_READER_NETGUARD_LOG=$(CURDIR)/build/netguard.log \
		$(BIN)/python -m pytest -q -p no:xdist -p no:cacheprovider tests/engines tests/test_layers.py
