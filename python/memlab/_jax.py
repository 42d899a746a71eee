"""memlab.transpose of a jax.Array, through JAX's FFI: libmemlab's XLA FFI handler (src/c_api/jax_ffi.cpp, the
symbol memlab_jax_transpose) registered as the custom call target "memlab_transpose" on CUDA, and called with
jax.ffi.ffi_call. The result is a new jax.Array (JAX arrays are immutable: no out=), on XLA's stream; it works
eagerly, under jax.jit (the call is in the compiled program) and under jax.vmap (batch dimensions lead).

libmemlab has the handler only where jaxlib's FFI headers were present when it was built; where they were not,
the call raises memlab.NotBuiltError saying what to install.
"""

from __future__ import annotations

import threading

from . import _lib
from ._errors import InvalidArgumentError, NotBuiltError

TARGET = "memlab_transpose"
HANDLER = "memlab_jax_transpose"
_ELEMENT_SIZES = (1, 2, 4, 8)

_registered = False
_lock = threading.Lock()

NOT_BUILT = ("memlab.transpose of a jax.Array needs libmemlab built with JAX's FFI headers, and {path} was built "
             "without them: pip install jax, then rebuild libmemlab (pip install --no-build-isolation ./python, or "
             "cmake -DMEMLAB_JAX_FFI_INCLUDE_DIR=$(python3 -c 'import jax.ffi; print(jax.ffi.include_dir())') and "
             "cmake --build <build> --target memlab_c_api)")


def handler():
    """libmemlab's XLA FFI handler, as a ctypes function; NotBuiltError (one line: what to install) if this
    libmemlab has none."""
    lib = _lib.library()
    try:
        return getattr(lib, HANDLER)
    except AttributeError:
        raise NotBuiltError(NOT_BUILT.format(path=_lib.library_path())) from None


def register() -> None:
    """Registers the handler with JAX (once a process) as the CUDA target "memlab_transpose"."""
    global _registered
    if _registered:
        return
    fn = handler()  # before importing jax: the message does not depend on it
    with _lock:
        if _registered:
            return
        import jax

        ffi = getattr(jax, "ffi", None)
        if ffi is None or not hasattr(ffi, "ffi_call"):
            raise NotBuiltError(f"memlab.transpose of a jax.Array needs jax.ffi (jax >= 0.4.38); this is jax "
                                f"{jax.__version__}: pip install -U jax")
        ffi.register_ffi_target(TARGET, ffi.pycapsule(fn), platform="CUDA")
        _registered = True


def _platform_of(x) -> str | None:
    """The platform of a concrete jax.Array ("gpu", "cpu", ...); None for a tracer (under jit: not known yet)."""
    try:
        devices = x.devices()
    except Exception:  # noqa: BLE001 - a tracer has no devices
        return None
    platforms = {d.platform for d in devices}
    return platforms.pop() if len(platforms) == 1 else ",".join(sorted(platforms))


def _has_gpu(jax) -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:  # "Unknown backend gpu" / no GPU platform initialised
        return False


def transpose(x, out=None, stream=None):
    """memlab.transpose for a jax.Array (or a tracer of one, under jax.jit): a new jax.Array, the transpose of the
    last two dimensions."""
    import memlab

    if out is not None:
        raise InvalidArgumentError("out=: a jax.Array is immutable; memlab.transpose returns a new one (under "
                                   "jax.jit XLA reuses buffers itself)")
    if stream is not None:
        raise InvalidArgumentError("stream=: a jax.Array is transposed on XLA's stream; stream= is for torch, CuPy "
                                   "and numba arrays")
    import jax

    dtype = jax.numpy.dtype(x.dtype)
    *_, out_shape = memlab.transpose_shape(tuple(x.shape), dtype.itemsize, "x", dtype)
    platform = _platform_of(x)
    if platform is not None and platform not in ("gpu", "cuda"):
        raise InvalidArgumentError(f"memlab moves GPU memory: x is a jax.Array on {platform}")
    if platform is None and not _has_gpu(jax):
        raise InvalidArgumentError("memlab moves GPU memory: JAX has no GPU backend here (jax.devices('gpu') finds "
                                   "none), so the traced call could only run on the host")
    register()
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(out_shape, x.dtype), vmap_method="broadcast_all")
    return call(x)
