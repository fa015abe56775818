# tlpsim: `make demo` sets up and runs a default simulation with a report;
# `make test` sets up and runs the test suite. Both create .venv on first use
# and install the pinned dependencies (requirements.lock) plus tlpsim itself.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.tlpsim-installed
# the compiled timing core (setup.py, src/tlpsim/_core.py) and the CUDA runtime library of
# `tlpsim exec` (src/tlpsim/cudart/) are rebuilt when their sources change
CORE_SOURCES := setup.py src/tlpsim/_core.py $(wildcard src/tlpsim/timing/*.py) \
	src/tlpsim/cudart/libcudart.c $(wildcard src/tlpsim/cudart/libcudart_*.c src/tlpsim/cudart/libcudart_*.h) \
	src/tlpsim/cudart/libcurand.c src/tlpsim/cudart/build.py src/tlpsim/cudart/cudart13_exports.txt

.PHONY: setup demo test bench clean browser-test-deps cupy-tests

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml $(CORE_SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	@echo "building tlpsim (mypyc compiles the timing core, gcc the CUDA runtime library: about 2 minutes)"
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/tlpsim run sgemm --size small --run-dir runs/demo
	$(BIN)/tlpsim report runs/demo -o runs/demo/report.html

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python benchmarks/parse_speed.py
	$(BIN)/python benchmarks/functional_speed.py
	$(BIN)/python benchmarks/reference_kernels.py --timing

# CuPy's own RawKernel tests (tests/cupy_tests/core_tests/test_raw.py of the pinned CuPy
# source package, downloaded once from PyPI into tlpsim's cache) through `tlpsim cupy`;
# docs/cupy.md lists the tests that fail and why. PYTEST_ARGS adds pytest options.
cupy-tests: $(STAMP)
	$(BIN)/tlpsim cupy --fetch-sources
	cd "$$($(BIN)/python -c 'from tlpsim.cupy_sources import sources_dir; print(sources_dir())')" && \
	CUPY_TEST_GPU_LIMIT=1 $(abspath $(BIN))/tlpsim cupy -- python -m pytest -q -p no:cacheprovider \
		tests/cupy_tests/core_tests/test_raw.py $(PYTEST_ARGS)

# headless Chromium + chromedriver (Debian packages) for the HTML-report browser test;
# without them that test is skipped with a message
browser-test-deps:
	sh scripts/browser-test-deps.sh

clean:
	rm -rf $(VENV) build *.egg-info src/*.so src/tlpsim/timing/*.so src/tlpsim/_core_build.json src/tlpsim/cudart/lib
