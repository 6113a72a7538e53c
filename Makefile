# Two commands for a new user: `make run` and `make test`. Both build first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# test_gpu, the benchmarks and warpforge-difftest only where a GPU can run
# them (CMakeLists.txt's WARPFORGE_GPU_PROGRAMS).
GPU_PROGRAMS ?= $(if $(shell command -v nvidia-smi),ON,OFF)

.PHONY: all deps configure build run test clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_QUICK_BUILD=ON -DWARPFORGE_LLD=ON -DWARPFORGE_GPU_PROGRAMS=$(GPU_PROGRAMS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	./$(BUILD_DIR)/warpforge demo

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
