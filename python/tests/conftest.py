"""Shared fixtures: fake GPU arrays (objects exposing __cuda_array_interface__, and optionally
__dlpack_device__, over made-up addresses) for the CPU tests, and the GPU gate for the torch tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The package from this checkout, also when it is not installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class FakeCudaArray:
    """What a CUDA array library exposes, over an address no kernel ever touches (the tests that use it
    check arguments, which memlab does before any CUDA call)."""

    def __init__(self, shape, typestr="<f4", ptr=1 << 40, strides=None, device=None, stream=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3, "stream": stream}
        self._device = device

    def __getattr__(self, name):
        if name == "__dlpack_device__" and self._device is not None:
            return lambda: self._device
        raise AttributeError(name)


@pytest.fixture
def fake():
    return FakeCudaArray


@pytest.fixture(scope="session")
def lib_available():
    import memlab

    try:
        memlab.library_path()
        return True
    except memlab.LibraryNotFoundError as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"libmemlab not built: {e}")
