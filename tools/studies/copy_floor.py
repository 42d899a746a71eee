"""A study (not part of the pip package): the copy at small sizes, on the launch floor. In one process, at every size,
memlab.copy_, torch's copy_ and cudaMemcpyAsync (what torch's copy_ calls for a contiguous copy within one device)
are timed cold, interleaved sample by sample, beside two empty kernels: one CTA (the launch floor), and a CTA of 256
threads per 4 KiB (the floor of memlab's launch shape wherever its plan moves one 16-byte vector a thread: up to one
wave of the GPU's threads, and past four). A second load of libmemlab (the same file copied, so its kernels sit at
other addresses) is raced too: where it differs from the first as much as from torch, the difference is where the
code landed, not what it does.

  python3 tools/studies/copy_floor.py                        # f16, 2^12..2^24, 60 samples each, cold and warm
  python3 tools/studies/copy_floor.py --sizes 2^16,2^22 --samples 200 --out floor.json --md floor.md

Every contender copies the same source into the same destination: a small copy's time moves by several ticks with
where its buffers sit in DRAM, and with buffers of its own each contender drew its own placement (two loads of the
same library read 4.160 and 3.968 us at 2^17 f16 that way). Every contender is verified first (never-zero random
bytes, the destination poisoned before each). A sample is memlab's
cold sample (gpu_timing.py): the L2 flushed, torch.cuda._sleep holding the stream while the host enqueues the
start event, one launch and the stop event; `--warm` adds the same samples without the flush. The samples of one
size are taken in rounds, each round one sample of every contender in a rotating order, so a drift of the GPU
or the process reaches all of them alike; memlab's and torch's samples of a round are paired, and the verdict
is the median of the paired differences with its 95% interval (a sign test's order statistics): SAME when the
interval holds 0. The event timer's resolution is shown twice: as CUDA documents it for cudaEventElapsedTime
(about 0.5 us) and as measured here (the smallest step between two distinct samples: the tick).

Writes memlab.results/1 records (lab "copy" for the copies, lab "launch" for the empty kernels, which nothing is
raced against), so `memlab-compare floor.json --race` holds memlab against torch and cudart too, and prints the
table below (also to --md).
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable


# memlab_tools from this checkout when it is not installed (pip install ./tools/python installs it).
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from memlab_tools import cli  # noqa: E402
from memlab_tools.gpu_timing import (CUDA_DOCUMENTED_RESOLUTION_US, Verdict, interleaved, judge,  # noqa: E402,F401
                                     paired_difference, tick_ms, torch_on_gpu)
from memlab_tools.runfile import RunFile, finish, record  # noqa: E402
from memlab_tools.sizes import parse_sizes  # noqa: E402
from memlab_tools.stats import quantile  # noqa: E402

ELEM = {"u8": 1, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
MEMLAB_THREADS = 256                 # include/memlab/copy_plan.hpp, copy_tuning::threads


# ---- the analysis (no GPU) -------------------------------------------------------------------------------------

def _pow2(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def markdown(rows: list[dict], tick: float, dtype: str, warm_rows: list[dict] | None = None) -> str:
    """The table: per size, each contender's cold median, the floors, memlab against torch."""
    lines = [f"Small copies on the launch floor: {dtype}, aligned, cold (L2 flushed, host launch hidden), medians "
             "in us of interleaved samples, one process.", ""]

    def table(rs: list[dict], title: str):
        lines.append(title)
        lines.append("")
        lines.append("| n | empty kernel (1 CTA) | empty kernel (a CTA per 4 KiB) | cudaMemcpyAsync | torch copy_ | "
                     "memlab.copy_ | memlab (2nd load) | above the floor: torch / memlab | memlab vs torch: speed | "
                     "memlab - torch (paired, 95%) | verdict |")
        lines.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in rs:
            med = {k: (quantile(sorted(v), 0.5) * 1e3 if v else float("nan")) for k, v in r["samples"].items()}
            v = r["verdict"]
            cell = lambda k: f"{med[k]:.3f}" if k in med and med[k] == med[k] else "-"  # noqa: E731
            floor = med.get("empty_kernel", float("nan"))
            above = (f"{med['torch_copy_'] - floor:.3f} / {med['memlab_copy_'] - floor:.3f}" if floor == floor
                     else "-")
            inside = ("inside CUDA's 0.5 us" if v.inside_documented else "beyond 0.5 us") + \
                (f", {v.ticks:.1f} ticks" if tick > 0 else "")
            lines.append(f"| {_pow2(r['n'])} | {cell('empty_kernel')} | {cell('empty_kernel_memlab_grid')} "
                         f"({r['grid']} CTAs) | {cell('cuda_memcpy_async')} | {cell('torch_copy_')} | "
                         f"{cell('memlab_copy_')} | {cell('memlab_copy_bytes_second_load')} | {above} | "
                         f"{v.speed:.3f} | "
                         f"{v.diff_ms * 1e3:+.3f} [{v.low_ms * 1e3:+.3f}, {v.high_ms * 1e3:+.3f}] | "
                         f"{v.word} ({inside}) |")
        lines.append("")

    table(rows, "Cold (L2 flushed before every sample):")
    if warm_rows:
        table(warm_rows, "Warm (the same samples without the flush: the data, the code and the parameters in L2):")
    lines.append(f"Timer: CUDA documents about {CUDA_DOCUMENTED_RESOLUTION_US} us for cudaEventElapsedTime; the "
                 f"smallest step between two samples here was {tick * 1e3 * 1e3:.0f} ns (one tick).")
    n_slower = sum(r["verdict"].word == "SLOWER" for r in rows)
    under = [r for r in rows if r["verdict"].speed < 0.99]
    big = [r for r in rows if r["n"] >= (1 << 23) and r["verdict"].speed < 1.0]
    lines.append(f"memlab.copy_ against torch's copy_ (cold): {len(rows)} sizes, {n_slower} measurably slower "
                 f"(the paired interval above 0); speed below 0.99 at {len(under)} "
                 + (f"({', '.join(_pow2(r['n']) for r in under)})" if under else "")
                 + f"; below 1.00 from 2^23 at {len(big)}"
                 + (f" ({', '.join(_pow2(r['n']) for r in big)})" if big else "") + ".")
    return "\n".join(lines) + "\n"


