"""What memlab needs to know of an array, from any producer: a pointer, shape, strides in bytes, element
size, device and the stream its producer works on.

  torch.Tensor                    its own attributes (data_ptr, stride, device) and torch's current stream
                                  of its device (torch's __cuda_array_interface__ refuses tensors that
                                  require grad, and carries no stream);
  __cuda_array_interface__        (CuPy, numba, ...) version 2 or 3: the interface's `stream` (CuPy's
                                  current stream), else the legacy default stream; the device from
                                  __dlpack_device__ when the object has it, else from the pointer;
  __dlpack__ / __dlpack_device__  (JAX, ...) the capsule read in place (never consumed); the producer is
                                  asked to make the data ready on the legacy default stream, where memlab
                                  then runs.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from ._errors import InvalidArgumentError

LEGACY_DEFAULT_STREAM = 1  # cudaStreamLegacy, as CUDA's, DLPack's and the CAI's stream conventions spell it

_KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 2, 3, 13
_DEVICE_TYPES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm",
                 13: "cuda_managed", 14: "oneapi"}


class View:
    """An array as memlab sees it. `nbytes` is computed once: the checks read it several times a call."""

    __slots__ = ("obj", "framework", "ptr", "shape", "strides", "itemsize", "dtype", "device", "stream", "keep",
                 "nbytes")

    def __init__(self, obj: Any, framework: str, ptr: int, shape: tuple, strides: tuple | None, itemsize: int,
                 dtype: Any, device: int | None, stream: int, keep: list | None = None):
        self.obj = obj
        self.framework = framework      # "torch", "cupy", "numba", "cai", "dlpack"
        self.ptr = ptr
        self.shape = shape
        self.strides = strides          # bytes; None: C-contiguous
        self.itemsize = itemsize
        self.dtype = dtype              # the producer's dtype object or string, for allocating like it
        self.device = device            # None: not known yet (ask the pointer)
        self.stream = stream            # the stream to run on
        self.keep = keep                # what must outlive the call (a DLPack capsule)
        n = itemsize
        for s in shape:
            n *= s
        self.nbytes = n

    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        if 0 in self.shape:
            return True
        expected = self.itemsize
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


def torch_tensor_class():
    """torch.Tensor where torch is imported, else None (no array can be a tensor then; memlab never imports
    torch itself)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


