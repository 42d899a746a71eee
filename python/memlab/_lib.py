"""Finding and loading libmemlab (the C ABI, include/memlab/c_api.h) with ctypes.

Where it looks, in order:
  1. $MEMLAB_LIBRARY: the path of a libmemlab.so;
  2. beside this package (what `pip install` puts there);
  3. a build tree of the checkout this package sits in: build/<preset>/lib/libmemlab.so (default, dev,
     ci, then any other folder under build/), or build/lib/libmemlab.so (a `cmake -B build`).
The library is loaded on first use, not on import: `import memlab` works on a machine without it. It is loaded
RTLD_LOCAL and exports its C ABI alone (src/c_api/libmemlab.map), so it can be loaded before or after PyTorch,
CuPy or JAX: nothing of it binds to theirs.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

from ._errors import Error, InvalidArgumentError, LibraryNotFoundError, error_from_status

ABI_VERSION = 1  # MEMLAB_C_ABI_VERSION this package speaks

_NAMES = {"linux": "libmemlab.so", "darwin": "libmemlab.dylib", "win32": "memlab.dll"}
_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates() -> list[Path]:
    name = _NAMES.get(sys.platform, "libmemlab.so")
    here = Path(__file__).resolve().parent
    found = []
    env = os.environ.get("MEMLAB_LIBRARY")
    if env:
        found.append(Path(env))
    found.append(here / name)
    build = here.parent.parent / "build"  # <checkout>/python/memlab -> <checkout>/build
    presets = ["default", "dev", "ci"]
    others = sorted(p.name for p in build.iterdir() if p.is_dir() and p.name not in presets) if build.is_dir() else []
    found += [build / folder / "lib" / name for folder in presets + others]
    found.append(build / "lib" / name)
    return found


def _declare(lib: ctypes.CDLL) -> None:
    c_int, c_size, c_void, c_char = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
    sigs = {
        "memlab_abi_version": (c_int, []),
        "memlab_version": (c_char, []),
        "memlab_copy_bytes": (c_int, [c_void, c_void, c_size, c_void]),
        "memlab_transpose": (c_int, [c_void, c_void, c_size, c_size, c_size, c_size, c_void]),
        "memlab_transpose_path": (c_char, [c_size, c_size, c_size, c_size, c_size, c_size]),
        "memlab_get_last_error": (c_int, []),
        "memlab_last_error_message": (c_char, []),
        "memlab_error_name": (c_char, [c_int]),
        "memlab_error_string": (c_char, [c_int]),
        "memlab_device_count": (c_int, [ctypes.POINTER(c_int)]),
        "memlab_get_device": (c_int, [ctypes.POINTER(c_int)]),
        "memlab_set_device": (c_int, [c_int]),
        "memlab_pointer_device": (c_int, [c_void, ctypes.POINTER(c_int)]),
        "memlab_stream_synchronize": (c_int, [c_void]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def library() -> ctypes.CDLL:
    """The loaded libmemlab; raises LibraryNotFoundError (with every place it looked) if there is none."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if not path.is_file():
                tried.append(f"{path} (no such file)")
                continue
            try:
                lib = ctypes.CDLL(str(path))
                _declare(lib)
            except (OSError, AttributeError) as e:
                tried.append(f"{path} ({e})")
                continue
            abi = lib.memlab_abi_version()
            if abi != ABI_VERSION:
                tried.append(f"{path} (C ABI version {abi}, this package speaks {ABI_VERSION})")
                continue
            _lib, _lib_path = lib, path
            return lib
        raise LibraryNotFoundError(
            "memlab: libmemlab was not found or could not be loaded. Install the package with pip (it builds the "
            "library), build the target memlab_c_api (cmake --build --preset default --target memlab_c_api), or set "
            "MEMLAB_LIBRARY to its path. Tried: " + "; ".join(tried))


def library_path() -> Path:
    """Where the loaded libmemlab is (loading it if needed)."""
    library()
    return _lib_path


def check(status: int, lib: ctypes.CDLL | None = None) -> None:
    """Raises the memlab.Error that a status of the C ABI means (0: none)."""
    if status == 0:
        return
    lib = lib or library()
    message = (lib.memlab_last_error_message() or b"").decode(errors="replace")
    lib.memlab_get_last_error()  # read: clear it
    name = (lib.memlab_error_name(status) or b"?").decode()
    raise error_from_status(status, name, message or f"status {status} ({name})")


def device_count() -> int:
    """CUDA devices visible to libmemlab; 0 where CUDA has no usable device or driver (no exception)."""
    lib = library()
    n = ctypes.c_int(0)
    if lib.memlab_device_count(ctypes.byref(n)) != 0:
        lib.memlab_get_last_error()
        return 0
    return n.value


_single_device = False


def single_device() -> bool:
    """Whether libmemlab sees exactly one CUDA device, so that it is always the current one (asked once, then
    remembered: the devices a process sees do not change)."""
    global _single_device
    if not _single_device:
        _single_device = device_count() == 1
    return _single_device


def get_device() -> int:
    lib = library()
    d = ctypes.c_int(0)
    check(lib.memlab_get_device(ctypes.byref(d)), lib)
    return d.value


def set_device(device: int) -> None:
    lib = library()
    check(lib.memlab_set_device(int(device)), lib)


def pointer_device(ptr: int) -> int:
    """The CUDA device that holds `ptr`; raises memlab.Error for host memory or without a GPU."""
    lib = library()
    d = ctypes.c_int(-1)
    status = lib.memlab_pointer_device(ctypes.c_void_p(ptr), ctypes.byref(d))
    if status == 1:  # cudaErrorInvalidValue: not device memory
        message = (lib.memlab_last_error_message() or b"").decode(errors="replace")
        lib.memlab_get_last_error()
        raise InvalidArgumentError(f"memlab moves GPU memory: {message}")
    check(status, lib)
    return d.value


def version() -> str:
    return library().memlab_version().decode()


__all__ = ["library", "library_path", "check", "device_count", "single_device", "get_device", "set_device",
           "pointer_device", "version", "Error"]
