"""memlab from Python: moving bytes on NVIDIA GPUs at the speed of the memory system.

    import torch, memlab
    x = torch.randn(12289, 3001, device="cuda")
    y = memlab.transpose(x)          # == x.t().contiguous(), at ~the speed of a copy, on torch's stream
    memlab.copy_(y2, y)              # a copy of the same bytes, any alignment

Arrays: anything with __cuda_array_interface__ (PyTorch, CuPy, numba) or __dlpack__, on the GPU,
C-contiguous. Work is enqueued on the producer's current stream (torch's, CuPy's; the legacy default
stream for DLPack producers) or on `stream=`; nothing synchronizes. Errors are memlab.Error exceptions.
The functions call libmemlab (the C ABI, include/memlab/c_api.h) through ctypes; see memlab._lib for where
it is looked for.

Inside torch.compile both are PyTorch operators (torch.ops.memlab.*, memlab/_torch.py): no graph break,
and a CUDA graph captures them. memlab.transpose of a jax.Array returns a jax.Array through JAX's FFI
(memlab/_jax.py), eagerly and under jax.jit, where libmemlab was built with jaxlib's FFI headers.
"""

from __future__ import annotations

import sys

from . import _lib
from ._arrays import View, empty_like_transposed, stream_handle, view
from ._errors import (CudaError, DeviceMismatchError, Error, InvalidArgumentError, LibraryNotFoundError,
                      NoDeviceError, NotBuiltError)

__version__ = "0.1.0"

__all__ = ["copy_", "transpose", "transpose_shape", "transpose_path", "device_count", "library_path",
           "library_version", "Error", "InvalidArgumentError", "DeviceMismatchError", "CudaError", "NoDeviceError",
           "LibraryNotFoundError", "NotBuiltError", "__version__"]

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


def _call_on(device: int, status_of) -> None:
    """Runs `status_of()` (a libmemlab call returning a status) with `device` current for libmemlab's CUDA runtime
    (and, through the driver's current context, the thread's), restores the previous device, and raises the
    memlab.Error a failed status means. With one visible device there is nothing to switch: no call is made."""
    if _lib.single_device():
        _lib.check(status_of())
        return
    previous = _lib.get_device()
    if previous == device:
        _lib.check(status_of())
        return
    _lib.set_device(device)
    try:
        _lib.check(status_of())
    finally:
        _lib.set_device(previous)


# ---- PyTorch's compiler and JAX ----------------------------------------------------------------------------------
# memlab.copy_ and memlab.transpose are plain Python calls. Inside torch.compile they become PyTorch operators
# (torch.ops.memlab.*, memlab/_torch.py) so the compiler keeps them in its graph; a jax.Array goes through JAX's
# FFI (memlab/_jax.py) so it works under jax.jit. Neither framework is imported unless the caller already has.

_torch_ops = None  # memlab._torch once torch's operators are registered (it needs torch imported)


def _compiling() -> bool:
    """Whether torch.compile (Dynamo) is tracing this call. Dynamo reads torch.compiler.is_compiling() as True
    while it traces, so the call becomes the operator in its graph instead of a ctypes call it cannot trace.
    The operators are registered here, on the first call after torch was imported (also when that first call
    is being traced: Dynamo runs the import and keeps tracing, no graph break)."""
    global _torch_ops
    if _torch_ops is None:
        if sys.modules.get("torch") is None:
            return False  # no torch in this process: nothing can be compiling
        from . import _torch

        _torch_ops = _torch
    return _torch_ops.is_compiling()


def _is_jax(x) -> bool:
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


# ---- the functions -----------------------------------------------------------------------------------------------

def copy_(dst, src, *, stream=None):
    """Copies the bytes of `src` into `dst` (GPU arrays of the same size in bytes, C-contiguous, on one
    device, not overlapping), any alignment, with memlab::copy. Returns dst. Inside torch.compile it is the
    operator torch.ops.memlab.copy_ (on torch's current stream; `stream` cannot be given there)."""
    if _compiling():
        return _torch_ops.copy_(dst, src, stream)
    return _copy_eager(dst, src, stream)


