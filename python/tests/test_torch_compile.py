"""memlab.copy_ and memlab.transpose inside torch.compile and CUDA graphs (torch.ops.memlab.*, memlab/_torch.py).

Without a GPU (PyTorch installed): Dynamo traces a function calling both on meta tensors, so the fake
implementations run: no graph break, the operators in the graph, the same argument errors as eager.
With a GPU: the compiled function (Inductor) gives eager's bytes, and a captured torch.cuda.graph replays them.
Skipped, with the reason, without PyTorch (CI installs none)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the torch.compile tests need it)")

import memlab  # noqa: E402

CUDA = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not CUDA, reason="no CUDA GPU for PyTorch: the compiled and captured runs need one")


def both_ops(x, y):
    """What a user writes: a transpose, arithmetic, a copy into a preallocated tensor, a transpose into out=."""
    z = memlab.transpose(x) * 2
    memlab.copy_(y, z)
    w = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    memlab.transpose(z, w)
    return y + 1, w


# ---- tracing only: fake tensors, no GPU -----------------------------------------------------------------------


def test_operators_are_registered_with_their_mutations():
    memlab._compiling()  # the first call after torch was imported registers them
    assert memlab._torch_ops is not None
    copy_schema = torch.ops.memlab.copy_.default._schema
    assert [a.name for a in copy_schema.arguments if a.alias_info and a.alias_info.is_write] == ["dst"]
    out_schema = torch.ops.memlab.transpose_out.default._schema
    assert [a.name for a in out_schema.arguments if a.alias_info and a.alias_info.is_write] == ["out"]
    assert not any(a.alias_info for a in torch.ops.memlab.transpose.default._schema.arguments)


def test_dynamo_traces_both_without_a_graph_break():
    x, y = torch.empty(33, 65, device="meta"), torch.empty(65, 33, device="meta")
    explained = torch._dynamo.explain(both_ops)(x, y)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    code = explained.graphs[0].code
    for op in ("torch.ops.memlab.transpose(", "torch.ops.memlab.copy_(", "torch.ops.memlab.transpose_out("):
        assert op in code, code


def test_fullgraph_compile_runs_the_fake_implementations():
    x, y = torch.empty(3, 5, 7, device="meta", dtype=torch.float16), torch.empty(3, 7, 5, device="meta",
                                                                               dtype=torch.float16)
    y1, w = torch.compile(both_ops, backend="aot_eager", fullgraph=True)(x, y)
    assert y1.shape == (3, 7, 5) and w.shape == (3, 5, 7) and w.dtype == torch.float16


def test_traced_calls_refuse_what_eager_refuses():
    compiled = torch.compile(lambda a: memlab.transpose(a), backend="eager", fullgraph=True)
    with pytest.raises(Exception, match="memlab.transpose takes a matrix"):
        compiled(torch.empty(2, 3, 4, 5, device="meta"))
    with pytest.raises(Exception, match="unsupported element size: x has 16-byte"):
        compiled(torch.empty(4, 4, device="meta", dtype=torch.complex128))
    copy = torch.compile(lambda a, b: memlab.copy_(a, b), backend="eager", fullgraph=True)
    with pytest.raises(Exception, match="mismatched sizes: dst holds 40 bytes"):
        copy(torch.empty(10, device="meta"), torch.empty(11, device="meta"))
    into = torch.compile(lambda a, b: memlab.transpose(a, b), backend="eager", fullgraph=True)
    with pytest.raises(Exception, match="mismatched sizes: out has shape"):
        into(torch.empty(4, 6, device="meta"), torch.empty(4, 6, device="meta"))
    with_stream = torch.compile(lambda a: memlab.transpose(a, stream=7), backend="eager", fullgraph=True)
    with pytest.raises(Exception, match="stream= cannot be given inside torch.compile"):
        with_stream(torch.empty(4, 6, device="meta"))


def test_the_transpose_is_differentiable_through_its_operator():
    x = torch.empty(6, 4, device="meta", requires_grad=True)
    y = torch.compile(lambda a: memlab.transpose(a) * 3, backend="aot_eager", fullgraph=True)(x)
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == (6, 4)


def test_eager_calls_do_not_go_through_the_dispatcher(monkeypatch):
    # Outside torch.compile the plain path runs (no operator): a meta tensor is refused as not GPU memory.
    with pytest.raises(memlab.InvalidArgumentError, match="GPU memory: x is a torch tensor on meta"):
        memlab.transpose(torch.empty(4, 6, device="meta"))


# ---- on the GPU -------------------------------------------------------------------------------------------------


def _random(shape, dtype=torch.float32):
    return torch.randn(shape, device="cuda").to(dtype)


def _gpu_ready():
    try:
        memlab.library_path()
    except memlab.LibraryNotFoundError as e:
        pytest.skip(f"libmemlab not built: {e}")


@needs_gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8], ids=str)  # each an Inductor compile: seconds
def test_compiled_function_matches_eager(dtype):
    _gpu_ready()
    x = _random((257, 129), dtype) if dtype.is_floating_point else torch.randint(0, 256, (257, 129), device="cuda",
                                                                                dtype=dtype)
    y = torch.empty(129, 257, dtype=dtype, device="cuda")
    explained = torch._dynamo.explain(both_ops)(x, y)
    assert explained.graph_break_count == 0, explained.break_reasons
    torch._dynamo.reset()
    y_eager, w_eager = both_ops(x, torch.empty_like(y))
    y_compiled, w_compiled = torch.compile(both_ops, fullgraph=True)(x, y)  # Inductor
    z = x.t() * 2
    assert torch.equal(y_compiled, z + 1) and torch.equal(y_eager, y_compiled)
    assert torch.equal(w_compiled, z.t()) and torch.equal(w_eager, w_compiled)
    assert torch.equal(y, z)  # the copy wrote the caller's tensor


@needs_gpu
@pytest.mark.gpu
def test_operators_pass_opcheck():
    _gpu_ready()
    x = _random((65, 33))
    torch.library.opcheck(torch.ops.memlab.transpose.default, (x,))
    torch.library.opcheck(torch.ops.memlab.transpose_out.default, (x, torch.empty(33, 65, device="cuda")))
    torch.library.opcheck(torch.ops.memlab.copy_.default, (torch.empty(65, 33, device="cuda"), x))


@needs_gpu
@pytest.mark.gpu
def test_gradient_of_the_transpose():
    _gpu_ready()
    x = _random((40, 24)).requires_grad_(True)
    g = _random((24, 40))
    (torch.compile(lambda a: memlab.transpose(a), fullgraph=True)(x) * g).sum().backward()
    assert torch.equal(x.grad, g.t())


@needs_gpu
@pytest.mark.gpu
def test_cuda_graph_capture_and_replay_match_eager():
    _gpu_ready()
    x = _random((301, 257))
    out = torch.empty(257, 301, device="cuda")
    dst = torch.empty(257, 301, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture, as torch's docs ask
        memlab.transpose(x, out)
        memlab.copy_(dst, out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        memlab.transpose(x, out)
        memlab.copy_(dst, out)
        made = memlab.transpose(x)  # allocated from the graph's pool
    for _ in range(3):
        x.copy_(_random((301, 257)))  # new input bytes, the same addresses
        out.zero_()
        dst.zero_()
        graph.replay()
        torch.cuda.synchronize()
        want = x.t().contiguous()
        assert torch.equal(out, want) and torch.equal(dst, want) and torch.equal(made, want)


@needs_gpu
@pytest.mark.gpu
def test_cuda_graph_captures_copies_that_ask_where_their_pointers_are():
    # From two waves of the GPU's threads (4 MiB on an H100) memlab.copy_ asks whether the pointers are on two GPUs
    # (cudaPointerGetAttributes, a query torch's global capture mode allows); from 64 MiB too.
    _gpu_ready()
    for mib in (8, 16, 128):
        src = torch.randint(1, 255, (mib << 20,), dtype=torch.uint8, device="cuda")
        dst = torch.zeros_like(src)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            memlab.copy_(dst, src)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            memlab.copy_(dst, src)
        src.copy_(torch.randint(1, 255, (mib << 20,), dtype=torch.uint8, device="cuda"))
        dst.zero_()
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(dst, src), f"{mib} MiB"


@needs_gpu
@pytest.mark.gpu
def test_compiled_with_cuda_graphs_reduce_overhead():
    _gpu_ready()
    x = _random((128, 96))
    f = torch.compile(lambda a: memlab.transpose(a) + 1, mode="reduce-overhead", fullgraph=True)
    for _ in range(3):  # recorded, then replayed
        x.copy_(_random((128, 96)))
        assert torch.equal(f(x), x.t() + 1)


def test_memlab_imported_before_torch_still_traces_without_a_break():
    # The operators are registered on the first call after torch is imported, here the traced one.
    code = ("import memlab, torch\n"
            "from test_torch_compile import both_ops\n"
            "e = torch._dynamo.explain(both_ops)(torch.empty(5, 3, device='meta'), torch.empty(3, 5, device='meta'))\n"
            "print(e.graph_count, e.graph_break_count)\n")
    here = Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=f"{here.parent}{os.pathsep}{here}")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "0"], done.stdout + done.stderr[-2000:]
