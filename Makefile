# A thin wrapper over CMake: `make run` and `make test` are the whole
# set-up on a fresh Debian 12 machine.  CMake stays the real build.
BUILD     ?= build
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
PREFIX    ?= /usr/local

DEPS      = build-essential cmake pkg-config libopenblas-dev libpfm4-dev \
            zlib1g-dev libncurses-dev dataset-fashion-mnist
TEST_DEPS = python3-torch python3-numpy tmux hyperfine openmpi-bin libopenmpi-dev

.PHONY: all deps test-deps configure build run test install clean

all: build

deps:
	@sh scripts/deps.sh $(DEPS)

test-deps: deps
	@sh scripts/deps.sh $(TEST_DEPS)

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# On a terminal: the dashboard, training at once; otherwise a headless run.
# The dashboard reads the machine's FMA peak from the calibration cache and
# never measures it itself (that would stall the screen), so the first
# `make run` measures it here (a few seconds, once; cached after).
run: build
	@if [ -t 0 ] && [ -t 1 ]; then ./$(BUILD)/ui/cnntop calibrate >/dev/null; \
	 ./$(BUILD)/ui/cnntop --autostart; \
	 else ./$(BUILD)/ui/cnntop run; fi

test: test-deps
	@cmake -S . -B $(BUILD) -DCNNTOP_WERROR=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