def _copy_eager(dst, src, stream=None):
    """memlab.copy_ outside the compiler: libmemlab, now. Also the body of the operator torch.ops.memlab.copy_
    (which must not ask the compiler again: under a tracer that runs real kernels it would call itself)."""
    d, s = view(dst, "dst"), view(src, "src")
    if d.strides is not None:
        _require_contiguous(d, "dst")
    if s.strides is not None:
        _require_contiguous(s, "src")
    if d.nbytes != s.nbytes:
        raise InvalidArgumentError(f"mismatched sizes: dst holds {d.nbytes} bytes (shape {d.shape}, {d.itemsize}-byte "
                                   f"elements), src {s.nbytes} (shape {s.shape}, {s.itemsize}-byte elements)")
    _require_disjoint(d, s, "copy_")
    if d.nbytes == 0:
        return dst
    device = _same_device(d, s, "dst", "src")
    handle = d.stream if stream is None else stream_handle(stream)
    lib = _lib.library()
    _call_on(device, lambda: lib.memlab_copy_bytes(d.ptr, s.ptr, d.nbytes, handle))
    return dst


def transpose_shape(shape: tuple, itemsize: int, what: str = "x", dtype=None) -> tuple:
    """(batch, rows, cols, the transpose's shape) of a matrix (2D) or a batch of them (3D) of `itemsize`-byte
    elements; raises InvalidArgumentError for any other. Shared by the eager path, PyTorch's fake tensors and
    JAX's tracers, so all three refuse the same arguments with the same words."""
    if len(shape) not in (2, 3):
        raise InvalidArgumentError(f"{what} has {len(shape)} dimensions (shape {tuple(shape)}): memlab.transpose "
                                   "takes a matrix (2D) or a batch of matrices (3D)")
    if itemsize not in _ELEMENT_SIZES:
        raise InvalidArgumentError(f"unsupported element size: {what} has {itemsize}-byte elements"
                                   + (f" (dtype {dtype})" if dtype is not None else "")
                                   + "; memlab.transpose moves elements of 1, 2, 4 or 8 bytes")
    batch, rows, cols = (1, *shape) if len(shape) == 2 else shape
    return batch, rows, cols, ((cols, rows) if len(shape) == 2 else (batch, cols, rows))


def transpose(x, out=None, *, stream=None):
    """The transpose of `x`: a rows x cols matrix (2D) or a batch of them (3D, batch x rows x cols), C-contiguous
    on the GPU, elements of 1, 2, 4 or 8 bytes. Returns `out` (cols x rows, or batch x cols x rows), allocated in
    x's framework (torch, CuPy, numba) when not given; memlab::transpose moves it on x's producer's stream.
    A jax.Array gives a new jax.Array (JAX's FFI; also under jax.jit); inside torch.compile it is the operator
    torch.ops.memlab.transpose (or transpose_out with `out`)."""
    if _compiling():
        return _torch_ops.transpose(x, out, stream)
    if _is_jax(x):
        from . import _jax

        return _jax.transpose(x, out, stream)
    return _transpose_eager(x, out, stream)


def _transpose_eager(x, out=None, stream=None):
    """memlab.transpose of a torch, CuPy, numba or DLPack array outside the compiler: libmemlab, now. Also the body
    of the operators torch.ops.memlab.transpose and transpose_out."""
    v = view(x, "x")
    batch, rows, cols, out_shape = transpose_shape(v.shape, v.itemsize, "x", v.dtype)
    if v.strides is not None:
        _require_contiguous(v, "x")
    if out is None:
        out = v.obj.new_empty(out_shape) if v.framework == "torch" else empty_like_transposed(v, out_shape)
    o = view(out, "out")
    if o.shape != out_shape:
        raise InvalidArgumentError(f"mismatched sizes: out has shape {tuple(o.shape)}, the transpose of x (shape "
                                   f"{v.shape}) has {out_shape}")
    if o.itemsize != v.itemsize:
        raise InvalidArgumentError(f"mismatched sizes: out has {o.itemsize}-byte elements, x {v.itemsize}-byte ones")
    if o.strides is not None:
        _require_contiguous(o, "out")
    _require_disjoint(o, v, "transpose")
    if v.nbytes == 0:
        return out
    device = _same_device(o, v, "out", "x")
    handle = v.stream if stream is None else stream_handle(stream)
    lib = _lib.library()
    _call_on(device, lambda: lib.memlab_transpose(o.ptr, v.ptr, batch, rows, cols, v.itemsize, handle))
    return out
