"""A study (not part of the pip package): checks the claim of the reference chapter "PyTorch Examples: Memory Layout"
that

    C = torch.matmul(A.t(), B)               # "Slower! (non-contiguous access)"
    C = torch.matmul(A.t().contiguous(), B)  # "Fast again!"

on this GPU, the way the labs check claims: in one process, verified, cold, interleaved sample by sample. At each
precision (f32, TF32, bf16) and size n (A, B n x n, row-major), four ways to compute Aᵀ B:

  torch_matmul_at_view         torch.matmul(A.t(), B): the transposed view handed to cuBLAS as it is
  torch_matmul_at_contiguous   torch.matmul(A.t().contiguous(), B): the transpose paid in every call, then the product
  memlab_transpose_matmul      torch.matmul(memlab.transpose(A), B): the same with memlab's transpose
  torch_matmul_contiguous      torch.matmul(At, B), At = A.t().contiguous() made once: the product alone (what
                               "Fast again!" would be if the transpose were free)

and, as records of the transpose lab, the transposes alone (torch_t_contiguous, memlab_transpose), so a reader sees
what the second and third pay on top of the product. Why the view needs no copy: cuBLAS takes each operand's
layout as a flag (a row-major A.t() is a column-major A: CUBLAS_OP_T), and its GEMM kernels load tiles of either
layout through shared memory; the kernel names torch's profiler saw for each way are in the records' notes.

  python3 tools/studies/layout_claim.py                       # f32, tf32, bf16 at 1024, 2048, 4096, 8192
  python3 tools/studies/layout_claim.py --math tf32 --sizes 4096 --samples 50 --out claim.json --md claim.md

Verification: every way's C against a float64 product of the same (rounded) inputs, on sampled rows: for f32
within gamma_k sum|a b| elementwise, for TF32 within ((1 + 2^-10)^2 (1 + gamma_2k) - 1) sum|a b| (each input
rounded to 10 mantissa bits), for bf16 (the output rounded to 8 bits, reductions possibly in bf16: torch's
default) a relative Frobenius error under 2^-5, where a wrong layout gives ~1.4.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys

# memlab_tools from this checkout when it is not installed (pip install ./tools/python installs it).
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from memlab_tools import cli  # noqa: E402
from memlab_tools.gpu_timing import interleaved, paired_difference, torch_on_gpu  # noqa: E402
from memlab_tools.runfile import RunFile, finish, record  # noqa: E402
from memlab_tools.stats import quantile  # noqa: E402

MATHS = ("f32", "tf32", "bf16")
WAYS = ("torch_matmul_at_view", "torch_matmul_at_contiguous", "memlab_transpose_matmul", "torch_matmul_contiguous")
CODE = {"torch_matmul_at_view": "torch.matmul(A.t(), B)",
        "torch_matmul_at_contiguous": "torch.matmul(A.t().contiguous(), B)",
        "memlab_transpose_matmul": "torch.matmul(memlab.transpose(A), B)",
        "torch_matmul_contiguous": "torch.matmul(At, B), At made beforehand"}


def tolerance_problem(math_: str, k: int, got, ref, mag) -> str:
    """"" when the sampled rows `got` (float64) are within the bound of `math_` against `ref` (float64 product of
    the same inputs; `mag` = |A|ᵀ|B| on those rows), else what is off first. Works on torch or numpy arrays."""
    if math_ == "bf16":
        err = float(((got - ref) ** 2).sum() ** 0.5)
        norm = float((ref ** 2).sum() ** 0.5)
        rel = err / norm if norm > 0 else float("inf")
        return "" if rel < 2.0 ** -5 else f"relative Frobenius error {rel:.3g} on the sampled rows (bound 2^-5)"
    u = 2.0 ** -24
    gamma = lambda j: j * u / (1 - j * u)  # noqa: E731
    rel = (1 + 2.0 ** -10) ** 2 * (1 + gamma(2 * k)) - 1 if math_ == "tf32" else gamma(k)
    bad = (abs(got - ref) > rel * mag)
    finite = (got == got) & (abs(got) != float("inf"))
    bad = bad | ~finite
    if not bool(bad.any()):
        return ""
    idx = bad.nonzero()
    r, c = (int(v[0]) for v in idx) if isinstance(idx, tuple) else (int(v) for v in idx[0])
    return f"C[{r}, {c}] = {float(got[r, c])}, expected {float(ref[r, c])} within {float(rel * mag[r, c])}"


def verdict(view_ms: list[float], contiguous_ms: list[float]) -> tuple[str, float, float, float]:
    """Whether the claim holds at one point: (word, median paired view - contiguous, low, high). HOLDS when the view
    is slower (its interval above 0), FAILS when it is faster (below 0), SAME otherwise."""
    d, lo, hi = paired_difference(view_ms, contiguous_ms)
    return ("HOLDS" if lo > 0 else "FAILS" if hi < 0 else "SAME"), d, lo, hi


def markdown(rows: list[dict]) -> str:
    lines = ["The reference chapter's claim: torch.matmul(A.t(), B) is slower than torch.matmul(A.t().contiguous(), "
             "B) because of non-contiguous access. Cold medians in ms (L2 flushed, host launch hidden), interleaved, "
             "one process; A and B n x n.", "",
             "| math | n | A.t() (view) | A.t().contiguous() then matmul | memlab.transpose then matmul | matmul "
             "alone (Aᵀ made beforehand) | torch transpose alone | memlab.transpose alone | view - contiguous "
             "(paired, 95%) | the claim |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        med = {k: quantile(sorted(v), 0.5) for k, v in r["samples"].items() if v}
        cell = lambda k: f"{med[k]:.4g}" if k in med else "-"  # noqa: E731
        word, d, lo, hi = r["verdict"]
        lines.append(f"| {r['math']} | {r['n']} | {cell('torch_matmul_at_view')} | {cell('torch_matmul_at_contiguous')}"
                     f" | {cell('memlab_transpose_matmul')} | {cell('torch_matmul_contiguous')} | "
                     f"{cell('torch_t_contiguous')} | {cell('memlab_transpose')} | {d:+.4g} [{lo:+.4g}, {hi:+.4g}] | "
                     f"{word} |")
    lines.append("")
    counts = {w: sum(r["verdict"][0] == w for r in rows) for w in ("HOLDS", "SAME", "FAILS")}
    lines.append(f"The claim holds at {counts['HOLDS']} of {len(rows)} points; the view and the contiguous copy are "
                 f"level at {counts['SAME']}; the view is faster at {counts['FAILS']}.")
    kernels = {}
    for r in rows:
        for way, names in r.get("kernels", {}).items():
            kernels.setdefault((r["math"], way), names)
    if kernels:
        lines.append("")
        lines.append("Kernels torch's profiler saw (first size):")
        for (m, way), names in kernels.items():
            lines.append(f"- {m} {CODE.get(way, way)}: {', '.join(names) if names else '(none seen)'}")
    return "\n".join(lines) + "\n"


def _kernel_names(torch, fn) -> list[str]:
    """The CUDA kernels one call of fn launches, by torch's profiler; [] where it cannot say."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
        seen = []
        for n in names:
            short = n if len(n) <= 90 else n[:87] + "..."
            if short not in seen:
                seen.append(short)
        return seen
    except Exception:  # noqa: BLE001 - the profiler is a nicety here: no names, the same timings
        return []


