"""memlab from Python: moving bytes on NVIDIA GPUs at the speed of the memory system.

    import torch, memlab
    x = torch.randn(12289, 3001, device="cuda")
    y = memlab.transpose(x)          # == x.t().contiguous(), at ~the speed of a copy, on torch's stream
    memlab.copy_(y2, y)              # a copy of the same bytes, any alignment

Arrays: anything with __cuda_array_interface__ (PyTorch, CuPy, numba) or __dlpack__ (JAX, PyTorch), on the
GPU, C-contiguous. Work is enqueued on the producer's current stream (torch's, CuPy's; the legacy default
stream for DLPack producers) or on `stream=`; nothing synchronizes. Errors are memlab.Error exceptions.
The functions call libmemlab (the C ABI, include/memlab/c_api.h) through ctypes; see memlab._lib for where
it is looked for.
"""

from __future__ import annotations

import contextlib

from . import _lib
from ._arrays import View, empty_like_transposed, stream_handle, view
from ._errors import (CudaError, DeviceMismatchError, Error, InvalidArgumentError, LibraryNotFoundError,
                      NoDeviceError)

__version__ = "0.1.0"

__all__ = ["copy_", "transpose", "transpose_path", "device_count", "library_path", "library_version",
           "Error", "InvalidArgumentError", "DeviceMismatchError", "CudaError", "NoDeviceError",
           "LibraryNotFoundError", "__version__"]

_ELEMENT_SIZES = (1, 2, 4, 8)


def library_path():
    """Where the libmemlab in use is."""
    return _lib.library_path()


def library_version() -> str:
    """The version libmemlab reports."""
    return _lib.version()


def device_count() -> int:
    """CUDA devices libmemlab sees (0 without a GPU or driver)."""
    return _lib.device_count()


def transpose_path(dst: int, src: int, batch: int, rows: int, cols: int, elem_size: int) -> str:
    """Which path memlab::transpose takes for these addresses and this shape: "aligned", "realign_in",
    "realign_out", "realign_both", "elem8" (tiles), "few_cols", "few_rows", "small_matrices" (a side of a few
    elements, batches of small matrices), "copy", "none" or "unsupported" (include/memlab/transpose_plan.hpp).
    Needs no GPU."""
    return _lib.library().memlab_transpose_path(dst, src, batch, rows, cols, elem_size).decode()


def _require_contiguous(v: View, what: str) -> None:
    if not v.contiguous():
        raise InvalidArgumentError(
            f"{what} is not contiguous (shape {v.shape}, strides {v.strides} bytes): memlab moves C-contiguous "
            "arrays; make it contiguous first (torch: .contiguous(), CuPy: cupy.ascontiguousarray)")


def _require_disjoint(a: View, b: View, what: str) -> None:
    if a.nbytes and b.nbytes and a.ptr < b.ptr + b.nbytes and b.ptr < a.ptr + a.nbytes:
        raise InvalidArgumentError(f"{what}: the buffers overlap ([{a.ptr:#x}, +{a.nbytes}) and [{b.ptr:#x}, "
                                   f"+{b.nbytes})); memlab moves between distinct buffers")


def _device_of(v: View, what: str) -> int:
    if v.device is None:
        v.device = _lib.pointer_device(v.ptr)
    return v.device


def _same_device(a: View, b: View, what_a: str, what_b: str) -> int:
    # Devices known from the producers are compared before any call into CUDA (no GPU needed to say so).
    if a.device is not None and b.device is not None and a.device != b.device:
        raise DeviceMismatchError(f"{what_a} is on cuda:{a.device} and {what_b} on cuda:{b.device}: memlab moves "
                                  "within one device")
    da, db = _device_of(a, what_a), _device_of(b, what_b)
    if da != db:
        raise DeviceMismatchError(f"{what_a} is on cuda:{da} and {what_b} on cuda:{db}: memlab moves within one "
                                  "device")
    return da


@contextlib.contextmanager
def _on_device(device: int):
    """Makes `device` current for libmemlab's CUDA runtime (and, through the driver's current context, the
    thread's) for the call, and restores the previous one."""
    previous = _lib.get_device()
    if previous != device:
        _lib.set_device(device)
    try:
        yield
    finally:
        if previous != device:
            _lib.set_device(previous)


def copy_(dst, src, *, stream=None):
    """Copies the bytes of `src` into `dst` (GPU arrays of the same size in bytes, C-contiguous, on one
    device, not overlapping), any alignment, with memlab::copy. Returns dst."""
    d, s = view(dst, "dst"), view(src, "src")
    _require_contiguous(d, "dst")
    _require_contiguous(s, "src")
    if d.nbytes != s.nbytes:
        raise InvalidArgumentError(f"mismatched sizes: dst holds {d.nbytes} bytes (shape {d.shape}, {d.itemsize}-byte "
                                   f"elements), src {s.nbytes} (shape {s.shape}, {s.itemsize}-byte elements)")
    _require_disjoint(d, s, "copy_")
    if d.nbytes == 0:
        return dst
    device = _same_device(d, s, "dst", "src")
    handle = stream_handle(stream)
    lib = _lib.library()
    with _on_device(device):
        _lib.check(lib.memlab_copy_bytes(d.ptr, s.ptr, d.nbytes, handle if handle is not None else d.stream), lib)
    return dst


def transpose(x, out=None, *, stream=None):
    """The transpose of `x`: a rows x cols matrix (2D) or a batch of them (3D, batch x rows x cols), C-contiguous
    on the GPU, elements of 1, 2, 4 or 8 bytes. Returns `out` (cols x rows, or batch x cols x rows), allocated in
    x's framework (torch, CuPy, numba) when not given; memlab::transpose moves it on x's producer's stream."""
    v = view(x, "x")
    if len(v.shape) not in (2, 3):
        raise InvalidArgumentError(f"x has {len(v.shape)} dimensions (shape {v.shape}): memlab.transpose takes a "
                                   "matrix (2D) or a batch of matrices (3D)")
    if v.itemsize not in _ELEMENT_SIZES:
        raise InvalidArgumentError(f"unsupported element size: x has {v.itemsize}-byte elements (dtype {v.dtype}); "
                                   "memlab.transpose moves elements of 1, 2, 4 or 8 bytes")
    _require_contiguous(v, "x")
    batch, rows, cols = (1, *v.shape) if len(v.shape) == 2 else v.shape
    out_shape = (cols, rows) if len(v.shape) == 2 else (batch, cols, rows)
    if out is None:
        out = empty_like_transposed(v, out_shape)
    o = view(out, "out")
    if tuple(o.shape) != out_shape:
        raise InvalidArgumentError(f"mismatched sizes: out has shape {tuple(o.shape)}, the transpose of x (shape "
                                   f"{v.shape}) has {out_shape}")
    if o.itemsize != v.itemsize:
        raise InvalidArgumentError(f"mismatched sizes: out has {o.itemsize}-byte elements, x {v.itemsize}-byte ones")
    _require_contiguous(o, "out")
    _require_disjoint(o, v, "transpose")
    if v.nbytes == 0:
        return out
    device = _same_device(o, v, "out", "x")
    handle = stream_handle(stream)
    lib = _lib.library()
    with _on_device(device):
        _lib.check(lib.memlab_transpose(o.ptr, v.ptr, batch, rows, cols, v.itemsize,
                                        handle if handle is not None else v.stream), lib)
    return out
