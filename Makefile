# mmtwin: `make demo` sets everything up and runs a demo comparison; `make test` runs all tests.
VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.deps-installed

.PHONY: demo test test-rust test-python build bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" "pytest>=7" "rich>=13" "numpy>=1.24" "scipy>=1.10" "pyarrow>=14" "matplotlib>=3.7"
	touch $(STAMP)

# Builds the Rust core and installs the Python package into the virtualenv (editable).
build: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet

demo: build
	$(VENV)/bin/mmtwin run scenarios/examples/anon-churn.toml -o results/anon-churn --force --html results/anon-churn.html

# Debug builds run the invariant checkers after every simulated event. The benchmarks and
# examples are only type-checked here (make bench runs the benchmarks).
test-rust:
	cargo test -p mmtwin
	cargo check -p mmtwin --benches --examples

test-python: build
	$(PY) -m pytest -q

test: test-rust test-python

bench:
	cargo bench -p mmtwin --bench page_alloc --bench vmscan

clean:
	rm -rf $(VENV) target results
