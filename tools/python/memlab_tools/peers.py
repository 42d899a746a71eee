"""memlab-peers: what a user would call instead of memlab's kernels, in PyTorch and Triton, verified and
timed with memlab's definitions (gpu_timing.py), written as memlab.results/1 records marked as peers.
Beside them, in the same process and timed the same way, memlab's own library from Python
(`import memlab`: memlab_copy_, memlab_transpose; library "memlab"), so that a race with the peers is
decided in one process (memlab-compare --race). Where `import memlab` or libmemlab is missing, those
peers are skipped with one line saying why, and the others run.

  memlab-peers copy --dtype f16 --sizes 2^12..2^31 --out peers.json
  memlab-peers copy --dtype f16 --sizes 2^28 --src-offset 0,2 --triton-block 1024,4096
  memlab-peers transpose --dtype f32 --shape 16384x16384,10000x7000
  memlab-peers transpose --shape 12289x3001:f32,8191x8193:f16,16411x8191:u8
  memlab-peers gather --sizes 2^24 --table-bytes 200MiB
  memlab-peers matmul --shape 4096x4096x4096

Every case is verified first (inputs: never-zero random bytes, or values in [-1, 1) for matmul;
the output poisoned), against a reference on the CPU (exact for data movement; for matmul a
float64 product within a bound derived from k and the precision). Results are written after every
case; Ctrl-C stops after the current case and keeps them (exit 130).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from . import __version__, cli, table
from .results import SCHEMA, ResultsError, load, write_atomically
from .sizes import parse_counts, parse_sizes

ELEM = table.elem_bytes()  # bytes per element of each dtype, from memlab's table


# ---- the cases -----------------------------------------------------------------------------------------

@dataclass
class Case:
    """One peer at one point: what to launch, how to check it, what it moves and computes."""

    launch: Callable[[], None]
    verify: Callable[[], str]  # "" when the output equals the reference, else what differs first
    bytes: int
    flops: int = 0
    note: str = ""
    policy: dict = field(default_factory=lambda: {"threads": 0, "items_per_thread": 0, "vec_bytes": 0,
                                                   "stages": 0, "grid": 0})


@dataclass
class Peer:
    lab: str
    variant: str
    library: str  # "torch", "triton", or "memlab": memlab's own library through `import memlab`, the contender
                  # timed in the peers' process (not a library a user would pick instead of memlab)
    make: Callable  # (ctx, params) -> Case
    dtypes: tuple = ("u8", "f16", "bf16", "f32", "f64")
    roof: str | None = None  # the roof it is bound by when not its lab's (TF32 tensor cores); None: the lab's

    @property
    def roof_name(self) -> str:
        return self.roof or table.roof_of(self.lab)


def _torch_dtype(torch, name):
    return {"u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64}[name]


def _random_bytes(torch, nbytes: int, seed: int):
    """Never-zero random bytes on the GPU (a zero could hide an unwritten output)."""
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return torch.randint(1, 256, (max(nbytes, 0),), dtype=torch.uint8, device="cuda", generator=g)


def _first_difference(got_bytes, want_bytes, elem: int) -> str:
    """Where two byte tensors differ first, in elements; "" when equal."""
    if got_bytes.numel() != want_bytes.numel():
        return f"{got_bytes.numel()} bytes written, {want_bytes.numel()} expected"
    diff = (got_bytes != want_bytes).nonzero()
    if diff.numel() == 0:
        return ""
    b = int(diff[0])
    return (f"element {b // elem} (byte {b % elem}) is 0x{int(got_bytes[b]):02x}, expected 0x{int(want_bytes[b]):02x}"
            + (": never written" if int(got_bytes[b]) == 0 else ""))


# copy -------------------------------------------------------------------------------------------------------

def _copy_buffers(ctx, p):
    torch = ctx.torch
    es, n = ELEM[p["dtype"]], p["n"]
    src_raw = _random_bytes(torch, p["src_offset"] + n * es, ctx.seed())
    dst_raw = torch.zeros(p["dst_offset"] + n * es, dtype=torch.uint8, device="cuda")
    dt = _torch_dtype(torch, p["dtype"])
    src = src_raw[p["src_offset"]:].view(dt)
    dst = dst_raw[p["dst_offset"]:].view(dt)
    want = src_raw[p["src_offset"]:]
    return src, dst, dst_raw, want, es


def _copy_check(dst_raw, offset, want, es):
    head = dst_raw[:offset]
    if head.numel() and bool((head != 0).any()):
        return "a byte before the destination was written"
    return _first_difference(dst_raw[offset:], want, es)


def make_torch_copy(ctx, p):
    src, dst, dst_raw, want, es = _copy_buffers(ctx, p)
    return Case(lambda: dst.copy_(src), lambda: _copy_check(dst_raw, p["dst_offset"], want, es), 2 * p["n"] * es)


def make_torch_clone(ctx, p):
    src, _, _, want, es = _copy_buffers(ctx, p)
    out = {}

    def launch():
        out["t"] = src.clone()

    def verify():
        return _first_difference(out["t"].view(ctx.torch.uint8).reshape(-1), want, es)

    return Case(launch, verify, 2 * p["n"] * es, note="clone allocates its output (PyTorch's caching allocator)")


def make_triton_copy(ctx, p):
    from .triton_kernels import copy as triton_copy

    src, dst, dst_raw, want, es = _copy_buffers(ctx, p)
    block = p["block"]
    grid = (max(1, math.ceil(p["n"] / block)),)
    fn = lambda: triton_copy[grid](src, dst, p["n"], BLOCK=block)  # noqa: E731
    policy = {"threads": 128, "items_per_thread": block // 128, "vec_bytes": 0, "stages": 0, "grid": grid[0]}
    return Case(fn, lambda: _copy_check(dst_raw, p["dst_offset"], want, es), 2 * p["n"] * es, policy=policy)


def make_memlab_copy(ctx, p):
    """memlab.copy_ on the same tensors as torch's copy_ (dtype views of byte buffers, so an offset source is a
    slice at a byte offset), on torch's current stream."""
    src, dst, dst_raw, want, es = _copy_buffers(ctx, p)
    return Case(lambda: ctx.memlab.copy_(dst, src), lambda: _copy_check(dst_raw, p["dst_offset"], want, es),
                2 * p["n"] * es)


