# loom — the two commands a newcomer needs:  make demo   and   make test
# Everything installs what it needs first (Debian packages via apt-get).

BUILD      ?= build
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and tests need. libtorch-dev is only the
# benchmark peer (make bench), never a dependency of loom itself.
# python3-sklearn is there only for its 8x8 digits file (the training samples,
# which read its gzip'd CSV with zlib).
DEPS := cmake ninja-build g++ ccache \
        libboost-dev nlohmann-json3-dev catch2 libdnnl-dev libbenchmark-dev zlib1g-dev \
        python3-dev pybind11-dev python3-numpy python3-pytest \
        python3-sklearn
# OpenBLAS (OpenMP flavour, sharing loom's libgomp pool) is what Debian's
# PyTorch reaches matmul through; without it torch falls to netlib BLAS.
BENCH_DEPS := libtorch-dev libopenblas0-openmp
# PyTorch 1.13 for Python is the tests' oracle for gradients and op
# semantics numpy lacks (make test only; tests skip without it).
TEST_DEPS := python3-torch
# clang 14 and its runtime (libFuzzer, the sanitizers): make fuzz only.
FUZZ_DEPS := clang libclang-rt-14-dev

.PHONY: deps deps-bench deps-test deps-fuzz fuzz configure build demo test bench install clean

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
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 600

bench: deps deps-bench
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_BENCH_WITH_LIBTORCH=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS) --target loom_bench
	$(BUILD)/bin/loom_bench --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python_bench.py

# libFuzzer targets of the three parsers of untrusted input (plugin
# manifests, op schemas, safetensors files), built with clang in their own
# tree and run FUZZ_SECONDS each; fails naming the input of any crash. Not
# part of make test (see fuzz/README.md).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= manifest schema safetensors
fuzz: deps deps-fuzz
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ $(CMAKE_ARGS)
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
	rm -rf $(BUILD)
