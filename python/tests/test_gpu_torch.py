"""memlab.copy_ and memlab.transpose against PyTorch on the GPU: every dtype, odd shapes, batches, slices at
byte offsets, torch's current stream, and the errors as exceptions. Skipped (with the reason) without
PyTorch, a GPU or libmemlab."""

from __future__ import annotations

import pytest

import memlab

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU for PyTorch", allow_module_level=True)
try:
    memlab.library_path()
except memlab.LibraryNotFoundError as e:
    pytest.skip(f"libmemlab not built: {e}", allow_module_level=True)

pytestmark = pytest.mark.gpu

DTYPES = [torch.uint8, torch.int8, torch.bool, torch.int16, torch.float16, torch.bfloat16, torch.int32, torch.float32,
          torch.int64, torch.float64, torch.complex64]
SHAPES = [(1, 1), (1, 1000), (1000, 1), (2, 2), (3, 5), (17, 15), (33, 4097), (4097, 33), (64, 64), (255, 257),
          (1537, 301)]
INT_OF = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def random(shape, dtype):
    es = torch.empty((), dtype=dtype).element_size()
    n = 1
    for s in shape:
        n *= s
    bits = torch.randint(0, 256, (n * es,), dtype=torch.uint8, device="cuda")
    if dtype == torch.bool:
        bits = bits & 1
    return bits.view(dtype).view(shape)


def same_bytes(a, b):
    return torch.equal(a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_transpose_every_dtype_and_odd_shapes(dtype):
    for shape in SHAPES:
        x = random(shape, dtype)
        y = memlab.transpose(x)
        assert y.shape == (shape[1], shape[0]) and y.dtype == dtype and y.device == x.device
        assert same_bytes(y, x.t()), f"{shape} {dtype}"


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.float64], ids=str)
def test_transpose_batches(dtype):
    for shape in [(3, 33, 65), (1000, 3, 5), (7, 257, 129), (2, 1, 9), (0, 4, 4)]:
        x = random(shape, dtype)
        y = memlab.transpose(x)
        assert y.shape == (shape[0], shape[2], shape[1])
        assert same_bytes(y, x.transpose(1, 2)), f"{shape} {dtype}"


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.float64], ids=str)
def test_transpose_slices_at_byte_offsets(dtype):
    # Inputs and outputs that start 1..15 elements (for u8: bytes) into an allocation: every alignment.
    rows, cols = 301, 257
    n = rows * cols
    base_x = random((n + 16,), dtype)
    base_out = torch.zeros(n + 16, dtype=dtype, device="cuda")
    for k in range(0, 16, 3):
        for j in (0, 1, 5):
            x = base_x[k:k + n].view(rows, cols)
            out = base_out[j:j + n].view(cols, rows)
            guard_before = base_out[:j].clone()
            guard_after = base_out[j + n:].clone()
            assert memlab.transpose(x, out) is out
            assert same_bytes(out, x.t()), f"x at +{k}, out at +{j} elements"
            assert same_bytes(base_out[:j], guard_before) and same_bytes(base_out[j + n:], guard_after)


@pytest.mark.parametrize("dtype", [torch.float16, torch.uint8, torch.float32], ids=str)
def test_copy_any_offset(dtype):
    n = (1 << 16) + 3
    base = random((n + 16,), dtype)
    dst_base = torch.zeros(n + 16, dtype=dtype, device="cuda")
    for k in (0, 1, 2, 7):
        for j in (0, 3):
            dst = dst_base[j:j + n]
            memlab.copy_(dst, base[k:k + n])
            assert same_bytes(dst, base[k:k + n]), f"src +{k}, dst +{j} elements"


def test_copy_large_and_misaligned():
    n = (1 << 26) + 1
    x = random((n + 1,), torch.float16)
    y = torch.empty(n, dtype=torch.float16, device="cuda")
    memlab.copy_(y, x[1:])  # 2 bytes off
    assert same_bytes(y, x[1:])


