"""The host cost of `import memlab`'s Python path, without a GPU: memlab.copy_ and memlab.transpose on arrays
that expose __cuda_array_interface__ (made-up addresses), calling a stub libmemlab whose functions return 0 at
once. What is left is the wrapper's own cost: reading the arrays, its checks, the device switch and the ctypes
calls. On the GPU the real libmemlab adds its C side (plan, checks, cudaLaunchKernel: ~2-3 us) and torch
tensors add torch's attribute reads; tools/studies/copy_floor.py measures those there (host_us).

  python3 tools/studies/memlab_py_host_overhead.py [--calls 200000] [--profile]

Needs a C compiler (cc) to build the stub; PYTHONPATH is set to this checkout's python/ by the script.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Every function python/memlab/_lib.py declares, as a no-op: 0 (success), the device 0, the ABI version 1.
STUB = r"""
#include <stddef.h>
int memlab_abi_version(void) { return 1; }
const char* memlab_version(void) { return "0.1.0"; }
int memlab_copy_bytes(void* d, const void* s, size_t n, void* st) { (void)d; (void)s; (void)n; (void)st; return 0; }
int memlab_transpose(void* d, const void* s, size_t b, size_t r, size_t c, size_t e, void* st) {
  (void)d; (void)s; (void)b; (void)r; (void)c; (void)e; (void)st; return 0; }
const char* memlab_transpose_path(size_t d, size_t s, size_t b, size_t r, size_t c, size_t e) {
  (void)d; (void)s; (void)b; (void)r; (void)c; (void)e; return "aligned"; }
int memlab_get_last_error(void) { return 0; }
const char* memlab_last_error_message(void) { return ""; }
const char* memlab_error_name(int s) { (void)s; return "cudaSuccess"; }
const char* memlab_error_string(int s) { (void)s; return "no error"; }
int memlab_device_count(int* n) { *n = 1; return 0; }
int memlab_get_device(int* d) { *d = 0; return 0; }
int memlab_set_device(int d) { (void)d; return 0; }
int memlab_pointer_device(const void* p, int* d) { (void)p; *d = 0; return 0; }
int memlab_stream_synchronize(void* s) { (void)s; return 0; }
"""


class CudaArray:
    """What CuPy or numba expose: the interface and the device (DLPack's kCUDA, 0)."""

    def __init__(self, shape, typestr="<f2", ptr=1 << 40):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": None, "version": 3, "stream": 7}

    def __dlpack_device__(self):
        return (2, 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--profile", action="store_true", help="also print where copy_'s time goes (cProfile)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = Path(tmp) / "stub.c", Path(tmp) / "libmemlab_stub.so"
        src.write_text(STUB)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
        os.environ["MEMLAB_LIBRARY"] = str(lib)
        sys.path.insert(0, str(ROOT / "python"))
        import memlab
        from memlab import _lib

        assert memlab.library_path() == lib
        dst, src_arr = CudaArray((1 << 16,)), CudaArray((1 << 16,), ptr=1 << 41)
        x, out = CudaArray((300, 200), ptr=1 << 42), CudaArray((200, 300), ptr=1 << 43)
        raw = _lib.library().memlab_copy_bytes
        cases = {
            "ctypes memlab_copy_bytes (the floor of any ctypes path)": lambda: raw(1 << 40, 1 << 41, 1 << 17, 7),
            "memlab.copy_(dst, src)": lambda: memlab.copy_(dst, src_arr),
            "memlab.transpose(x, out)": lambda: memlab.transpose(x, out),
        }
        print(f"{'call':60} {'us per call':>12}")
        for name, fn in cases.items():
            fn()
            best = min(timeit.repeat(fn, number=args.calls // 5, repeat=5)) / (args.calls // 5)
            print(f"{name:60} {best * 1e6:12.3f}")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.calls // 10):
                memlab.copy_(dst, src_arr)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
