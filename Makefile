# trtlite -- make demo | make test | make build | make asan | make bench | make format | make clean
#            make tsan | make fuzz | make fuzz-smoke | make check-all  (docs/TESTING.md)
#            make stubs | make clang-check | make wheel-check | make docs  (docs/user_guide.md)
#
# `make demo` and `make test` work on a fresh Debian machine: they install what they need
# (Debian's libopenblas-dev and dataset-fashion-mnist; numpy, pytest, torch==2.13.0 CPU, onnx,
# onnxruntime, protobuf from PyPI) and build in place.

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

.PHONY: all build lib examples test demo demo-lenet demo-addernet bench asan tsan fuzz fuzz-smoke fuzz-build check-all \
	format clean deps deps-test deps-demo deps-fuzz stubs

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

# The stubs' and examples' type checks (mypy --strict, stubtest: tests/test_typing.py) and the wheel check
# (auditwheel show: tests/test_packaging.py).
$(STAMP)/pip-typing: $(STAMP)/pip-core
	$(PY) -m pip install -q "mypy==2.4.1" auditwheel
	@touch $@

# torch is pinned: the CPU build comes from a local wheel; unpinned it would pull CUDA packages.
$(STAMP)/pip-test: $(STAMP)/pip-core
	$(PY) -m pip install -q "torch==2.13.0" onnx onnxruntime protobuf pytest-xdist
	@touch $@

# Fuzzing needs clang with libFuzzer (Debian's clang brings its runtime, libclang-rt-*-dev) and atheris
# for the Python-level ONNX fuzzer.  No fallback: if either cannot be installed the fuzz targets (and
# the fuzz smoke tests inside `make test`) fail loudly rather than pass without fuzzing.
$(STAMP)/apt-clang:
	@mkdir -p $(STAMP)
	@command -v clang >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq clang; }
	@echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }' > $(STAMP)/lf.c
	@clang -fsanitize=fuzzer $(STAMP)/lf.c -o $(STAMP)/lf || { echo "error: clang cannot link libFuzzer" \
		"(-fsanitize=fuzzer); install clang and libclang-rt-dev"; exit 1; }
	@rm -f $(STAMP)/lf.c $(STAMP)/lf
	@touch $@

$(STAMP)/pip-fuzz: $(STAMP)/pip-core
	$(PY) -m pip install -q atheris
	@touch $@

deps: $(STAMP)/apt-blas $(STAMP)/pip-core
deps-fuzz: $(STAMP)/apt-clang $(STAMP)/pip-fuzz
deps-test: deps $(STAMP)/pip-test $(STAMP)/pip-typing $(STAMP)/apt-data deps-fuzz
deps-demo: deps $(STAMP)/pip-test $(STAMP)/apt-data

# ---- build ---------------------------------------------------------------------------------
build: deps lib examples build/plugins/libscaled_tanh_plugin.so
	TRTLITE_CORE_OBJDIR=build/obj $(PY) setup.py -q build_ext --inplace -j 2

# The C library for C programs (public header: csrc/include/trtlite/trtlite.h): one object per source under
# build/obj, compiled two at a time (CI's 2 cores), then linked.  The extension module links the same objects
# (setup.py, TRTLITE_CORE_OBJDIR) and tests/cbuild.py reuses them for the C tests, so the core is compiled by gcc
# once; -fno-semantic-interposition lets gcc optimise calls within a file as it would with hidden visibility.
LIB_OBJ := $(patsubst csrc/%.c,build/obj/%.o,$(CORE_SRC))
lib: | $(STAMP)/apt-blas
	@$(MAKE) --no-print-directory -j2 build/libtrtlite.so
build/obj/%.o: csrc/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) -fPIC -fno-semantic-interposition $(INC) -c $< -o $@
build/libtrtlite.so: $(LIB_OBJ)
	$(CC) -shared $(LIB_OBJ) -o $@ $(LIBS)

examples: build/examples/c_network
build/examples/c_network: examples/c/network.c build/libtrtlite.so
	@mkdir -p build/examples
	$(CC) $(CFLAGS) -Icsrc/include $< -o $@ -Lbuild -ltrtlite -lm -Wl,-rpath,'$$ORIGIN/..'

# An external plugin library, built only against the public plugin header.
build/plugins/libscaled_tanh_plugin.so: examples/plugins/scaled_tanh_plugin.c csrc/include/trtlite/plugin.h csrc/include/trtlite/types.h
	@mkdir -p build/plugins
	$(CC) $(CFLAGS) -fPIC -shared -Icsrc/include examples/plugins/scaled_tanh_plugin.c -o $@ -lm