# ---- the contenders (GPU) ----------------------------------------------------------------------------------------

@dataclass
class Contender:
    variant: str
    lab: str
    library: str
    launch: Callable[[], None]
    verify: Callable[[], str]  # "" when right
    note: str = ""
    policy: dict = field(default_factory=lambda: {"threads": 0, "items_per_thread": 0, "vec_bytes": 0, "stages": 0,
                                                   "grid": 0})


EMPTY_PTX = b"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry memlab_empty_kernel()
{
    ret;
}
"""


class Driver:
    """The CUDA driver through ctypes: an empty kernel (PTX, JIT-compiled by the driver for this GPU) launched
    on a given grid, and cuMemcpyDtoDAsync where no cudart library can be found."""

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        ctx = ctypes.c_void_p()
        self._check(self.cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise RuntimeError("no current CUDA context (torch should have made its primary context current)")
        module, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(EMPTY_PTX)), "cuModuleLoadData")
        self._check(self.cu.cuModuleGetFunction(ctypes.byref(fn), module, b"memlab_empty_kernel"),
                    "cuModuleGetFunction")
        self.fn = fn
        launch = self.cu.cuLaunchKernel
        launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
                                                                     ctypes.c_void_p]
        self._launch = launch

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed: CUresult {status}")

    def empty(self, grid: int, threads: int, stream: int) -> None:
        self._check(self._launch(self.fn, grid, 1, 1, threads, 1, 1, 0, stream, None, None), "cuLaunchKernel")


def _cudart():
    """(cudaMemcpyAsync, its library's path): the cudart torch loaded (found in the process's maps), else one
    the loader finds; (None, why) where there is none."""
    paths = []
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "libcudart.so" in line.split()[-1]})
    except OSError:
        pass
    for name in paths + ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        fn = lib.cudaMemcpyAsync
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        return fn, name
    return None, "no libcudart found (neither in the process nor by the loader)"


def contenders(torch, memlab, driver, memcpy, second, dtype: str, n: int,
               seed: int) -> tuple[list[Contender], int, Callable[[], None]]:
    """Every contender at one size, all on the same source and destination buffers (so that where the buffers sit in
    DRAM, which moves a small copy's time by several ticks, is the same for all of them), the one-vector grid there,
    and the function that poisons the destination (zero: the source has no zero byte) before each is verified."""
    from memlab_tools.peers import _first_difference, _random_bytes, _torch_dtype

    es = ELEM[dtype]
    nbytes = n * es
    src = _random_bytes(torch, nbytes, seed).view(_torch_dtype(torch, dtype))
    want = src.view(torch.uint8)
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    dst = torch.zeros(n, dtype=src.dtype, device="cuda")
    check = lambda: _first_difference(dst.view(torch.uint8), want, es)  # noqa: E731

    out = [Contender("torch_copy_", "copy", f"torch {torch.__version__}", lambda: dst.copy_(src), check)]
    if memcpy is not None:
        fn, where = memcpy
        out.append(Contender("cuda_memcpy_async", "copy", f"cudart ({os.path.basename(where)})",
                             lambda: fn(dst.data_ptr(), src.data_ptr(), nbytes, 3, stream()), check,
                             note="cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, torch's stream) through "
                                  "ctypes"))
    if memlab is not None:
        out.append(Contender("memlab_copy_", "copy", f"memlab {memlab.library_version()}",
                             lambda: memlab.copy_(dst, src), check))
    if second is not None:
        out.append(Contender("memlab_copy_bytes_second_load", "copy", f"memlab {memlab.library_version()}",
                             lambda: second(dst.data_ptr(), src.data_ptr(), nbytes, stream()), check,
                             note="memlab_copy_bytes of a second load of libmemlab (the same file, copied): the same "
                                  "kernels at other addresses"))
    # A CTA of 256 per 4 KiB: memlab's grid where its plan moves one 16-byte vector a thread (up to one wave of the
    # GPU's threads, and past four; between, one wave of 2 or 4 vectors a thread: copy_plan.hpp,
    # copy_vectors_per_thread).
    grid = max(1, math.ceil(nbytes // 16 / MEMLAB_THREADS))
    if driver is not None:
        out.append(Contender("empty_kernel", "launch", "cuda driver", lambda: driver.empty(1, 32, stream()),
                             lambda: "", note="an empty kernel (PTX `ret`), 1 CTA of 32 threads: the launch floor",
                             policy={"threads": 32, "items_per_thread": 0, "vec_bytes": 0, "stages": 0, "grid": 1}))
        out.append(Contender("empty_kernel_memlab_grid", "launch", "cuda driver",
                             lambda: driver.empty(grid, MEMLAB_THREADS, stream()), lambda: "",
                             note=f"the empty kernel on a CTA per 4 KiB ({grid} CTAs of {MEMLAB_THREADS}): memlab's "
                                  "one-vector grid",
                             policy={"threads": MEMLAB_THREADS, "items_per_thread": 0, "vec_bytes": 0, "stages": 0,
                                     "grid": grid}))
    return out, grid, dst.zero_


def _second_load(memlab):
    """memlab_copy_bytes of a second load of libmemlab: the file copied to a temporary folder and loaded again, so
    the loader, its CUDA runtime and the driver place its kernels anew."""
    folder = tempfile.mkdtemp(prefix="memlab-second-load-")
    path = os.path.join(folder, "libmemlab_second.so")
    shutil.copyfile(str(memlab.library_path()), path)
    lib = ctypes.CDLL(path)
    fn = lib.memlab_copy_bytes
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]

    def copy(dst, src, nbytes, stream):
        status = fn(dst, src, nbytes, stream)
        if status:
            raise RuntimeError(f"memlab_copy_bytes (second load) returned {status}")

    return copy


def host_us(torch, fn: Callable[[], None], calls: int = 50) -> float:
    """Median host time of one call in us, enqueued behind a held stream (so the GPU never waits on the host and
    the host never waits on a full queue)."""
    torch.cuda._sleep(int(5e7))  # tens of ms on any GPU: longer than `calls` launches take to enqueue
    t = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return quantile(sorted(t), 0.5)


# ---- running ---------------------------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    ap = cli.Parser(prog="copy_floor.py",
                    description="memlab.copy_ against torch's copy_ and cudaMemcpyAsync at small sizes, cold, "
                                "interleaved in one process, beside an empty kernel's launch floor.")
    ap.add_argument("--dtype", default="f16", help="element type (default f16)")
    ap.add_argument("--sizes", default="2^12..2^24", help="element counts, memlab's --sizes grammar (default "
                                                          "2^12..2^24)")
    ap.add_argument("--samples", type=int, default=60, help="cold samples of every contender at every size (>= 30; "
                                                            "default 60)")
    ap.add_argument("--warm", action="store_true", help="also the same samples without the L2 flush")
    ap.add_argument("--no-second-load", action="store_true", help="leave out the second load of libmemlab")
    ap.add_argument("--out", help="results file (.json)")
    ap.add_argument("--md", help="the table as Markdown, also printed")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    prog = "copy_floor.py"
    if args.dtype not in ELEM:
        return cli.fail(prog, f"--dtype: {args.dtype!r} is not one of {', '.join(ELEM)}")
    if args.samples < 30:
        return cli.fail(prog, f"--samples: at least 30 (got {args.samples})")
    try:
        sizes = [s.elements(ELEM[args.dtype]) for s in parse_sizes(args.sizes)]
    except ValueError as e:
        return cli.fail(prog, str(e))
    if args.out and not args.out.endswith(".json"):
        return cli.fail(prog, f"--out: {args.out}: writes JSON (.json)")
    torch, missing = torch_on_gpu(prog)
    if torch is None:
        return missing
    from memlab_tools.gpu_timing import Timer
    from memlab_tools.peers import _device, probe_memlab

    torch.zeros(1, device="cuda")  # torch's primary context, current on this thread (the driver's calls use it)
    memlab, _, why = probe_memlab()
    if memlab is None:
        print(f"{prog}: memlab.copy_ skipped: {why}", file=sys.stderr)
    fn, where = _cudart()
    memcpy = (fn, where) if fn is not None else None
    if memcpy is None:
        print(f"{prog}: cudaMemcpyAsync skipped: {where}", file=sys.stderr)
    try:
        driver = Driver()
    except (OSError, RuntimeError, AttributeError) as e:
        driver = None
        print(f"{prog}: the empty kernels skipped: {e}", file=sys.stderr)
    second = None
    if memlab is not None and not args.no_second_load:
        try:
            second = _second_load(memlab)
        except (OSError, RuntimeError, AttributeError) as e:
            print(f"{prog}: the second load of libmemlab skipped: {e}", file=sys.stderr)
    device = _device(torch, None)
    timer = Timer(torch, device["l2_bytes"], 1.0)
    params = ["dtype", "n", "l2_flush"]
    out = RunFile(args.out, args, device, {"copy": {"roof": "dram", "params": params},
                                           "launch": {"roof": "", "params": params}},
                  {"cold": "memlab's cold sample (gpu_timing.py: L2 flushed, the stream held while the host enqueues), "
                           "interleaved: per size, rounds of one sample of every contender in a rotating order; each "
                           "record's cold summary is its --samples samples (no stopping rule)",
                   "warm": "with --warm, the same samples without the L2 flush: records with l2_flush=0",
                   "min_samples": args.samples, "max_samples": args.samples})
    stop = {"signal": 0}
    signal.signal(signal.SIGINT, lambda s, _f: stop.update(signal=s))
    modes = [1, 0] if args.warm else [1]
    rows = {1: [], 0: []}
    failed = 0
    all_samples: list[float] = []
    for n in sizes:
        if stop["signal"]:
            break
        cs, grid, poison = contenders(torch, memlab, driver, memcpy, second, args.dtype, n, seed=0x5EED + n)
        problems = {}
        for c in cs:
            poison()
            c.launch()
            torch.cuda.synchronize()
            problems[c.variant] = c.verify()
            if problems[c.variant]:
                failed += 1
                print(f"{prog}: {c.variant} at n={n}: verification failed: {problems[c.variant]}", file=sys.stderr)
        live = [c for c in cs if not problems[c.variant]]
        host = {c.variant: host_us(torch, c.launch) for c in live}
        for flush in modes:
            samples = interleaved(timer, {c.variant: c.launch for c in live}, args.samples, bool(flush))
            all_samples += [v for s in samples.values() for v in s]
            rows[flush].append({"n": n, "grid": grid, "samples": samples, "host_us": host})
            for c in cs:
                note = "; ".join(x for x in (c.note, f"host {host[c.variant]:.2f} us per call (median, enqueue only)"
                                             if c.variant in host else "",
                                             f"verification failed: {problems[c.variant]}" if problems[c.variant]
                                             else "") if x)
                rec = record(c.lab, c.variant, {"dtype": args.dtype, "n": n, "l2_flush": flush}, c.library,
                             samples.get(c.variant, []), bytes_=2 * n * ELEM[args.dtype] if c.lab == "copy" else 0,
                             verified=c.lab == "copy" and not problems[c.variant], note=note, policy=c.policy,
                             status="failed" if problems[c.variant] else "ok")
                out.add(finish(rec, device, "copy"))
        del cs
        torch.cuda.empty_cache()
    tick = tick_ms(all_samples)
    for flush in modes:
        for row in rows[flush]:
            s = row["samples"]
            row["verdict"] = judge(s["memlab_copy_"], s["torch_copy_"], tick) if "memlab_copy_" in s and \
                "torch_copy_" in s else None
    cold = [r for r in rows[1] if r["verdict"] is not None]
    warm = [r for r in rows[0] if r["verdict"] is not None]
    out.doc["timing"]["measured_tick_ms"] = tick
    out.doc["timing"]["documented_resolution_ms"] = CUDA_DOCUMENTED_RESOLUTION_US / 1e3
    out.save("interrupted by SIGINT" if stop["signal"] else "complete")
    text = markdown(cold, tick, args.dtype, warm) if cold else "memlab.copy_ or torch's copy_ was not measured\n"
    text += host_markdown(rows[1])
    print(text)
    if args.md:
        cli.write_text(args.md, text)
    if stop["signal"]:
        return 130
    return cli.VERDICT if failed else cli.OK


def host_markdown(rows: list[dict]) -> str:
    if not rows:
        return ""
    names = sorted({k for r in rows for k in r["host_us"]})
    lines = ["", "Host time per call (us, median of 50 enqueues behind a held stream; not in the cold times above):",
             "", "| n | " + " | ".join(names) + " |", "| ---: | " + " | ".join("---:" for _ in names) + " |"]
    for r in rows:
        lines.append(f"| {_pow2(r['n'])} | " + " | ".join(f"{r['host_us'].get(k, float('nan')):.2f}" for k in names)
                     + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(cli.run(main))
