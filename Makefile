# flowcore: `make demo` and `make test` work from a fresh clone.
# Each creates .venv, installs the project, checks for Java 17+ (Spark needs it), then runs.

VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JAVA_PACKAGE := openjdk-17-jre-headless
GRAPHVIZ_PACKAGE := graphviz
POSTGRES_PACKAGE := postgresql
CHROMIUM_PACKAGE := chromium

# The first interpreter on PATH that is Python 3.11 or newer.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	  if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	    echo $$p; break; fi; done)

.PHONY: spark-classes help setup java graphviz postgresql chromium test demo demo-nifi lint bench clean

help:
	@echo "make demo   set up and run the example flow"
	@echo "make demo-nifi   run examples/nifi_flow.json, a NiFi flow definition, on Spark"
	@echo "make test   set up and run the tests"
	@echo "make lint   ruff over the code"
	@echo "make bench  run the benchmarks in bench/"

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON)" ]; then \
	  echo "flowcore needs Python 3.11 or newer on PATH (python3.11, python3.12 or python3)."; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP) java graphviz postgresql chromium spark-classes

# Spark runs on the JVM: require Java 17+. Install it when we can (root with apt-get), else say how.
java:
	@major=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -n "$$major" ] && [ "$$major" -ge 17 ]; then exit 0; fi; \
	if [ -n "$$major" ]; then echo "Found Java $$major; Spark needs Java 17 or newer."; \
	else echo "No Java runtime found; Spark needs Java 17 or newer."; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing $(JAVA_PACKAGE) with apt-get ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(JAVA_PACKAGE) >/dev/null \
	    || { echo "apt-get could not install $(JAVA_PACKAGE)"; exit 1; }; \
	else \
	  echo "Install it, then run make again:"; \
	  echo "  sudo apt-get install -y $(JAVA_PACKAGE)      (Debian/Ubuntu)"; \
	  echo "  brew install openjdk@17                         (macOS)"; \
	  exit 1; \
	fi

# Spark's driver JVM loads the same ~10,000 classes at every start: archive them once (HotSpot's
# Class Data Sharing, docs/operations.md) so every later session starts in about 2/3 of the time.
# A session would start the build in the background anyway; done here, the first runs gain too.
spark-classes: $(STAMP) java
	@$(BIN)/python -m flowcore.runners.archive_builder || true

# Pictures in SVG (flowcore explain --format svg, the demo's) are laid out by Graphviz's dot.
# Install it when we can (root with apt-get); without it pictures fall back to DOT text.
graphviz:
	@if command -v dot >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing $(GRAPHVIZ_PACKAGE) with apt-get (SVG pictures) ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(GRAPHVIZ_PACKAGE) >/dev/null \
	    || echo "apt-get could not install $(GRAPHVIZ_PACKAGE); pictures will be DOT text, not SVG"; \
	else \
	  echo "Graphviz's dot is not installed; pictures will be DOT text, not SVG. For SVG:"; \
	  echo "  sudo apt-get install -y $(GRAPHVIZ_PACKAGE)      (Debian/Ubuntu)"; \
	  echo "  brew install graphviz                   (macOS)"; \
	fi

# The SQL tests start a throwaway PostgreSQL cluster (initdb, pg_ctl): install it when we can.
postgresql:
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing $(POSTGRES_PACKAGE) with apt-get (the SQL tests' server) ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(POSTGRES_PACKAGE) >/dev/null \
	    || echo "apt-get could not install $(POSTGRES_PACKAGE); the PostgreSQL tests will skip"; \
	else \
	  echo "PostgreSQL is not installed; its tests will skip. sudo apt-get install -y $(POSTGRES_PACKAGE)"; \
	fi

# The web UI's browser tests (tests/flowcore/ui) drive Debian's chromium through Playwright's
# executable_path: no browser download. Install it when we can (root with apt-get).
chromium:
	@if [ -x /usr/bin/chromium ]; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing $(CHROMIUM_PACKAGE) with apt-get (the web UI's browser tests) ..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CHROMIUM_PACKAGE) >/dev/null \
	    || echo "apt-get could not install $(CHROMIUM_PACKAGE); the browser tests will skip"; \
	else \
	  echo "Chromium is not installed; the UI's browser tests will skip. sudo apt-get install -y $(CHROMIUM_PACKAGE)"; \
	fi

# Two pytest workers: the suite keeps both cores busy (a third made it slower: 22m36s against
# 20m57s); an idle worker takes tests queued for the other (worksteal), so the long crash tests
# do not leave one waiting at the end. TEST_WORKERS=0 runs them serially.
TEST_WORKERS ?= 2

# Bytecode first: the tests start hundreds of `flowcore` processes, and where the environment
# sets PYTHONDONTWRITEBYTECODE (CI machines often do) each of them would compile every module
# from source again (0.6 s of CPU a start, measured).
test: setup
	$(BIN)/python -m compileall -q -j 0 flowcore processors repositories >/dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

demo: setup
	$(BIN)/python examples/web_logs.py demo-output --runner spark

demo-nifi: setup
	rm -rf examples/nifi-flow-data/out demo-output/nifi-repository
	$(BIN)/flowcore run examples/nifi_flow.json --runner spark --repository demo-output/nifi-repository

lint: $(STAMP)
	$(BIN)/ruff check flowcore processors repositories tests examples bench
	$(BIN)/ruff format --check flowcore processors repositories tests examples bench

bench: setup
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache *.egg-info