# ---- test / demo / bench -------------------------------------------------------------------
# tests/test_fuzz_smoke.py runs both fuzzers for 45 s each; the threading tests then run again under TSan,
# which takes about a minute and a half (docs/TESTING.md: measured times; `make asan` does not fit CI's budget).
# The suite runs in TEST_JOBS pytest-xdist workers (default: one per CPU), a whole test file per worker (module
# fixtures are built once); docs/TESTING.md has the measured times.
TEST_JOBS ?= auto
test: deps-test build fuzz-build clang-check
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile --durations=30 tests
	@$(MAKE) --no-print-directory tsan

# The ONNX backend suite (onnx.backend.test; it runs inside `make test` too, tests/test_onnx_backend.py) with its
# pass-rate report: trtlite and onnxruntime, overall and on the ops onnx-tensorrt lists as supported.
.PHONY: onnx-backend
onnx-backend: deps-test build
	$(PY) tests/onnx_backend/expected.py --report

# `make demo` runs the LeNet demo, then the AdderNet demo (Adder2d_TRT plugin, TensorRT 7 API), then the precision
# experiment (both at FP32 / FP16 / BF16 / INT8; --quick keeps it under a minute).
demo: deps-demo build
	$(PY) examples/network_api_mnist.py
	$(PY) examples/addernet/demo.py
	$(PY) examples/precision_mnist.py --quick

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
# The sanitizer builds compile the core as `lib` does, one object per source, SAN_JOBS at a time (setup.py's build_ext
# compiles one extension's sources one after another), into build/<asan|tsan>/obj (kept: incremental), then setup.py
# compiles only the bindings and links those objects (TRTLITE_CORE_OBJDIR).
SAN_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# pytest's options for the ASan suite (e.g. ASAN_TEST_ARGS="-n 16 --maxfail=50" on a large host)
ASAN_TEST_ARGS ?= -x
# ASan's runtime options for that suite (e.g. add :log_path=/tmp/asan/r to keep each worker's report in a file:
# under pytest-xdist a worker's stderr is not shown).  detect_stack_use_after_return=0: gcc 13 turned that check on by
# default, and its runtime's fake stack frames are not aligned to what the compiler assumed (fixed in LLVM's
# compiler-rt in August 2025, llvm-project PR 152819; gcc 13's copy predates it): a local float[16] that gcc stores
# with an aligned 64-byte move faults there (reduce_axes_simd.h, gemm_bf16.c on AVX-512 hosts) -- the toolchain's
# fault, not the code's; docs/TESTING.md.
ASAN_RUNTIME ?= detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
# gcc's maybe-uninitialized analysis at -O1 with the sanitizers' instrumentation reports paths the -O2 build
# (which keeps every warning an error) does not: off for the sanitizer objects only
SAN_WARN := -Wno-maybe-uninitialized
ASAN_OBJ := $(patsubst csrc/%.c,build/asan/obj/%.o,$(CORE_SRC))
TSAN_OBJ := $(patsubst csrc/%.c,build/tsan/obj/%.o,$(CORE_SRC))
build/asan/obj/%.o: csrc/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "CC(asan) $<"
	@$(CC) $(CFLAGS) $(ASAN_FLAGS) $(SAN_WARN) -fPIC -fno-semantic-interposition $(INC) -c $< -o $@
build/tsan/obj/%.o: csrc/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "CC(tsan) $<"
	@$(CC) $(CFLAGS) $(TSAN_FLAGS) $(SAN_WARN) -fPIC -fno-semantic-interposition $(INC) -c $< -o $@

asan: deps-test
	rm -rf build/asan/pkg build/asan/tmp && mkdir -p build/asan/pkg
	@$(MAKE) --no-print-directory -j$(SAN_JOBS) $(ASAN_OBJ)
	cp -r trtlite build/asan/pkg/ && rm -f build/asan/pkg/trtlite/_C*.so
	CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" TRTLITE_CORE_OBJDIR=build/asan/obj \
		$(PY) setup.py -q build_ext -j 2 --build-temp build/asan/tmp --build-lib build/asan/pkg
	$(CC) $(CFLAGS) $(ASAN_FLAGS) $(INC) $(ASAN_OBJ) examples/c/network.c -o build/asan/c_network $(LIBS) \
		&& build/asan/c_network
	cd build/asan && ASAN_OPTIONS=$(ASAN_RUNTIME) \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PYTHONPATH=$(CURDIR)/build/asan/pkg \
		LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
		TRTLITE_UNDER_ASAN=1 $(PY) -m pytest -q $(ASAN_TEST_ARGS) -p no:cacheprovider --rootdir=$(CURDIR) $(CURDIR)/tests

