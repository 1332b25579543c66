# gw — two commands on a fresh machine:
#   make run    the gateway on examples/quickstart (installs what it needs first)
#   make test   the whole test suite (installs what it needs first)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run test check golden bench install system-deps bench-deps clean

run: $(STAMP)
	$(BIN)/gw up examples/quickstart --echo-port 9000

# Two workers: most e2e time is waiting on processes, so two overlap well on 2 cores.
test: $(STAMP) bench-deps
	$(BIN)/pytest -q -n 2

check: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

golden: $(STAMP)
	$(BIN)/pytest -q tests/golden --update-goldens

# The benchmark report against nginx, HAProxy and Apache (docs/benchmarks.md); about 10
# minutes; results in bench/results/. One part: $(BIN)/python -m bench --only dataplane
bench: $(STAMP) bench-deps
	$(BIN)/python -m bench

install: $(STAMP)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@

system-deps:
	scripts/system-deps

bench-deps:
	scripts/bench-deps

# Everything the targets above create in the tree (results under bench/results/ are kept).
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache \
		src/*.egg-info build dist bench/.work debug
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
