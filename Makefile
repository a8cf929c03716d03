# ibdyn: thin wrapper around CMake. `make run` and `make test` install what is missing first.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD ?= build-bench
CMAKE_FLAGS ?=

.PHONY: all build run test test-normal test-asan bench setup clean format

all: build

setup:
	@tools/setup.sh build

# `make run` needs no test packages (cmocka): the tests are configured by test-normal and test-asan only
build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DIBDYN_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/ibsim

test:
	@tools/setup.sh test
	@$(MAKE) --no-print-directory test-normal test-asan

test-normal:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DIBDYN_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DIBDYN_TESTS=ON -DIBDYN_SANITIZE=ON -DIBDYN_SLOW_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)

bench:
	@tools/setup.sh bench
	@cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DIBDYN_BENCH=ON -DIBDYN_LTO=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BENCH_BUILD) -j$(JOBS)
	@set -e; for b in $(BENCH_BUILD)/bench/bench_*; do [ -x "$$b" ] && "$$b"; done

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BENCH_BUILD)