# ThreadSanitizer: the bindings and core built with gcc -fsanitize=thread into build/tsan, the threading tests (every tests/*thread*.py) run against that build.
# tests/tsan.supp suppresses only reports inside CPython's and numpy's own uninstrumented code; each entry
# says why.  Any report fails the run (halt_on_error).  The interpreter is started by its real path:
# a wrapper script (pyenv's shim) crashes with the TSan runtime preloaded into its shell.  OpenBLAS runs
# single-threaded there: its own threads synchronise in uninstrumented code, which TSan cannot see.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer -O1 -g1
TSAN_TESTS := $(sort $(wildcard tests/*thread*.py))
tsan: deps-test
	rm -rf build/tsan/pkg build/tsan/tmp && mkdir -p build/tsan/pkg
	@$(MAKE) --no-print-directory -j$(SAN_JOBS) $(TSAN_OBJ)
	cp -r trtlite build/tsan/pkg/ && rm -f build/tsan/pkg/trtlite/_C*.so
	CFLAGS="$(TSAN_FLAGS)" LDFLAGS="-fsanitize=thread" TRTLITE_CORE_OBJDIR=build/tsan/obj \
		$(PY) setup.py -q build_ext -j 2 --build-temp build/tsan/tmp --build-lib build/tsan/pkg
	cd build/tsan && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp" \
		PYTHONPATH=$(CURDIR)/build/tsan/pkg LD_PRELOAD="$$($(CC) -print-file-name=libtsan.so)" \
		OPENBLAS_NUM_THREADS=1 TRTLITE_UNDER_TSAN=1 "$$($(PY) -c 'import sys; print(sys.executable)')" \
		-m pytest -q -x -p no:cacheprovider --rootdir=$(CURDIR) $(addprefix $(CURDIR)/,$(TSAN_TESTS))

# Everything, for a release or a change to the core: `make test` (suite, fuzz smoke, TSan), the suite under
# ASan+UBSan, and the long fuzz runs (FUZZ_TIME each).  CI runs `make test`: docs/TESTING.md has the
# measured times that keep `asan` and `fuzz` out of it.
check-all: test asan fuzz

# Type stubs (trtlite/_C.pyi, trtlite/__init__.pyi) from the bindings, sample objects and tools/stub_hints.py.
stubs: build
	$(PY) tools/gen_stubs.py

# Generated documents: the API reference (from docstrings and stubs: run `make stubs` first), the built-in plugin
# table and the ONNX operator table.  tests/test_docs_examples.py and tests/test_onnx_backend.py check they are current.
.PHONY: docs
docs: build
	$(PY) tools/gen_api_doc.py
	$(PY) tools/gen_plugin_doc.py
	$(PY) tools/gen_onnx_ops_doc.py

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

# ---- clang build (`pip install .` with CC=clang) ----------------------------------------------
# Every C file, bindings included, checked by clang with warnings as errors.  The core is compiled by clang for
# the fuzz harness anyway (build/fuzz/obj, -Wall -Wextra -Werror; csrc has no assert(), so NDEBUG and the other
# code-generation flags below change no diagnostic): that compile is the core's check, and only the bindings
# (csrc/python, which the harness does not link) get a `-fsyntax-only` pass with the flags setup.py gives the
# extension -- clang's whole front end, target attributes and intrinsics included, without code generation; a stamp
# per file in build/clang/obj.  Part of `make test`; incremental.
# Python's own CFLAGS come first, as setuptools passes them (e.g. -Wsign-compare -fwrapv -O3).
PY_CFLAGS    := $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("CFLAGS") or "")')
CLANG_CFLAGS := $(PY_CFLAGS) -fPIC -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -fvisibility=hidden \
                -Wno-missing-field-initializers -DNDEBUG
PY_INC       := -I$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
CLANG_OBJ    := $(patsubst csrc/%.c,build/clang/obj/%.ok,$(filter csrc/python/%,$(PY_SRC)))

# Rewritten only when the flags change, so that a change of flags recompiles everything.
build/clang/flags: FORCE
	@mkdir -p build/clang
	@echo '$(CLANG_CFLAGS)' | cmp -s - $@ || echo '$(CLANG_CFLAGS)' > $@
.PHONY: FORCE
FORCE:

build/clang/obj/%.ok: csrc/%.c $(HDRS) build/clang/flags | $(STAMP)/apt-clang
	@mkdir -p $(dir $@)
	@clang $(CLANG_CFLAGS) $(INC) $(PY_INC) -fsyntax-only $< && touch $@

.PHONY: clang-check
clang-check: deps-fuzz fuzz-build
	@$(MAKE) --no-print-directory -j2 $(CLANG_OBJ)
	@echo "clang-check: $(words $(FUZZ_OBJ)) core files (the fuzz build) and $(words $(CLANG_OBJ)) binding files" \
		"pass clang -Werror"

# ---- wheel ---------------------------------------------------------------------------------
# `pip wheel .` then `auditwheel show` on the wheel (docs/user_guide.md, "Installing", says what it reports and
# why the wheel stays linux_x86_64).  Not part of `make test`: it compiles everything again, serially (minutes).
.PHONY: wheel-check
wheel-check: deps $(STAMP)/pip-typing
	rm -rf build/wheel && mkdir -p build/wheel
	$(PY) -m pip wheel --no-deps --no-build-isolation -w build/wheel .
	$(PY) -m auditwheel show build/wheel/trtlite-*.whl

# ---- fuzzing (tests/fuzz/, docs/TESTING.md) -------------------------------------------------
# The plan reader under libFuzzer: the core compiled by clang with ASan+UBSan and libFuzzer's
# coverage (fuzzer-no-link) into build/fuzz/obj, linked with the harness tests/fuzz/fuzz_plan.c.
# The SIMD kernels (csrc/kernels/x86) are compiled at -O0: clang's optimizer on intrinsic-heavy code instrumented by
# ASan+UBSan took most of `make test`'s build time (gemm_bf16.c, CPU seconds on a quiet machine: 99 at -O1, 2.9 at
# -O0, the same checks); the fuzzers' inputs are small, so their speed hardly depends on the kernels' code quality.
FUZZ_CC     := clang
FUZZ_BASE   := -std=c11 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-missing-field-initializers -D_GNU_SOURCE \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OPT_CORE := -O1
FUZZ_OPT_SIMD := -O0
FUZZ_OPT       = $(FUZZ_OPT_CORE)
FUZZ_CFLAGS    = $(FUZZ_BASE) $(FUZZ_OPT)
FUZZ_OBJ    := $(patsubst csrc/%.c,build/fuzz/obj/%.o,$(CORE_SRC))
FUZZ_TIME   ?= 1800
# Runtime options (ASAN_OPTIONS/UBSAN_OPTIONS) are set by tests/fuzz/run.py, which runs the fuzzers.

build/fuzz/obj/kernels/x86/%.o: FUZZ_OPT = $(FUZZ_OPT_SIMD)
# ... except the vector math template, which clang takes minutes over at -O0; at -O1 UBSan's pointer-overflow
# check took 8 of vmath_avx512.c's 21 s of CPU (the 8-vector spans: a check per pointer step), and ASan still
# bounds-checks every access there, so that one check is off for these files
build/fuzz/obj/kernels/x86/vmath%.o: FUZZ_OPT = $(FUZZ_OPT_CORE) -fno-sanitize=pointer-overflow
build/fuzz/obj/%.o: csrc/%.c $(HDRS) build/fuzz/flags | $(STAMP)/apt-clang
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(INC) -c $< -o $@

# Rewritten only when the flags change (as build/clang/flags).
build/fuzz/flags: FORCE
	@mkdir -p build/fuzz
	@echo '$(FUZZ_BASE) | $(FUZZ_OPT_CORE) | $(FUZZ_OPT_SIMD)' | cmp -s - $@ || \
		echo '$(FUZZ_BASE) | $(FUZZ_OPT_CORE) | $(FUZZ_OPT_SIMD)' > $@

build/fuzz/fuzz_plan: tests/fuzz/fuzz_plan.c $(FUZZ_OBJ) | $(STAMP)/apt-blas
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(INC) $< $(FUZZ_OBJ) -o $@ $(LIBS)

fuzz-build: deps-fuzz
	@$(MAKE) --no-print-directory -j2 build/fuzz/fuzz_plan

# The smoke runs of `make test` alone: seeds, regression inputs, a fixed number of inputs per fuzzer (FUZZ_SMOKE_RUNS).
fuzz-smoke: deps-test build fuzz-build
	$(PY) -m pytest -q tests/test_fuzz_smoke.py

# Long runs, FUZZ_TIME seconds per fuzzer, one after the other; the corpora grow in build/fuzz/<harness>/corpus
# (kept between runs), saved inputs of findings in build/fuzz/<harness>/artifacts, triaged against
# tests/fuzz/known_findings.txt.  Fails if either fuzzer found something not known.
fuzz: deps-test build fuzz-build
	@rc=0; for h in plan onnx; do \
		$(PY) tests/fuzz/run.py fuzz $$h --time $(FUZZ_TIME) --seed $$(date +%s) || rc=1; done; exit $$rc
