"""memlab's functions as PyTorch operators (torch.library custom ops), so that torch.compile keeps them in its
graph (no graph break) and a CUDA graph captures them like any other kernel:

  torch.ops.memlab.copy_(dst, src) -> ()            writes dst (mutates_args: dst)
  torch.ops.memlab.transpose(x) -> Tensor           a new tensor, differentiable (its gradient is a transpose)
  torch.ops.memlab.transpose_out(x, out) -> ()      writes out

Each has a fake (meta) implementation: the output's shape, dtype and device from the inputs' alone, with the
same argument checks and messages as the eager path, so torch.compile (and torch.export) trace them without a
GPU call. The real implementation is the eager path (memlab._copy_eager / _transpose_eager: libmemlab on torch's
current stream), never the public functions, which would ask the compiler again.

memlab.copy_ and memlab.transpose call these operators only while torch.compile traces; in eager mode they
call libmemlab directly (a copy of a few microseconds should not pay the dispatcher's cost). Imported by memlab
when torch is (memlab/__init__.py: at `import memlab` if torch was imported first, else at the first call that
sees a tensor); `import memlab._torch` registers them explicitly.
"""

from __future__ import annotations

import torch

import memlab
from memlab._errors import InvalidArgumentError

is_compiling = torch.compiler.is_compiling

_Tensor = torch.Tensor


@torch.library.custom_op("memlab::copy_", mutates_args=("dst",), device_types="cuda")
def copy_op(dst: _Tensor, src: _Tensor) -> None:
    memlab._copy_eager(dst, src)


@copy_op.register_fake
def _copy_fake(dst, src):
    dn, sn = dst.numel() * dst.element_size(), src.numel() * src.element_size()
    if dn != sn:
        raise InvalidArgumentError(f"mismatched sizes: dst holds {dn} bytes (shape {tuple(dst.shape)}, "
                                   f"{dst.element_size()}-byte elements), src {sn} (shape {tuple(src.shape)}, "
                                   f"{src.element_size()}-byte elements)")
    return None


@torch.library.custom_op("memlab::transpose", mutates_args=(), device_types="cuda")
def transpose_op(x: _Tensor) -> _Tensor:
    return memlab._transpose_eager(x)


@transpose_op.register_fake
def _transpose_fake(x):
    *_, shape = memlab.transpose_shape(tuple(x.shape), x.element_size(), "x", x.dtype)
    return x.new_empty(shape)


def _transpose_backward(ctx, grad):
    # d(x^T) = (dy)^T: the gradient is the transpose of the output's gradient, moved by the same operator.
    return torch.ops.memlab.transpose(grad.contiguous())


transpose_op.register_autograd(_transpose_backward)


@torch.library.custom_op("memlab::transpose_out", mutates_args=("out",), device_types="cuda")
def transpose_out_op(x: _Tensor, out: _Tensor) -> None:
    memlab._transpose_eager(x, out)


@transpose_out_op.register_fake
def _transpose_out_fake(x, out):
    *_, shape = memlab.transpose_shape(tuple(x.shape), x.element_size(), "x", x.dtype)
    if tuple(out.shape) != shape:
        raise InvalidArgumentError(f"mismatched sizes: out has shape {tuple(out.shape)}, the transpose of x (shape "
                                   f"{tuple(x.shape)}) has {shape}")
    if out.element_size() != x.element_size():
        raise InvalidArgumentError(f"mismatched sizes: out has {out.element_size()}-byte elements, x "
                                   f"{x.element_size()}-byte ones")
    return None


def _no_stream(stream, what: str) -> None:
    if stream is not None:
        raise InvalidArgumentError(f"{what}: stream= cannot be given inside torch.compile (the compiled graph runs on "
                                   "torch's current stream); use `with torch.cuda.stream(s):` around the call")


# What memlab.copy_ and memlab.transpose become while torch.compile traces them.

def copy_(dst, src, stream):
    _no_stream(stream, "memlab.copy_")
    torch.ops.memlab.copy_(dst, src)
    return dst


def transpose(x, out, stream):
    _no_stream(stream, "memlab.transpose")
    if out is None:
        return torch.ops.memlab.transpose(x)
    torch.ops.memlab.transpose_out(x, out)
    return out