def test_acceptance_shapes_match_torch():
    for (rows, cols), dtype in [((12289, 3001), torch.float32), ((8191, 8193), torch.float16),
                                ((16411, 8191), torch.uint8), ((8193, 4099), torch.float64)]:
        x = random((rows, cols), dtype)
        assert same_bytes(memlab.transpose(x), x.t()), f"{rows}x{cols} {dtype}"
        del x
    torch.cuda.empty_cache()


def test_runs_on_torchs_current_stream():
    x = random((4097, 1031), torch.float32)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = memlab.transpose(x)  # allocated and written on s
        z = y.t().contiguous()
    s.synchronize()
    assert same_bytes(z, x)
    out = torch.empty(1031, 4097, device="cuda")
    memlab.transpose(x, out, stream=s)
    s.synchronize()
    assert same_bytes(out, x.t())


def test_inputs_that_require_grad():
    x = random((33, 65), torch.float32).requires_grad_(True)
    assert same_bytes(memlab.transpose(x), x.detach().t())


def test_cupy_arrays_if_installed():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    x = cupy.random.random((300, 257)).astype(cupy.float32)
    y = memlab.transpose(x)
    assert isinstance(y, cupy.ndarray)
    assert bool((y == x.T).all())


def test_dlpack_only_producer():
    class OnlyDLPack:  # what JAX exposes: __dlpack__ and __dlpack_device__, no __cuda_array_interface__
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    x = random((129, 67), torch.int16)
    out = torch.empty(67, 129, dtype=torch.int16, device="cuda")
    memlab.transpose(OnlyDLPack(x), out=OnlyDLPack(out))
    torch.cuda.synchronize()
    assert same_bytes(out, x.t())
    with pytest.raises(memlab.InvalidArgumentError, match="pass out="):
        memlab.transpose(OnlyDLPack(x))


def test_errors_are_exceptions_with_messages():
    x = random((64, 48), torch.float32)
    with pytest.raises(memlab.InvalidArgumentError, match="x is not contiguous"):
        memlab.transpose(x.t())
    with pytest.raises(memlab.InvalidArgumentError, match="unsupported element size: x has 16-byte"):
        memlab.transpose(random((8, 8), torch.complex128))
    with pytest.raises(memlab.InvalidArgumentError, match="GPU memory: x is a torch tensor on cpu"):
        memlab.transpose(torch.zeros(4, 4))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes"):
        memlab.transpose(x, out=torch.empty(64, 48, device="cuda"))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes"):
        memlab.transpose(x, out=torch.empty(48, 64, dtype=torch.float16, device="cuda"))
    big = torch.empty(64 * 48 * 2, device="cuda")
    with pytest.raises(memlab.InvalidArgumentError, match="overlap"):
        memlab.transpose(big[:3072].view(64, 48), out=big[100:3172].view(48, 64))
    with pytest.raises(memlab.InvalidArgumentError, match="mismatched sizes"):
        memlab.copy_(torch.empty(10, device="cuda"), torch.empty(11, device="cuda"))
    with pytest.raises(memlab.InvalidArgumentError, match="overlap"):
        memlab.copy_(big[1:101], big[:100])
    with pytest.raises(memlab.InvalidArgumentError, match="dimensions"):
        memlab.transpose(torch.empty(5, device="cuda"))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU: no other device to mismatch")
def test_another_device():
    x = random((64, 48), torch.float32)
    out = torch.empty(48, 64, device="cuda:1")
    with pytest.raises(memlab.DeviceMismatchError, match="cuda:1"):
        memlab.transpose(x, out=out)
    y = memlab.transpose(x.to("cuda:1"))  # runs on the input's device
    assert y.device == torch.device("cuda:1") and same_bytes(y.cpu(), x.t().cpu())


def test_readme_example():
    import torch as t  # the README's three lines

    x = t.randn(12289, 3001, device="cuda")
    y = memlab.transpose(x)  # == x.t().contiguous()
    assert t.equal(y, x.t().contiguous())
