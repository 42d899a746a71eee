# memlab: thin wrapper over the CMake presets.
#   make build   configure + build build/$(PRESET)/bin/memlab (each preset has its own build folder)
#   make test    build, then run every test (host, SASS; GPU tests SKIP without a GPU)
#   make run     build, then `memlab run` with its defaults (ARGS=... to pass more)
#   make setup   install what is missing (apt-get, pip), nothing else
PRESET ?= default
JOBS ?= $(shell nproc)
ARGS ?=

.PHONY: setup configure build test run clean

setup:
	@bash tools/setup.sh

configure: setup
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

test: build
	ctest --preset $(PRESET) -j $(JOBS)

run: build
	./build/$(PRESET)/bin/memlab run $(ARGS)

clean:
	rm -rf build
