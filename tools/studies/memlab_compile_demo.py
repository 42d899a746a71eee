"""What a user sees of memlab inside torch.compile, a captured CUDA graph and jax.jit (README's Python section),
printed: Dynamo's account of a function calling memlab.transpose and memlab.copy_ (graphs, breaks, the graph's
code), the compiled result against eager, a CUDA graph's replay against eager, and jax.jit(memlab.transpose)
against x.T with the custom call in the lowered program. Each part runs where its framework and a GPU are, and
says so where not.

  PYTHONPATH=python MEMLAB_LIBRARY=build/default/lib/libmemlab.so python3 tools/studies/memlab_compile_demo.py
"""

from __future__ import annotations

import os
import sys
import time
import traceback

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX beside torch: take memory as needed


def part(title, fn) -> bool:
    print(f"\n== {title}")
    try:
        fn()
        return True
    except Exception:  # noqa: BLE001 - a demo part that fails is reported and the next one runs
        traceback.print_exc(file=sys.stdout)
        print("FAILED")
        return False


def torch_parts() -> list[bool]:
    try:
        import torch
    except ImportError:
        print("\n== torch: not installed, skipped")
        return []
    import memlab

    if not torch.cuda.is_available():
        print("\n== torch: no CUDA GPU, skipped")
        return []

    def f(x, y):
        z = memlab.transpose(x) * 2
        memlab.copy_(y, z)
        return y + 1

    def explain():
        x = torch.randn(4097, 1031, device="cuda")
        y = torch.empty(1031, 4097, device="cuda")
        e = torch._dynamo.explain(f)(x, y)
        print(f"graphs {e.graph_count}, graph breaks {e.graph_break_count}, break reasons {e.break_reasons}")
        print(e.graphs[0].code.strip())
        assert e.graph_break_count == 0

    def compiled():
        torch._dynamo.reset()
        x = torch.randn(4097, 1031, device="cuda")
        want = f(x, torch.empty(1031, 4097, device="cuda"))
        t0 = time.perf_counter()
        got = torch.compile(f, fullgraph=True)(x, torch.empty(1031, 4097, device="cuda"))
        torch.cuda.synchronize()
        print(f"torch.compile(f, fullgraph=True) (Inductor): first call {time.perf_counter() - t0:.1f} s; "
              f"equal to eager: {torch.equal(got, want)}")
        assert torch.equal(got, want)

    def graph():
        x = torch.randn(4097, 1031, device="cuda")
        out = torch.empty(1031, 4097, device="cuda")
        dst = torch.empty_like(out)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            memlab.transpose(x, out)
            memlab.copy_(dst, out)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            memlab.transpose(x, out)
            memlab.copy_(dst, out)
        ok = True
        for i in range(3):
            x.copy_(torch.randn(4097, 1031, device="cuda"))
            dst.zero_()
            g.replay()
            torch.cuda.synchronize()
            ok &= torch.equal(dst, x.t().contiguous())
        print(f"captured memlab.transpose + memlab.copy_ in torch.cuda.graph; 3 replays on new inputs equal to "
              f"eager: {ok}")
        assert ok

    return [part("torch._dynamo.explain of f (memlab.transpose, arithmetic, memlab.copy_)", explain),
            part("torch.compile of f against eager", compiled),
            part("torch.cuda.graph capture and replay", graph)]


def jax_parts() -> list[bool]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("\n== jax absent (not installed): the JAX parts skipped")
        return []
    import memlab

    try:
        has_gpu = bool(jax.devices("gpu"))
    except RuntimeError:
        has_gpu = False
    if not has_gpu:
        print("\n== jax: no GPU backend, skipped")
        return []

    def jit():
        x = jax.random.normal(jax.random.PRNGKey(0), (8192, 8192), dtype=jnp.float32)
        f = jax.jit(memlab.transpose)
        text = f.lower(x).as_text()
        print(next(line.strip() for line in text.splitlines() if "custom_call" in line)[:200])
        y = f(x)
        print(f"jax.jit(memlab.transpose)(x) == x.T: {bool((y == x.T).all())}; type {type(y).__name__}")
        assert bool((y == x.T).all())
        g = jax.jit(lambda a: a.T.copy())  # XLA's own transpose, materialised
        for name, fn in (("memlab.transpose", f), ("XLA x.T", g)):
            fn(x).block_until_ready()
            t0 = time.perf_counter()
            for _ in range(20):
                r = fn(x)
            r.block_until_ready()
            ms = (time.perf_counter() - t0) / 20 * 1e3
            print(f"{name:18s} 8192 x 8192 f32 under jit: {ms:.3f} ms per call (wall clock, 20 calls back to back, "
                  f"{2 * x.nbytes / ms / 1e6:.0f} GB/s)")

    return [part("jax.jit(memlab.transpose) of a jax.Array", jit)]


def main() -> int:
    import memlab

    print(f"memlab {memlab.library_version()} from {memlab.library_path()}")
    results = torch_parts() + jax_parts()
    print(f"\n{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
