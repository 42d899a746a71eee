# memlab: thin wrapper over the CMake presets.
#   make build   configure + build build/$(PRESET)/bin/memlab (each preset has its own build folder)
#   make test    build, then run every test (host, SASS; GPU tests SKIP without a GPU)
#   make run     build, then `memlab run` with its defaults (ARGS=... to pass more)
#   make install build, then install memlab (with the headers, libmemlab, the CMake package) under PREFIX:
#                PREFIX/bin/memlab (PREFIX defaults to ~/.local; put PREFIX/bin on PATH)
#   make setup   install what is missing (apt-get, pip), nothing else
PRESET ?= default
JOBS ?= $(shell nproc)
ARGS ?=
PREFIX ?= $(HOME)/.local

.PHONY: setup configure build test run install clean

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

install: build
	cmake --install build/$(PRESET) --prefix $(PREFIX)
	@echo "memlab installed: $(PREFIX)/bin/memlab (put $(PREFIX)/bin on PATH if it is not)"

clean:
	rm -rf build