# transpose --------------------------------------------------------------------------------------------------

def _transpose_buffers(ctx, p):
    torch = ctx.torch
    rows, cols, es = p["rows"], p["cols"], ELEM[p["dtype"]]
    x = _random_bytes(torch, rows * cols * es, ctx.seed()).view(_torch_dtype(torch, p["dtype"])).reshape(rows, cols)
    int_type = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[es]
    return x, int_type, es


def _transpose_check(torch, x, out, int_type, es):
    want = x.view(int_type).cpu().numpy().T  # the CPU reference: element (c, r) = input (r, c)
    got = out.view(int_type).cpu().numpy()
    if got.shape != want.shape:
        return f"output shape {got.shape}, expected {want.shape}"
    import numpy as np

    bad = np.argwhere(got != want)
    if bad.size == 0:
        return ""
    r, c = bad[0]
    return f"out[{r}, {c}] = {got[r, c]:#x}, expected input[{c}, {r}] = {want[r, c]:#x}"


def make_torch_transpose(ctx, p):
    torch = ctx.torch
    x, int_type, es = _transpose_buffers(ctx, p)
    out = {}

    def launch():
        out["t"] = x.t().contiguous()

    return Case(launch, lambda: _transpose_check(torch, x, out["t"], int_type, es), 2 * x.numel() * es)


