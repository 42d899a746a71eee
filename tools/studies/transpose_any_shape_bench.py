"""memlab.transpose against a copy of the same bytes, torch's .t().contiguous() and a Triton transpose, in one
process, at the library's acceptance shapes (docs/notes/transpose_any_shape.md).

Each candidate is verified byte for byte against torch first, then timed cold: the L2 flushed (a write of
twice its size), the stream held by torch.cuda._sleep while the host enqueues start event, launch, stop
event (a sample whose host enqueue outlasted the hold is dropped and the hold doubled), median of the
kept samples. The same method as memlab's harness and tools/python's gpu_timing (not imported: that
package is being rewritten). Prints a table and writes JSON.

  PYTHONPATH=python MEMLAB_LIBRARY=build/default/lib/libmemlab.so python3 tools/studies/transpose_any_shape_bench.py \
      --out transpose_bench.json [--samples 40] [--shapes 12289x3001:f32,...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

import memlab

DEFAULT_SHAPES = "16384x16384:f32,10000x7000:f32,12289x3001:f32,8191x8193:f16,16411x8191:u8,8193x4099:f64"
DTYPES = {"u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}
INT_OF = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def triton_transpose():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def transpose(x, y, rows, cols, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
        rn = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
        mask = (rm[:, None] < rows) & (rn[None, :] < cols)
        tile = tl.load(x + rm[:, None] * cols + rn[None, :], mask=mask)
        tl.store(y + rn[:, None] * rows + rm[None, :], tl.trans(tile), mask=tl.trans(mask))

    def launch(x, y):
        rows, cols = x.shape
        grid = (triton.cdiv(rows, 64), triton.cdiv(cols, 64))
        transpose[grid](x, y, rows, cols, BM=64, BN=64, num_warps=4)

    return launch


class Timer:
    def __init__(self, l2_bytes: int):
        self.flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        self.hold_ms = 1.0
        torch.cuda._sleep(1_000_000)
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            self.start.record()
            torch.cuda._sleep(2_000_000)
            self.stop.record()
            self.stop.synchronize()
            best = min(best, self.start.elapsed_time(self.stop))
        self.cycles_per_ms = 2_000_000 / best

    def cold(self, fn, samples: int, budget_s: float) -> dict:
        fn()
        torch.cuda.synchronize()
        kept, dropped, t_end = [], 0, time.perf_counter() + budget_s
        while len(kept) < samples and time.perf_counter() < t_end:
            self.flush.zero_()
            torch.cuda._sleep(int(self.cycles_per_ms * self.hold_ms))
            t0 = time.perf_counter()
            self.start.record()
            fn()
            self.stop.record()
            host_ms = (time.perf_counter() - t0) * 1e3
            self.stop.synchronize()
            if host_ms > 0.8 * self.hold_ms:
                self.hold_ms = min(2 * self.hold_ms, 100.0)
                dropped += 1
                continue
            kept.append(self.start.elapsed_time(self.stop))
        return {"median_ms": statistics.median(kept) if kept else float("nan"), "min_ms": min(kept, default=float("nan")),
                "samples": len(kept), "dropped": dropped}


def same_bytes(a, b) -> bool:
    return torch.equal(a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="ROWSxCOLS:dtype,... (dtype: u8 f16 bf16 f32 f64)")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--budget", type=float, default=3.0, help="seconds per candidate at most")
    ap.add_argument("--out", default="transpose_bench.json")
    args = ap.parse_args(argv)

    props = torch.cuda.get_device_properties(0)
    timer = Timer(getattr(props, "L2_cache_size", 50 << 20))
    tri = triton_transpose()
    records = []
    for item in args.shapes.split(","):
        dims, dt = item.split(":")
        rows, cols = (int(v) for v in dims.lower().split("x"))
        dtype = DTYPES[dt]
        es = torch.empty((), dtype=dtype).element_size()
        x = torch.randint(-128, 127, (rows * cols * es,), dtype=torch.int8, device="cuda").view(dtype).view(rows, cols)
        ref = x.t().contiguous()
        out = torch.empty((cols, rows), dtype=dtype, device="cuda")
        flat_out = out.view(-1)
        bytes_moved = 2 * rows * cols * es
        path = memlab.transpose_path(out.data_ptr(), x.data_ptr(), 1, rows, cols, es)
        cands = {
            "memlab.transpose": lambda: memlab.transpose(x, out),
            "memlab.copy_ (same bytes)": lambda: memlab.copy_(flat_out, x.view(-1)),
            "torch copy_ (same bytes)": lambda: flat_out.copy_(x.view(-1)),
            "torch .t().contiguous()": lambda: x.t().contiguous(),
        }
        if tri is not None:
            xi, oi = x.view(INT_OF[es]), out.view(INT_OF[es])  # Triton moves the bits as integers
            cands["triton tl.trans 64x64"] = lambda: tri(xi, oi)
        verified = {}
        for name, fn in cands.items():
            out.zero_()
            try:
                r = fn()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a failing peer is recorded, the others still run
                verified[name] = f"error: {e}"
                continue
            if "same bytes" in name:
                verified[name] = "ok" if same_bytes(out.view(-1), x.view(-1)) else "WRONG"
            elif name == "torch .t().contiguous()":
                verified[name] = "ok" if same_bytes(r, ref) else "WRONG"
            else:
                verified[name] = "ok" if same_bytes(out, ref) else "WRONG"
        copy_ms = None
        for name, fn in cands.items():
            if verified.get(name, "").startswith("error"):
                records.append({"shape": [rows, cols], "dtype": dt, "candidate": name, "verified": verified[name]})
                continue
            t = timer.cold(fn, args.samples, args.budget)
            gbps = bytes_moved / (t["median_ms"] * 1e-3) / 1e9
            rec = {"shape": [rows, cols], "dtype": dt, "elem_size": es, "bytes": bytes_moved, "candidate": name,
                   "path": path if name == "memlab.transpose" else None, "verified": verified[name], "gbps": gbps, **t}
            records.append(rec)
            if name == "torch copy_ (same bytes)":
                copy_ms = t["median_ms"]
            print(f"{rows}x{cols} {dt:>3} {name:28s} {t['median_ms'] * 1e3:9.1f} us {gbps:8.1f} GB/s "
                  f"{verified[name]} ({t['samples']} samples)", file=sys.stderr, flush=True)
        best_copy = min((r["median_ms"] for r in records if r.get("shape") == [rows, cols] and r.get("dtype") == dt
                         and "same bytes" in r["candidate"] and "median_ms" in r), default=copy_ms)
        for r in records:
            if r.get("shape") == [rows, cols] and r.get("dtype") == dt and "median_ms" in r and best_copy:
                r["pct_of_copy"] = 100.0 * best_copy / r["median_ms"]
        del x, ref, out
        torch.cuda.empty_cache()

    header = {"schema": "memlab.transpose_bench/1", "device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "memlab_library": str(memlab.library_path()),
              "method": "cold: L2 flushed, stream held while enqueuing, median of kept samples",
              "bytes": "read + written (2 x the matrix)", "pct_of_copy": "against the faster copy of the same bytes"}
    with open(args.out, "w") as f:
        json.dump({"header": header, "records": records}, f, indent=1)

    print(f"\n{'shape':>16} {'dtype':>5} {'candidate':28} {'us':>9} {'GB/s':>8} {'% copy':>7} {'verified':>8}")
    for r in records:
        if "median_ms" not in r:
            print(f"{'x'.join(map(str, r['shape'])):>16} {r['dtype']:>5} {r['candidate']:28} {r['verified']}")
            continue
        print(f"{'x'.join(map(str, r['shape'])):>16} {r['dtype']:>5} {r['candidate']:28} {r['median_ms'] * 1e3:9.1f} "
              f"{r['gbps']:8.1f} {r.get('pct_of_copy', float('nan')):7.1f} {r['verified']:>8}"
              + (f"  [{r['path']}]" if r.get("path") else ""))
    bad = [r for r in records if r.get("verified") not in ("ok",)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
