# trtlite -- make demo | make test | make build | make asan | make bench | make format | make clean
#
# `make demo` and `make test` work on a fresh Debian machine: they install what they need
# (Debian's libopenblas-dev and dataset-fashion-mnist; numpy, pytest, torch==2.13.0 CPU, onnx,
# onnxruntime from PyPI) and build in place.

PY      ?= python3
CC      ?= gcc
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE
INC     := -Icsrc -Icsrc/include
CORE_SRC := $(shell find csrc -name '*.c' -not -path 'csrc/python/*' | sort)
PY_SRC   := $(shell find csrc -name '*.c' | sort)
HDRS     := $(shell find csrc -name '*.h' -o -name '*.def')
LIBS     := -lopenblas -lm -lpthread -ldl
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP   := build/stamps

.PHONY: all build lib examples test demo demo-lenet demo-addernet bench asan format clean deps deps-test deps-demo stubs

all: build

# ---- dependencies (installed once; stamps remember) ------------------------------------------
$(STAMP)/apt-blas:
	@mkdir -p $(STAMP)
	@dpkg -s libopenblas-dev >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq libopenblas-dev; }
	@touch $@

# The dataset is needed by the demos; tests that use it skip without it, so a machine where apt
# cannot install it still runs `make test` (with a warning).
$(STAMP)/apt-data:
	@mkdir -p $(STAMP)
	@dpkg -s dataset-fashion-mnist >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq dataset-fashion-mnist; } || \
		echo "warning: could not install dataset-fashion-mnist; the demos need it, its tests will skip"
	@touch $@

$(STAMP)/pip-core:
	@mkdir -p $(STAMP)
	$(PY) -m pip install -q numpy pytest setuptools wheel
	@touch $@

# torch is pinned: the CPU build comes from a local wheel; unpinned it would pull CUDA packages.
$(STAMP)/pip-test: $(STAMP)/pip-core
	$(PY) -m pip install -q "torch==2.13.0" onnx onnxruntime
	@touch $@

deps: $(STAMP)/apt-blas $(STAMP)/pip-core
deps-test: deps $(STAMP)/pip-test $(STAMP)/apt-data
deps-demo: deps $(STAMP)/pip-test $(STAMP)/apt-data

# ---- build ---------------------------------------------------------------------------------
build: deps lib examples build/plugins/libscaled_tanh_plugin.so
	$(PY) setup.py -q build_ext --inplace -j 2

# The C library for C programs (public header: csrc/include/trtlite/trtlite.h).
lib: build/libtrtlite.so
build/libtrtlite.so: $(CORE_SRC) $(HDRS) | $(STAMP)/apt-blas
	@mkdir -p build
	$(CC) $(CFLAGS) -fPIC -shared $(INC) $(CORE_SRC) -o $@ $(LIBS)

examples: build/examples/c_network
build/examples/c_network: examples/c/network.c build/libtrtlite.so
	@mkdir -p build/examples
	$(CC) $(CFLAGS) -Icsrc/include $< -o $@ -Lbuild -ltrtlite -lm -Wl,-rpath,'$$ORIGIN/..'

# An external plugin library, built only against the public plugin header.
build/plugins/libscaled_tanh_plugin.so: examples/plugins/scaled_tanh_plugin.c csrc/include/trtlite/plugin.h csrc/include/trtlite/types.h
	@mkdir -p build/plugins
	$(CC) $(CFLAGS) -fPIC -shared -Icsrc/include examples/plugins/scaled_tanh_plugin.c -o $@ -lm

# ---- test / demo / bench -------------------------------------------------------------------
test: deps-test build
	$(PY) -m pytest -q tests

# `make demo` runs the LeNet demo, then the AdderNet demo (Adder2d_TRT plugin, TensorRT 7 API).
demo: deps-demo build
	$(PY) examples/network_api_mnist.py
	$(PY) examples/addernet/demo.py

demo-lenet: deps-demo build
	$(PY) examples/network_api_mnist.py

demo-addernet: deps-demo build
	$(PY) examples/addernet/demo.py

# BENCH_ARGS: options of benchmarks/run.py, e.g. make bench BENCH_ARGS=--quick
bench: deps-test build
	$(PY) benchmarks/run.py $(BENCH_ARGS)

# The model zoo (benchmarks/zoo, project issue #10): 25 architectures exported to build/zoo/, each checked against
# onnxruntime, then trtlite, onnxruntime and OpenVINO timed (batch 1 and 8, threads 2 and 1, 3 interleaved rounds).
# Benchmark-only dependencies: torchvision's model definitions (--no-deps: its CUDA wheel's deps are not wanted),
# pillow, OpenVINO and matplotlib (the chart).  ZOO_ARGS: options of benchmarks/zoo/run.py.
ZOO_ARGS ?= --out build/zoo/results.json --chart build/zoo/results.png --markdown
.PHONY: bench-zoo
$(STAMP)/pip-zoo: $(STAMP)/pip-test
	$(PY) -m pip install -q --no-deps "torchvision==0.28.0"
	$(PY) -m pip install -q pillow openvino matplotlib
	@touch $@

bench-zoo: deps-test build $(STAMP)/pip-zoo
	$(PY) benchmarks/zoo/run.py $(ZOO_ARGS)

# Sanitizers: the core and bindings built with ASan/UBSan into build/asan (the in-place build is
# left alone), the C example and the whole suite run against that build.
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g
asan: deps-test
	rm -rf build/asan && mkdir -p build/asan/pkg
	cp -r trtlite build/asan/pkg/ && rm -f build/asan/pkg/trtlite/_C*.so
	CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" $(PY) setup.py -q build_ext -j 2 \
		--build-temp build/asan/tmp --build-lib build/asan/pkg
	$(CC) $(CFLAGS) $(ASAN_FLAGS) $(INC) $(CORE_SRC) examples/c/network.c -o build/asan/c_network $(LIBS) \
		&& build/asan/c_network
	cd build/asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PYTHONPATH=$(CURDIR)/build/asan/pkg \
		LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
		TRTLITE_UNDER_ASAN=1 $(PY) -m pytest -q -x -p no:cacheprovider --rootdir=$(CURDIR) $(CURDIR)/tests

# Type stubs of the extension (trtlite/_C.pyi) from the bindings' signature docstrings.
stubs: build
	$(PY) tools/gen_stubs.py

# clang-format (style in .clang-format) over the C files changed since HEAD, or over FILES="a.c b.h".
# Not the whole tree by default: its messages are hand-wrapped, and reformatting everything would
# bury real changes in a diff of line breaks.
FILES ?= $(shell git diff --name-only --diff-filter=d HEAD -- 'csrc/*.[ch]' 'examples/*.[ch]' 'tests/c/*.[ch]' 2>/dev/null)
format:
	@command -v clang-format >/dev/null || { echo "clang-format not installed (apt-get install clang-format)"; exit 1; }
	@if [ -z "$(strip $(FILES))" ]; then echo "format: no changed C files (FILES=... to pick some)"; \
	else echo "clang-format -i $(FILES)"; clang-format -i $(FILES); fi

clean:
	rm -rf build trtlite/_C*.so .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