def make_triton_transpose(ctx, p):
    from .triton_kernels import transpose as triton_transpose

    torch = ctx.torch
    x, int_type, es = _transpose_buffers(ctx, p)
    rows, cols = p["rows"], p["cols"]
    y = torch.zeros(cols, rows, dtype=x.dtype, device="cuda")
    bm = bn = 64
    grid = (math.ceil(rows / bm), math.ceil(cols / bn))
    fn = lambda: triton_transpose[grid](x, y, rows, cols, BM=bm, BN=bn)  # noqa: E731
    policy = {"threads": 128, "items_per_thread": bm * bn // 128, "vec_bytes": 0, "stages": 0, "grid": grid[0] * grid[1]}
    return Case(fn, lambda: _transpose_check(torch, x, y, int_type, es), 2 * x.numel() * es, policy=policy)


def make_memlab_transpose(ctx, p):
    """memlab.transpose(x, out) into a preallocated out, as the Triton peer writes into one; the note names the
    path memlab::transpose takes for these pointers and this shape."""
    torch, memlab = ctx.torch, ctx.memlab
    x, int_type, es = _transpose_buffers(ctx, p)
    rows, cols = p["rows"], p["cols"]
    y = torch.zeros(cols, rows, dtype=x.dtype, device="cuda")
    path = memlab.transpose_path(y.data_ptr(), x.data_ptr(), 1, rows, cols, es)
    return Case(lambda: memlab.transpose(x, y), lambda: _transpose_check(torch, x, y, int_type, es),
                2 * x.numel() * es, note=f"memlab::transpose path {path}")


# gather -----------------------------------------------------------------------------------------------------

MASK64 = (1 << 64) - 1


def _mix64(x):
    """splitmix64's finaliser (src/harness/fill.hpp), on numpy uint64 arrays."""
    import numpy as np

    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(MASK64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def gather_indices(n: int, table_elements: int):
    """The gather lab's random draw (src/labs/gather/gather.hpp: index_seed, random_index), so the
    peers gather exactly the elements memlab's variants gather."""
    import numpy as np

    seed = _mix64(np.uint64(0x6761746865720000) ^ _mix64(np.uint64(n)) ^ _mix64(~np.uint64(table_elements)))
    i = np.arange(n, dtype=np.uint64)
    r = _mix64(seed ^ _mix64(i)) & np.uint64(0xFFFFFFFF)
    with np.errstate(over="ignore"):
        return ((r * np.uint64(table_elements)) >> np.uint64(32)).astype(np.uint32)


def _gather_case(ctx, p, op: str, sorted_indices: bool):
    import numpy as np

    torch = ctx.torch
    es = ELEM[p["dtype"]]
    elements = p["table_bytes"] // es
    idx_np = gather_indices(p["n"], elements)
    if sorted_indices:
        idx_np = np.sort(idx_np)
    distinct = int(np.unique(idx_np).size)
    table = _random_bytes(torch, elements * es, ctx.seed()).view(_torch_dtype(torch, p["dtype"]))
    index_type = torch.int32 if op == "index_select" else torch.int64  # take wants int64 indices
    idx = torch.from_numpy(idx_np.astype(np.int64)).to("cuda", dtype=index_type)
    out = {}

    def launch():
        out["t"] = table.index_select(0, idx) if op == "index_select" else table.take(idx)

    def verify():
        int_type = {4: np.int32, 8: np.int64}[es]
        want = table.cpu().numpy().view(int_type)[idx_np]  # the CPU reference: out[i] = table[idx[i]]
        got = out["t"].cpu().numpy().view(int_type)
        bad = np.flatnonzero(got != want)
        return "" if bad.size == 0 else f"out[{bad[0]}] = {got[bad[0]]:#x}, expected table[{idx_np[bad[0]]}]"

    # The job's bytes, as the gather lab counts them (4-byte indices): take's API wants int64 indices,
    # and the 4 more bytes it reads per lookup are its cost, not the job's. So GB/s ranks as time does.
    note = "" if op == "index_select" else "take reads int64 indices: 4 bytes per lookup more than counted"
    return Case(launch, verify, distinct * es + 4 * p["n"] + p["n"] * es, note=note)


# matmul -----------------------------------------------------------------------------------------------------

def _matmul_case(ctx, p, tf32: bool):
    torch = ctx.torch
    n = p["n"]
    m, k = p["m"] or n, p["k"] or n  # the matmul lab's convention: 0 = the same as n
    g = torch.Generator(device="cuda")
    g.manual_seed(ctx.seed())
    def values(rows, cols):  # in [-1, 1), both signs, never zero: an unwritten C cannot pass
        x = torch.rand(rows, cols, device="cuda", generator=g) * 2 - 1
        return torch.where(x.abs() < 2.0 ** -10, torch.full_like(x, 2.0 ** -10), x)

    a, b = values(m, k), values(k, n)
    out = {}

    def launch():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        out["t"] = torch.matmul(a, b)

    def verify():
        # Sampled rows against float64, within the matmul lab's bounds: for f32, gamma_k sum|a b|, any
        # summation order (u = 2^-24, gamma_j = j u / (1 - j u)); for TF32, each input also loses up
        # to 2^-10 relative when rounded to 10 mantissa bits (either rounding mode), so
        # ((1 + 2^-10)^2 (1 + gamma_2k) - 1) sum|a b|.
        rows = torch.unique(torch.linspace(0, m - 1, min(m, 64), device="cuda").long())
        ref = (a[rows].double() @ b.double())
        mag = a[rows].double().abs() @ b.double().abs()
        u = 2.0 ** -24
        gamma = lambda j: j * u / (1 - j * u)  # noqa: E731
        rel = (1 + 2.0 ** -10) ** 2 * (1 + gamma(2 * k)) - 1 if tf32 else gamma(k)
        got = out["t"][rows].double()
        bad = ((got - ref).abs() > rel * mag) | ~torch.isfinite(got)
        if not bool(bad.any()):
            return ""
        r, c = (int(v) for v in bad.nonzero()[0])
        return f"C[{int(rows[r])}, {c}] = {float(got[r, c])}, expected {float(ref[r, c])} within {float(rel * mag[r, c])}"

    es = 4
    note = "TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32 = True): not an f32 product" if tf32 else ""
    return Case(launch, verify, (m * k + k * n + m * n) * es, flops=2 * m * n * k, note=note)


PEERS = [
    Peer("copy", "torch_copy_", "torch", make_torch_copy),
    Peer("copy", "torch_clone", "torch", make_torch_clone),
    Peer("copy", "triton_copy", "triton", make_triton_copy),
    Peer("copy", "memlab_copy_", "memlab", make_memlab_copy),
    Peer("transpose", "torch_t_contiguous", "torch", make_torch_transpose),
    Peer("transpose", "triton_transpose", "triton", make_triton_transpose),
    Peer("transpose", "memlab_transpose", "memlab", make_memlab_transpose),
    Peer("gather", "torch_index_select_random", "torch", lambda c, p: _gather_case(c, p, "index_select", False), ("f32", "f64")),
    Peer("gather", "torch_index_select_sorted", "torch", lambda c, p: _gather_case(c, p, "index_select", True), ("f32", "f64")),
    Peer("gather", "torch_take_random", "torch", lambda c, p: _gather_case(c, p, "take", False), ("f32", "f64")),
    Peer("gather", "torch_take_sorted", "torch", lambda c, p: _gather_case(c, p, "take", True), ("f32", "f64")),
    Peer("matmul", "torch_matmul", "torch", lambda c, p: _matmul_case(c, p, False), ("f32",)),
    Peer("matmul", "torch_matmul_tf32", "torch", lambda c, p: _matmul_case(c, p, True), ("f32",), roof="tf32"),
]
LABS = sorted({p.lab for p in PEERS})


# ---- planning (no GPU) ----------------------------------------------------------------------------------------

def _shapes(text: str, rank: int, flag: str, typed: bool = False) -> list[tuple]:
    """Extents joined by x, comma-separated; with `typed`, each may end in :DTYPE (8191x8193:f16), a shape
    asked for in that dtype only: (extents, dtype or None)."""
    out = []
    for item in text.split(","):
        dims, sep, dtype = item.strip().partition(":") if typed else (item, "", "")
        if sep and dtype.strip() not in ELEM:
            raise ValueError(f'{flag}: "{item}": {dtype.strip()!r} is not one of {", ".join(ELEM)}')
        parts = dims.strip().lower().split("x")
        if len(parts) != rank or not all(x.strip().isdigit() and int(x) > 0 for x in parts):
            raise ValueError(f'{flag}: "{item}" is not {rank} positive extents joined by x'
                             + (" (optionally :DTYPE)" if typed else ""))
        extents = tuple(int(x) for x in parts)
        out.append((extents, dtype.strip() or None) if typed else extents)
    return out


# The flags each lab's peers read: the lab's axes that memlab-peers offers as flags (from memlab's table), and the
# peers' own (a Triton block; matmul's MxNxK, where the lab has n and its m and k axes). A flag given to a lab that
# reads no such flag is a usage error, not ignored.
AXIS_FLAGS = ("src_offset", "dst_offset", "table_bytes", "shape")
OWN_FLAGS = {"copy": ("sizes", "triton_block"), "gather": ("sizes",), "matmul": ("shape",)}
LAB_FLAGS = {lab: tuple(dict.fromkeys([a["name"] for a in (table.lab(lab) or {}).get("axes", []) if a["name"] in AXIS_FLAGS]
                                      + list(OWN_FLAGS.get(lab, ()))))
             for lab in LABS}


def plan(args) -> list[tuple[Peer, dict]]:
    """(peer, params) for every case asked for; raises ValueError (a usage error) before any GPU work."""
    for flag in ("sizes", "src_offset", "dst_offset", "triton_block", "table_bytes", "shape"):
        if getattr(args, flag, None) is not None and flag not in LAB_FLAGS[args.lab]:
            labs = [lab for lab, flags in LAB_FLAGS.items() if flag in flags]
            raise ValueError(f"--{flag.replace('_', '-')}: {args.lab} has no such axis (it is {' and '.join(labs)}'s)")
    peers = [p for p in PEERS if p.lab == args.lab]
    if args.variant:
        names = [v for item in args.variant for v in item.split(",")]
        unknown = [v for v in names if v not in {p.variant for p in peers}]
        if unknown:
            raise ValueError(f"--variant: unknown peer {unknown[0]!r} (peers of {args.lab}: "
                             + ", ".join(p.variant for p in peers) + ")")
        peers = [p for p in peers if p.variant in names]
    dtypes = args.dtype.split(",") if args.dtype else [table.lab(args.lab)["default_dtype"]]
    for d in dtypes:
        if d not in ELEM:
            raise ValueError(f"--dtype: {d!r} is not one of {', '.join(ELEM)}")
    points: list[dict] = []
    if args.lab in ("copy", "gather"):
        sizes = parse_sizes(args.sizes or table.lab(args.lab)["default_sizes"])  # the lab's own defaults
        extra = [{}]
        if args.lab == "copy":
            so = parse_counts(args.src_offset or "0", "--src-offset")
            do = parse_counts(args.dst_offset or "0", "--dst-offset")
            extra = [{"src_offset": a, "dst_offset": b} for a in so for b in do]
        else:
            extra = [{"table_bytes": t.value} for t in parse_sizes(args.table_bytes or "200MiB", flag="--table-bytes")]
        for d in dtypes:
            for s in sizes:
                for e in extra:
                    points.append({"dtype": d, "n": s.elements(ELEM[d]), **e})
    elif args.lab == "transpose":
        # A shape with its own dtype (12289x3001:f32,8191x8193:f16) runs in that dtype only, so that the
        # acceptance shapes of several dtypes are one process; the others in every --dtype.
        shapes = _shapes(args.shape or table.axis("transpose", "shape")["defaults"], 2, "--shape", typed=True)
        if args.dtype and all(own for _, own in shapes):
            raise ValueError("--dtype: every --shape names its own dtype (ROWSxCOLS:DTYPE), so --dtype would be ignored")
        for d in dtypes:
            for (r, c), own in shapes:
                if own is None:
                    points.append({"dtype": d, "n": 1, "rows": r, "cols": c})  # the lab's n: one matrix
        for (r, c), own in shapes:
            if own is not None:
                points.append({"dtype": own, "n": 1, "rows": r, "cols": c})
    else:  # matmul
        for d in dtypes:
            for m, n, k in _shapes(args.shape or "4096x4096x4096", 3, "--shape"):
                # The matmul lab's params: n the size, m and k axes where 0 means "the same as n".
                points.append({"dtype": d, "n": n, "m": 0 if m == n else m, "k": 0 if k == n else k})
    blocks = parse_counts(args.triton_block or "1024", "--triton-block")
    cases = []
    for pt in points:
        for peer in peers:
            if pt["dtype"] not in peer.dtypes:
                continue
            for b in blocks if peer.variant == "triton_copy" else [None]:
                cases.append((peer, dict(pt, block=b) if b is not None else dict(pt)))
    if not cases:
        raise ValueError("nothing to run: no peer of this lab takes the dtypes asked for")
    if len(cases) > 20000:
        raise ValueError(f"the sweep has {len(cases)} cases, more than 20000: narrow --sizes or an axis")
    return cases


# ---- the libraries -------------------------------------------------------------------------------------------

def probe_memlab() -> tuple[object, str, str]:
    """(the memlab module, "memlab <libmemlab's version>", libmemlab's path) where memlab's own library can run
    here; (None, "", why not, in one line) where it cannot: then its peers are skipped and the others run."""
    try:
        import memlab
    except ImportError as e:
        return None, "", (f"import memlab failed ({e}): pip install ./python, or PYTHONPATH=python with libmemlab "
                          "built (MEMLAB_LIBRARY=build/default/lib/libmemlab.so)")
    try:
        version, path = memlab.library_version(), memlab.library_path()
        if memlab.device_count() == 0:
            return None, "", f"libmemlab ({path}) sees no CUDA device (its CUDA runtime may need a newer driver)"
    except Exception as e:  # noqa: BLE001 - memlab.Error (no libmemlab, another ABI) or the loader's: one line
        return None, "", " ".join(f"{type(e).__name__}: {e}".split())
    return memlab, f"memlab {version}", str(path)


def skip_reason(peer: Peer, params: dict, missing: dict) -> str:
    """Why a case is not run ("" when it is): its library is missing here (`missing`: library -> why), or a copy's
    offsets are not whole elements (the peers take dtype views of byte buffers, which torch refuses there)."""
    if peer.library in missing:
        return missing[peer.library]
    es = ELEM[params["dtype"]]
    if peer.lab == "copy" and (params["src_offset"] % es or params["dst_offset"] % es):
        return "offsets must be whole elements"
    return ""


def missing_lines(cases, missing: dict) -> list[str]:
    """One line per library whose planned peers are skipped, naming them and why."""
    lines = []
    for lib, why in missing.items():
        names = sorted({peer.variant for peer, _ in cases if peer.library == lib})
        if names:
            whose = "memlab's own library" if lib == "memlab" else lib
            lines.append(f"memlab-peers: {', '.join(names)} ({whose}) skipped: {why}")
    return lines


# ---- running ------------------------------------------------------------------------------------------------

class Context:
    def __init__(self, torch, memlab=None):
        self.torch = torch
        self.memlab = memlab
        self.counter = int(time.time_ns()) & 0xFFFFFFFF

    def seed(self) -> int:
        self.counter += 1
        return self.counter


def _device(torch, like: dict | None) -> dict:
    props = torch.cuda.get_device_properties(0)
    d = {"name": props.name, "cc": f"{props.major}.{props.minor}", "sm_count": props.multi_processor_count,
         "l2_bytes": int(getattr(props, "L2_cache_size", 0)), "mem_clock_khz": 0, "bus_width_bits": 0,
         "peak_gbps": 0.0, "ordinal": torch.cuda.current_device(), "global_mem_bytes": int(props.total_memory),
         "measured_peak_gbps": 0.0}
    clock = getattr(props, "memory_clock_rate", 0)
    bus = getattr(props, "memory_bus_width", 0)
    if clock and bus:
        d.update(mem_clock_khz=int(clock), bus_width_bits=int(bus), peak_gbps=2 * clock * 1e3 * bus / 8 / 1e9)
    if like:  # the same machine's memlab run: its peaks and ceiling, so percentages compare
        for key in ("mem_clock_khz", "bus_width_bits", "peak_gbps", "measured_peak_gbps", "sm_default_clock_khz"):
            if key in like:
                d[key] = like[key]
    return d


def _record(peer: Peer, params: dict, case: Case | None, library_version: str) -> dict:
    return {"lab": peer.lab, "variant": peer.variant, "params": params,
            "policy": case.policy if case else {"threads": 0, "items_per_thread": 0, "vec_bytes": 0, "stages": 0, "grid": 0},
            "bytes": case.bytes if case else 0, "flops": case.flops if case else 0,
            "peer": True, "library": library_version}


def derive(rec: dict, device: dict) -> None:
    """The derived fields, as the C++ derive() computes them."""
    def per_s(amount, s):
        return amount / (s["median_ms"] * 1e-3) / 1e9 if s.get("samples", 0) and s["median_ms"] > 0 else 0.0

    rec["gbps"] = per_s(rec["bytes"], rec["cold"])
    rec["batch_gbps"] = per_s(rec["bytes"], rec["batch"])
    rec["graph_gbps"] = per_s(rec["bytes"], rec["graph"])
    rec["gflops"] = per_s(rec["flops"], rec["cold"])
    peak, ceiling = device.get("peak_gbps", 0), device.get("measured_peak_gbps", 0)
    rec["pct_peak"] = 100 * rec["gbps"] / peak if peak else 0.0
    rec["pct_measured"] = 100 * rec["gbps"] / ceiling if ceiling else 0.0
    peer = next((p for p in PEERS if p.lab == rec["lab"] and p.variant == rec.get("variant")), None)
    name = peer.roof_name if peer else table.roof_of(rec["lab"])
    rule = table.roof(name)
    if name == "dram":
        rec["roof"] = {"name": "dram", "value": peak, "unit": rule["unit"]}
        rec["pct_roof"] = rec["pct_peak"]
    else:  # counted per SM and clock (FP32, TF32), at the default SM clock: the peers do not read the clock
        figures = rule.get("per_sm_clock", {})
        per = figures.get("*", figures.get(str(device.get("cc", "")), 0))
        value = device["sm_count"] * per * device.get("sm_default_clock_khz", 0) * 1e3 / 1e9
        rec["roof"] = {"name": name, "value": value, "unit": rule["unit"]}
        rec["pct_roof"] = 100 * rec[rule["judges"]] / value if value else 0.0
    ws = 2 * rec["bytes"]
    rec["l2_resident"] = bool(device.get("l2_bytes")) and rec["bytes"] <= device["l2_bytes"] and ws > 0
    rec.setdefault("hardware_bytes", 0)
    rec.setdefault("hardware_gbps", 0.0)
    rec.setdefault("sm_clock_mhz", 0.0)
    rec.setdefault("throttled_samples", 0)


_stop = {"signal": 0, "time": 0.0}


def _on_signal(sig, _frame):
    if _stop["signal"] and time.monotonic() - _stop["time"] > 0.5:
        sys.exit(130)
    if not _stop["signal"]:
        _stop.update(signal=sig, time=time.monotonic())


def _git_sha() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(__file__), check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run(args, cases) -> int:
    try:
        import torch
    except ImportError:
        print("memlab-peers: PyTorch is not installed (pip install './tools/python[gpu]'); the peers need it and a GPU",
              file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("memlab-peers: no usable CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 3
    versions, missing, where = {"torch": f"torch {torch.__version__}"}, {}, {}
    libs = {peer.library for peer, _ in cases}
    if "triton" in libs:
        try:
            import triton
            versions["triton"] = f"triton {triton.__version__}"
        except ImportError:
            missing["triton"] = "triton is not installed (pip install triton)"
    memlab = None
    if "memlab" in libs:
        memlab, versions["memlab"], why = probe_memlab()
        if memlab is None:
            missing["memlab"] = why
            del versions["memlab"]
        else:
            where["memlab"] = why  # libmemlab's path
    for line in missing_lines(cases, missing):
        print(line, file=sys.stderr)
    # The header names each library the cases call: its version (and, for libmemlab, the file loaded) or why
    # its peers were skipped.
    libraries = {lib: f"skipped: {missing[lib]}" if lib in missing else versions[lib]
                 + (f" ({where[lib]})" if lib in where else "") for lib in sorted(libs)}
    from .gpu_timing import Timer

    device = _device(torch, args.like_device)
    timer = Timer(torch, device["l2_bytes"], args.max_time)
    ctx = Context(torch, memlab)
    doc = {"schema": SCHEMA, "memlab_version": f"memlab-tools {__version__}", "git_sha": _git_sha(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv),
           "argv": sys.argv, "ended": "running", "planned_cases": len(cases),
           "options": {k: str(v) for k, v in vars(args).items() if v not in (None, False, "") and k != "like_device"},
           "units": {"time": "ms", "bytes": "bytes", "bandwidth": "GB/s (1e9 bytes per second)",
                     "compute": "GFLOP/s (1e9 floating-point operations per second)", "clock": "MHz"},
           "byte_convention": "as memlab's: the fewest bytes the job must move, reads plus writes",
           "timing": {"cold": "L2 flushed (a fill of 2 x L2), then torch.cuda._sleep holds the stream while the host "
                              "enqueues the start event, one launch, the stop event; a sample whose host time outlasted "
                              "the wait is dropped and the wait doubled",
                      "batch": "launches queued behind the same wait: GPU time per launch",
                      "graph": "the same launches captured in torch.cuda.CUDAGraph, replayed behind the wait",
                      "statistics": "median, min, max, p25, p75 (type 7), mean; rel_spread = (p75 - p25) / median",
                      "stopping": "as memlab's: rel_spread < 0.5% with >= 10 samples, or the budget (half cold, a "
                                  "quarter batch, a quarter graph)",
                      "max_time_s": args.max_time, "target_rel_spread": 0.005, "min_samples": 10,
                      "max_samples": 5000, "throttle_threshold": 0.0, "l2_flush_bytes": 2 * device["l2_bytes"],
                      "batch_target_ms": 1.0, "max_queued_launches": 256, "blocking_timeout_s": 0.0},
           "device": device,
           "libraries": libraries,
           "labs": {args.lab: {"roof": table.roof_of(args.lab), "params": list(cases[0][1].keys())}},
           "results": []}
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    def save(ended=None):
        if ended:
            doc["ended"] = ended
        if args.out:
            write_atomically(args.out, doc)

    try:
        return _run_cases(args, cases, torch, versions, missing, timer, ctx, device, doc, save)
    except OSError as e:
        return cli.fail("memlab-peers", f"--out {args.out}: cannot be written ({e.strerror or e}); stopped after "
                                        f"{len(doc['results'])} of {len(cases)} cases")


def _run_cases(args, cases, torch, versions, missing, timer, ctx, device, doc, save) -> int:
    try:
        from tqdm import tqdm
    except ImportError:  # a GPU machine without it (no package registry there): no progress bar, the same run
        def tqdm(items, **_):
            return items

    failed = ok = 0
    memlab_errors = (ctx.memlab.Error,) if ctx.memlab else ()
    for peer, params in tqdm(cases, desc=f"memlab-peers {args.lab}", unit="case", file=sys.stderr,
                             disable=args.quiet):
        if _stop["signal"]:
            save(f"interrupted by {signal.Signals(_stop['signal']).name} after {len(doc['results'])} of {len(cases)} cases")
            print(f"memlab-peers: interrupted; {len(doc['results'])} case(s) written", file=sys.stderr)
            return 130
        library = versions.get(peer.library, peer.library)
        rec = _record(peer, params, None, library)
        empty = {"median_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "p25_ms": 0.0, "p75_ms": 0.0, "samples": 0,
                 "rel_spread": 0.0, "mean_ms": 0.0}
        rec.update(cold=dict(empty), batch=dict(empty), graph=dict(empty), graph_note="", verified=False,
                   status="ok", note="")
        why = skip_reason(peer, params, missing)
        if why:
            rec.update(status="skipped", note=why)
        else:
            try:
                case = peer.make(ctx, params)
                rec.update(_record(peer, params, case, library))
                rec["note"] = case.note
                case.launch()
                torch.cuda.synchronize()
                diff = case.verify()
                if diff:
                    rec.update(status="failed", note="verification failed: " + diff)
                    failed += 1
                else:
                    rec["verified"] = True
                    rec["cold"] = timer.cold(case.launch)
                    rec["batch"] = timer.batch(case.launch, rec["cold"]["median_ms"])
                    rec["graph"], rec["graph_note"] = timer.graph(case.launch, rec["cold"]["median_ms"])
                    dropped = sum(rec[k].pop("dropped", 0) for k in ("cold", "batch", "graph"))
                    if dropped:
                        rec["note"] = (rec["note"] + "; " if rec["note"] else "") + \
                            f"{dropped} sample(s) dropped: the host outlasted the GPU-side wait"
                    ok += 1
                del case
            except torch.cuda.OutOfMemoryError:
                rec.update(status="skipped", note="out of device memory")
                torch.cuda.empty_cache()
            except memlab_errors as e:  # memlab refused the arguments or CUDA failed in it: the case fails
                rec.update(status="failed", verified=False, note=" ".join(f"memlab.{type(e).__name__}: {e}".split()))
                failed += 1
        derive(rec, device)
        doc["results"].append(rec)
        save()
        torch.cuda.empty_cache()
    save("complete")
    if failed:
        print(f"memlab-peers: {failed} case(s) FAILED verification", file=sys.stderr)
        return 1
    if ok == 0:
        print("memlab-peers: nothing was measured: every case was skipped", file=sys.stderr)
        return 4
    return 0


def parser() -> argparse.ArgumentParser:
    ap = cli.Parser(
        prog="memlab-peers",
        description="PyTorch and Triton peers of memlab's labs, and memlab's own library from Python (import "
                    "memlab) in the same process, verified and timed like memlab (cold with the L2 flushed and the "
                    "host launch hidden, batch, CUDA graph), written as memlab.results/1.",
        epilog="Exit codes: 0 ok; 1 a verification failed; 2 usage error; 3 no PyTorch or no GPU; "
               "4 every case skipped; 130 interrupted (results so far written).")
    ap.add_argument("lab", choices=LABS, help="the lab whose peers to run")
    ap.add_argument("--variant", action="append", help="peers to run, comma-separated (default: all of the lab)")
    ap.add_argument("--dtype", help="u8, f16, bf16, f32, f64, comma-separated (default f32)")
    ap.add_argument("--sizes", help="copy, gather: memlab's --sizes grammar (2^12..2^31, 64MiB, 1M)")
    ap.add_argument("--src-offset", help="copy: bytes added to the source (a whole element; default 0)")
    ap.add_argument("--dst-offset", help="copy: bytes added to the destination (default 0)")
    ap.add_argument("--triton-block", help="copy: the Triton kernel's BLOCK, a list (default 1024)")
    ap.add_argument("--table-bytes", help="gather: table sizes (default 200MiB)")
    ap.add_argument("--shape", help="transpose: ROWSxCOLS list, each optionally :DTYPE to run it in that dtype only "
                                    "(default 16384x16384,10000x7000); matmul: MxNxK list (default 4096x4096x4096)")
    ap.add_argument("--max-time", type=float, default=0.5, help="seconds per case (default 0.5)")
    ap.add_argument("--like", help="a memlab results file from the same machine: its peaks and measured ceiling")
    ap.add_argument("--out", help="results file (.json), rewritten after every case")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    return ap


def _writable_folder(path: str) -> str:
    """Why a file cannot be created at `path` ("" when it can): checked before any GPU work, so a
    typo in --out does not cost a sweep."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        return "is a folder"
    if not os.path.isdir(folder):
        return f"its folder {folder} does not exist"
    try:
        import tempfile

        with tempfile.NamedTemporaryFile(dir=folder, prefix=".memlab-peers-check."):
            pass
    except OSError as e:
        return f"cannot write in {folder} ({e.strerror or e})"
    return ""


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    args.like_device = None
    try:
        if not (args.max_time > 0 and math.isfinite(args.max_time)):
            raise ValueError(f"--max-time: takes seconds above 0 (got {args.max_time})")
        if args.out and not args.out.endswith(".json"):
            raise ValueError(f"--out: {args.out}: memlab-peers writes JSON (.json)")
        if args.out and _writable_folder(args.out):
            raise ValueError(f"--out: {args.out}: {_writable_folder(args.out)}")
        if args.like:
            try:
                args.like_device = load(args.like)["device"]
            except ResultsError as e:
                raise ValueError(f"--like: {e}") from None
        cases = plan(args)
    except ValueError as e:
        return cli.fail("memlab-peers", str(e))
    return run(args, cases)


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
