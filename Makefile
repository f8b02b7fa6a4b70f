# loom — the two commands a newcomer needs:  make demo   and   make test
# Everything installs what it needs first (Debian packages via apt-get).

BUILD      ?= build
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# hipcc, the HIP runtime and rocPRIM: the HIP plugin (plugins/hip), built from
# the CUDA plugin's sources; make test checks that it loads and reports zero
# devices with the reason on a machine without an AMD GPU.
HIP_DEPS := hipcc libamdhip64-dev librocprim-dev
# Debian packages the build and tests need. libtorch-dev is only the
# benchmark peer (make bench), never a dependency of loom itself.
# python3-sklearn is there only for its 8x8 digits file (the training samples,
# which read its gzip'd CSV with zlib).
DEPS := cmake ninja-build g++ ccache \
        libboost-dev nlohmann-json3-dev catch2 libdnnl-dev libbenchmark-dev zlib1g-dev \
        python3-dev pybind11-dev python3-numpy python3-pytest \
        python3-sklearn libgloo-dev $(HIP_DEPS)
# OpenBLAS (OpenMP flavour, sharing loom's libgomp pool) is what Debian's
# PyTorch reaches matmul through; without it torch falls to netlib BLAS.
BENCH_DEPS := libtorch-dev libopenblas0-openmp
# PyTorch 1.13 for Python is the tests' oracle for gradients and op
# semantics numpy lacks; python3-onnx (1.12) builds and checks the files of
# loom.onnx.export (make test only; tests skip without them).
TEST_DEPS := python3-torch python3-onnx
# clang 14 and its runtime (libFuzzer, the sanitizers): make fuzz only.
FUZZ_DEPS := clang libclang-rt-14-dev

.PHONY: deps deps-bench deps-test deps-fuzz fuzz configure build demo test bench bench-models install clean test-asan test-tsan

# Installs only what is missing (dpkg knows), so a warm machine skips apt.
deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all present"; fi

deps-bench:
	@$(MAKE) --no-print-directory deps DEPS="$(BENCH_DEPS)"

deps-test:
	@$(MAKE) --no-print-directory deps DEPS="$(TEST_DEPS)"

deps-fuzz:
	@$(MAKE) --no-print-directory deps DEPS="$(FUZZ_DEPS)"

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: $(BUILD)/build.ninja

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== loom-info =="
	@$(BUILD)/bin/loom-info
	@echo
	@echo "== quickstart =="
	@$(BUILD)/bin/quickstart
	@echo
	@echo "== train_mlp (8x8 digits) =="
	@$(BUILD)/bin/train_mlp --out $(BUILD)/train_mlp.safetensors

test: build deps-test
	cd $(BUILD) && LOOM_CACHE_DIR=$$PWD/cache ctest -j $(JOBS) --output-on-failure --timeout 600

# Sanitizer builds (docs/reliability.md): host code only (no CUDA, bench or
# Python module), -Og with assertions on and line tables for the reports.
# -Og, not -O1: with ASan+UBSan, GCC 12 compiles ~40% faster at -Og (-O1
# doubles the compile time of a Release build), which is what keeps a cold
# CI run in budget.
#   test-asan: every C++ test and sample under AddressSanitizer +
#              UndefinedBehaviorSanitizer with LeakSanitizer on. The sdk tests
#              are left out: they build an uninstrumented project against the
#              instrumented install, which ASan refuses by design.
#              allocator_may_return_null: the out-of-memory tests need a failed
#              allocation to return NULL, as malloc does. intercept_tls_get_addr=0:
#              with it on, LeakSanitizer's tracer crashed at exit ("Tracer caught
#              signal 11") on a bogus dynamic-TLS range of a libgomp worker
#              thread (GCC 12 libsanitizer, glibc 2.36), before reporting.
#   test-tsan: the concurrency tests (CTest label `concurrency`) under
#              ThreadSanitizer, with one OpenMP thread (libgomp is not
#              instrumented, so its barriers look like races to TSan).
SAN_CMAKE := -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g1 -Og" \
             -DCMAKE_CXX_FLAGS_DEBUG="-g1 -Og" -DLOOM_WITH_CUDA=OFF \
             -DLOOM_BUILD_BENCH=OFF -DLOOM_BUILD_PYTHON=OFF
SAN_SUPP  := $(CURDIR)/.ci/sanitizers
ASAN_ENV  := ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0:detect_stack_use_after_return=1:strict_string_checks=1 \
             LSAN_OPTIONS=suppressions=$(SAN_SUPP)/lsan.supp:print_suppressions=0 \
             UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_ENV  := TSAN_OPTIONS=suppressions=$(SAN_SUPP)/tsan.supp:halt_on_error=1:second_deadlock_stack=1 \
             OMP_NUM_THREADS=1

test-asan: deps
	cmake -S . -B build-asan $(SAN_CMAKE) -DLOOM_SANITIZE=address,undefined $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && LOOM_CACHE_DIR=$$PWD/cache $(ASAN_ENV) ctest -j $(JOBS) --output-on-failure --timeout 900 -LE sdk

test-tsan: deps
	cmake -S . -B build-tsan $(SAN_CMAKE) -DLOOM_SANITIZE=thread $(CMAKE_ARGS)
	cmake --build build-tsan -j $(JOBS) --target loom_concurrency_targets
	cd build-tsan && LOOM_CACHE_DIR=$$PWD/cache $(TSAN_ENV) ctest -j $(JOBS) --output-on-failure --timeout 900 -L concurrency

bench: deps deps-bench
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_BENCH_WITH_LIBTORCH=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS) --target loom_bench
	$(BUILD)/bin/loom_bench --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python_bench.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/jit_bench.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/jit_fusion_bench.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/jit_models.py
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/ddp_step.py

# Whole models (bench/models/: GPT, ResNet-18, the digits MLP) under loom and
# PyTorch side by side: first loss, training step, inference, peak memory, at
# 1 and 2 threads (PyTorch from python3-torch, the tests' oracle). MODELS_ARGS adds
# options (--models gpt --profile ...).
bench-models: build deps-test
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/models/run_models.py $(MODELS_ARGS)

# libFuzzer targets of the four parsers of untrusted input (plugin
# manifests, op schemas, safetensors files, jit model files), built with clang in their own
# tree and run FUZZ_SECONDS each; fails naming the input of any crash. Not
# part of make test (see fuzz/README.md).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= manifest schema safetensors jit_model
fuzz: build deps-fuzz
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLOOM_FUZZ_LIBRARY_DIR=$(abspath $(BUILD))/lib $(CMAKE_ARGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# One Debian package per component (runtime, sdk, cpu, python, ...) in
# $(BUILD)/packages; PACKAGE_GENERATOR=TGZ for tarballs.
PACKAGE_GENERATOR ?= DEB
.PHONY: package
package: build
	cd $(BUILD) && cpack -G $(PACKAGE_GENERATOR) -B packages

clean:
	rm -rf $(BUILD) build-asan build-tsan