def parser() -> argparse.ArgumentParser:
    ap = cli.Parser(prog="layout_claim.py",
                    description="torch.matmul(A.t(), B) against torch.matmul(A.t().contiguous(), B) and "
                                "memlab.transpose then matmul, verified, cold, interleaved in one process.")
    ap.add_argument("--math", default="f32,tf32,bf16", help="f32, tf32, bf16, comma-separated (default all three)")
    ap.add_argument("--sizes", default="1024,2048,4096,8192", help="n, comma-separated (default 1024,2048,4096,8192)")
    ap.add_argument("--samples", type=int, default=30, help="cold samples of every way at every point (>= 10; "
                                                            "default 30)")
    ap.add_argument("--out", help="results file (.json)")
    ap.add_argument("--md", help="the table as Markdown, also printed")
    return ap


def main(argv=None) -> int:
    prog = "layout_claim.py"
    args = parser().parse_args(argv)
    maths = [m.strip() for m in args.math.split(",") if m.strip()]
    bad = [m for m in maths if m not in MATHS]
    if bad or not maths:
        return cli.fail(prog, f"--math: {bad[0] if bad else args.math!r} is not one of {', '.join(MATHS)}")
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        if any(s <= 0 for s in sizes):
            raise ValueError
    except ValueError:
        return cli.fail(prog, f"--sizes: {args.sizes!r} is not a list of positive integers")
    if args.samples < 10:
        return cli.fail(prog, f"--samples: at least 10 (got {args.samples})")
    if args.out and not args.out.endswith(".json"):
        return cli.fail(prog, f"--out: {args.out}: writes JSON (.json)")
    torch, missing = torch_on_gpu(prog)
    if torch is None:
        return missing
    from memlab_tools.gpu_timing import Timer
    from memlab_tools.peers import _device, probe_memlab

    memlab, _, why = probe_memlab()
    if memlab is None:
        print(f"{prog}: memlab.transpose skipped: {why}", file=sys.stderr)
    device = _device(torch, None)
    timer = Timer(torch, device["l2_bytes"], 1.0)
    out = RunFile(args.out, args, device,
                  {"matmul": {"roof": "fp32", "params": ["dtype", "n", "math"]},
                   "transpose": {"roof": "dram", "params": ["dtype", "n", "rows", "cols"]}},
                  {"cold": "memlab's cold sample (gpu_timing.py: L2 flushed, the stream held while the host enqueues), "
                           "interleaved: per point, rounds of one sample of every way in a rotating order",
                   "min_samples": args.samples, "max_samples": args.samples},
                  {"torch": f"torch {torch.__version__}",
                   "memlab": f"memlab {memlab.library_version()}" if memlab else f"skipped: {why}"})
    stop = {"signal": 0}
    signal.signal(signal.SIGINT, lambda s, _f: stop.update(signal=s))
    rows, failed = [], 0
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    for math_ in maths:
        first = True
        for n in sizes:
            if stop["signal"]:
                break
            torch.backends.cuda.matmul.allow_tf32 = math_ == "tf32"
            try:
                row, f = _point(torch, memlab, timer, math_, n, args.samples, first, out, device)
            except torch.cuda.OutOfMemoryError:
                print(f"{prog}: {math_} n={n}: out of device memory, skipped", file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            first = False
            rows.append(row)
            failed += f
            torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = tf32_before
    out.save("interrupted by SIGINT" if stop["signal"] else "complete")
    text = markdown(rows)
    print(text)
    if args.md:
        cli.write_text(args.md, text)
    if stop["signal"]:
        return 130
    return cli.VERDICT if failed else cli.OK


def _point(torch, memlab, timer, math_: str, n: int, samples: int, profile: bool, out: RunFile, device: dict):
    """One (precision, n): verify every way, time them interleaved, write the records; (row, failures)."""
    dtype = torch.bfloat16 if math_ == "bf16" else torch.float32
    g = torch.Generator(device="cuda")
    g.manual_seed(0xC1A1 + n)

    def values():  # in [-1, 1), both signs, never zero: an unwritten C cannot pass
        x = torch.rand(n, n, device="cuda", generator=g) * 2 - 1
        return torch.where(x.abs() < 2.0 ** -10, torch.full_like(x, 2.0 ** -10), x).to(dtype)

    a, b = values(), values()
    at = a.t().contiguous()
    outs = {}
    ways = {
        "torch_matmul_at_view": lambda: outs.__setitem__("torch_matmul_at_view", torch.matmul(a.t(), b)),
        "torch_matmul_at_contiguous": lambda: outs.__setitem__("torch_matmul_at_contiguous",
                                                               torch.matmul(a.t().contiguous(), b)),
        "torch_matmul_contiguous": lambda: outs.__setitem__("torch_matmul_contiguous", torch.matmul(at, b)),
    }
    if memlab is not None:
        ways["memlab_transpose_matmul"] = lambda: outs.__setitem__("memlab_transpose_matmul",
                                                                   torch.matmul(memlab.transpose(a), b))
    t_out = torch.empty(n, n, dtype=dtype, device="cuda")
    transposes = {"torch_t_contiguous": lambda: outs.__setitem__("torch_t_contiguous", a.t().contiguous())}
    if memlab is not None:
        transposes["memlab_transpose"] = lambda: memlab.transpose(a, t_out)
    # The reference: float64 products of the same (rounded) inputs, on sampled rows.
    rows_idx = torch.unique(torch.linspace(0, n - 1, min(n, 64), device="cuda").long())
    at64, b64 = at[rows_idx].double(), b.double()
    ref = at64 @ b64
    mag = at64.abs() @ b64.abs()
    problems = {}
    for name, fn in {**ways, **transposes}.items():
        fn()
        torch.cuda.synchronize()
        if name in ways:
            problems[name] = tolerance_problem(math_, n, outs[name][rows_idx].double(), ref, mag)
        else:
            got = outs["torch_t_contiguous"] if name == "torch_t_contiguous" else t_out
            problems[name] = "" if torch.equal(got.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
                                                at.view(torch.int16 if dtype == torch.bfloat16 else torch.int32)) \
                else "the transpose differs from A.t().contiguous()"
    failures = sum(bool(p) for p in problems.values())
    for name, p in problems.items():
        if p:
            print(f"layout_claim.py: {name} {math_} n={n}: verification failed: {p}", file=sys.stderr)
    live = {k: v for k, v in {**ways, **transposes}.items() if not problems[k]}
    kernels = {k: _kernel_names(torch, ways[k]) for k in ways} if profile else {}
    samples = interleaved(timer, live, samples, flush=True)
    es = 2 if dtype == torch.bfloat16 else 4
    dname = "bf16" if dtype == torch.bfloat16 else "f32"
    for name in {**ways, **transposes}:
        lib = f"memlab {memlab.library_version()}" if name.startswith("memlab") else f"torch {torch.__version__}"
        note = "; ".join(x for x in (
            CODE.get(name, ""), "TF32 tensor cores (allow_tf32 = True): not an f32 product" if math_ == "tf32" else "",
            ("kernels: " + ", ".join(kernels[name])) if kernels.get(name) else "",
            f"verification failed: {problems[name]}" if problems[name] else "") if x)
        if name in ways:
            extra = 2 * n * n * es if name in ("torch_matmul_at_contiguous", "memlab_transpose_matmul") else 0
            rec = record("matmul", name, {"dtype": dname, "n": n, "math": math_}, lib, samples.get(name, []),
                         bytes_=3 * n * n * es + extra, flops=2 * n ** 3, verified=not problems[name], note=note,
                         status="failed" if problems[name] else "ok")
            out.add(finish(rec, device, "matmul"))
        else:
            rec = record("transpose", name, {"dtype": dname, "n": 1, "rows": n, "cols": n, "math": math_}, lib,
                         samples.get(name, []), bytes_=2 * n * n * es, verified=not problems[name], note=note,
                         status="failed" if problems[name] else "ok")
            out.add(finish(rec, device, "transpose"))
    ok = "torch_matmul_at_view" in samples and "torch_matmul_at_contiguous" in samples
    word = verdict(samples["torch_matmul_at_view"], samples["torch_matmul_at_contiguous"]) if ok else \
        ("NOT MEASURED", math.nan, math.nan, math.nan)
    return {"math": math_, "n": n, "samples": samples, "verdict": word, "kernels": kernels}, failures