def _raw_stream_reader():
    """torch's current stream of a device as an int, read the way torch's own generated code reads it
    (torch._C._cuda_getCurrentRawStream: no Stream object made); torch.cuda.current_stream where it is absent."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda device: torch.cuda.current_stream(device).cuda_stream)


_torch_raw_stream = None


def _torch_view(x, what: str) -> View:
    global _torch_raw_stream
    if not x.is_cuda:
        raise InvalidArgumentError(f"memlab moves GPU memory: {what} is a torch tensor on {x.device}")
    device = x.get_device()
    if _torch_raw_stream is None:
        _torch_raw_stream = _raw_stream_reader()
    es = x.element_size()
    # torch's is_contiguous is memlab's rule (extent-1 and empty dimensions impose no stride): strides are only
    # read for a tensor that is not, for the message.
    strides = None if x.is_contiguous() else tuple(s * es for s in x.stride())
    return View(x, "torch", x.data_ptr(), tuple(x.shape), strides, es, x.dtype, device, _torch_raw_stream(device))


def _itemsize_of_typestr(typestr: str, what: str) -> int:
    try:
        return int(typestr[2:])
    except (ValueError, TypeError):
        raise InvalidArgumentError(f"{what}: cannot read the element size of typestr {typestr!r}") from None


def _dlpack_device(x) -> tuple[int, int] | None:
    f = getattr(x, "__dlpack_device__", None)
    if f is None:
        return None
    dev = f()
    return int(dev[0]), int(dev[1])


def _framework_of(x) -> str:
    root = type(x).__module__.split(".")[0]
    return root if root in ("cupy", "numba", "jax", "jaxlib") else "cai"


def _cai_view(x, iface: dict, what: str) -> View:
    shape = tuple(map(int, iface["shape"]))
    typestr = iface["typestr"]
    itemsize = _itemsize_of_typestr(typestr, what)
    ptr = int(iface["data"][0] or 0)
    strides = iface.get("strides")
    strides = None if strides is None else tuple(map(int, strides))
    stream = iface.get("stream")
    stream = LEGACY_DEFAULT_STREAM if stream is None or stream == 0 else int(stream)
    device = None
    dl = _dlpack_device(x)
    if dl is not None:
        if dl[0] not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            raise InvalidArgumentError(f"memlab moves GPU memory: {what} is on {_DEVICE_TYPES.get(dl[0], dl[0])}")
        device = dl[1]
    dtype = getattr(x, "dtype", typestr)
    return View(obj=x, framework=_framework_of(x), ptr=ptr, shape=shape, strides=strides, itemsize=itemsize,
                dtype=dtype, device=device, stream=stream)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


def _dlpack_view(x, what: str) -> View:
    dl = _dlpack_device(x)
    if dl is not None and dl[0] not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise InvalidArgumentError(f"memlab moves GPU memory: {what} is on {_DEVICE_TYPES.get(dl[0], dl[0])}")
    try:
        capsule = x.__dlpack__(stream=LEGACY_DEFAULT_STREAM)
    except TypeError:  # a producer from before the stream argument
        capsule = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    valid = ctypes.pythonapi.PyCapsule_IsValid
    valid.restype, valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    if not valid(capsule, b"dltensor"):
        raise InvalidArgumentError(f"{what}: __dlpack__ returned no 'dltensor' capsule")
    # The DLTensor is the first member of DLManagedTensor: read in place; the capsule keeps ownership
    # (its destructor calls the producer's deleter), and is kept alive for the call.
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    if t.device.device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise InvalidArgumentError(
            f"memlab moves GPU memory: {what} is on {_DEVICE_TYPES.get(t.device.device_type, t.device.device_type)}")
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    bits = t.dtype.bits * t.dtype.lanes
    if bits % 8:
        raise InvalidArgumentError(f"{what}: elements of {bits} bits are not whole bytes")
    itemsize = bits // 8
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(ndim))
    return View(obj=x, framework=_framework_of(x) if _framework_of(x) != "cai" else "dlpack",
                ptr=(t.data or 0) + t.byte_offset, shape=shape, strides=strides, itemsize=itemsize,
                dtype=getattr(x, "dtype", None), device=t.device.device_id, stream=LEGACY_DEFAULT_STREAM,
                keep=[capsule])


def view(x, what: str) -> View:
    """The View of `x` (named `what` in messages); raises InvalidArgumentError for anything memlab cannot move."""
    tensor = torch_tensor_class()
    if tensor is not None and isinstance(x, tensor):
        return _torch_view(x, what)
    iface = getattr(x, "__cuda_array_interface__", None)
    if iface is not None:
        return _cai_view(x, iface, what)
    if hasattr(x, "__dlpack__"):
        return _dlpack_view(x, what)
    raise InvalidArgumentError(
        f"memlab moves GPU arrays: {what} is a {type(x).__module__}.{type(x).__qualname__}, which exposes neither "
        "__cuda_array_interface__ nor __dlpack__")


def stream_handle(stream) -> int | None:
    """A stream given by the caller: an int (cudaStream_t), a torch.cuda.Stream (.cuda_stream) or a CuPy
    stream (.ptr); None: the producer's."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise InvalidArgumentError(f"stream: expected an int (cudaStream_t) or a torch or CuPy stream, got {stream!r}")


def empty_like_transposed(v: View, shape: tuple):
    """A new C-contiguous array of `shape` with v's dtype, in v's framework on v's device."""
    if v.framework == "torch":
        import torch

        return torch.empty(shape, dtype=v.dtype, device=v.obj.device)
    if v.framework == "cupy":
        import cupy

        with cupy.cuda.Device(v.device if v.device is not None else v.obj.device.id):
            return cupy.empty(shape, dtype=v.dtype)
    if v.framework == "numba":
        from numba import cuda

        return cuda.device_array(shape, dtype=v.dtype)
    raise InvalidArgumentError(
        f"memlab.transpose cannot allocate the output for a {type(v.obj).__module__}.{type(v.obj).__qualname__} "
        "(it allocates torch, CuPy and numba arrays): pass out=")
