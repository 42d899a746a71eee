"""memlab-transpose-shapes: memlab::transpose at every shape (docs/labs/transpose.md, "Every shape").

  summary SHAPES.csv -o FILE  the Markdown summary of the sweep's CSV (tools/studies/transpose_shapes_bench.cu,
                              run by tools/gpu/measure_transpose_heatmap.sh); standard library only: per element size
                              the worst cell, the median, how many cells fall below 0.5 and 0.8; per path the same;
                              the lowest cells; cells that failed verification or crashed; (where the sweep ran with
                              --crossover) the shapes where the path not taken was faster.
  heatmap SHAPES.csv -o DIR   the heat maps of "fraction of a copy of the same bytes" (copy time / transpose time),
                              one picture per element size (transpose_heatmap_u8.png, _f16, _f32, _f64: rows down,
                              cols across, each side a category, in ascending order: every side up to 64, then the
                              powers of two and the primes beside them, the two groups named; colours in bands
                              split at 0.5 and 0.8; the GPU of the CSV in the title; the worst cell boxed and named),
                              and the summary beside them (transpose_shapes.md) unless --no-summary.
  accept -o DIR               (a GPU, PyTorch, `import memlab`) the acceptance measurements in one process:
                              every shape with a side of 1, 2, 3, 4, 5, 7 or 8 elements and the other side
                              long enough for >= 256 MiB of traffic, both ways round, 1-, 2-, 4- and 8-byte
                              elements, and 10^6 batched 3x3, 4x4, 8x8 and 16x16 matrices: memlab.transpose
                              against a copy of the same bytes (memlab.copy_ and torch's copy_, the faster) and
                              torch's .t().contiguous() (and out.copy_(x.t()), which is the same gather without
                              the allocation), each verified first -> acceptance.json, acceptance.md.

Timing (accept): cold, as memlab's harness times (tools/python/memlab_tools/gpu_timing.py): the L2 flushed,
the stream held by torch.cuda._sleep while the host enqueues start event, launch and stop event; the contenders of
a shape interleaved sample by sample (rounds in a rotating order, as tools/studies/copy_floor.py), medians. The torch
bar is judged on the paired samples: met where memlab.transpose is at least as fast, or where the median of the
paired differences has a 95% interval holding 0 (the two are the same within what the timer resolves: a side of 1,
where both are copies of the same bytes). GB/s count the bytes read plus written (2 x the matrix). Exit codes:
0 done (accept: every case verified); 1 a case failed verification; 2 bad input; 3 matplotlib, numpy or torch
missing.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import statistics
import sys
import time

from . import cli

ELEM_NAMES = {1: "1-byte (u8)", 2: "2-byte (f16)", 4: "4-byte (f32)", 8: "8-byte (f64)"}
ELEM_FILES = {1: "u8", 2: "f16", 4: "f32", 8: "f64"}

# The colour bands of the heat maps (fraction of a copy): below 0.5 the floor, below 0.8 its bar for the
# skinny shapes; reds under the bar, greens over it, one colour past 1.0 (faster than the copy: noise, or the copy's
# own weak spot).
BANDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0)
BAND_COLOURS = ("#40004b", "#b2182b", "#e0603a", "#fdae61", "#d9f0a3", "#addd8e", "#78c679", "#31a354")
AT_LEAST_ONE_COLOUR = "#005a32"
UNVERIFIED_COLOUR = "#000000"  # failed verification or crashed: not a measurement
MISSING_COLOUR = "#e6e6e6"  # not measured (over the size cap, or cut by the budget)


# ---- the sweep's CSV ------------------------------------------------------------------------------------


def read_sweep(path: str) -> tuple[dict, list[dict]]:
    """The header comments (device, ...) and the rows of a transpose_shapes_bench CSV, typed. A cell measured
    twice (a resumed sweep) keeps its last row."""
    header, rows = {}, []
    try:
        with open(path, newline="") as f:
            lines = [line for line in f]
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    body = []
    for line in lines:
        if line.startswith("#"):
            text = line[1:].strip()
            if text.startswith("device:"):
                header["device"] = text[len("device:"):].strip()
            else:
                header.setdefault("notes", []).append(text)
        elif line.strip():
            body.append(line)
    if not body:
        raise ValueError(f"{path}: no rows (not a transpose_shapes_bench CSV)")
    reader = csv.DictReader(body)
    need = {"elem_size", "rows", "cols", "batch", "path", "fraction", "verified"}
    if not need <= set(reader.fieldnames or []):
        raise ValueError(f"{path}: columns {sorted(need - set(reader.fieldnames or []))} missing")
    by_cell = {}
    for r in reader:
        try:
            row = {
                "elem_size": int(r["elem_size"]),
                "rows": int(r["rows"]),
                "cols": int(r["cols"]),
                "batch": int(r["batch"]),
                "path": r["path"] or "-",
                "fraction": float(r["fraction"] or "nan"),
                "verified": r["verified"],
                "gbps": float(r.get("gbps") or "nan"),
                "alt_path": r.get("alt_path") or "",
                "alt_fraction": float(r["alt_fraction"]) if r.get("alt_fraction") else None,
            }
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: a row that does not parse ({e}): {r}") from None
        by_cell[(row["elem_size"], row["rows"], row["cols"])] = row
    rows = list(by_cell.values())
    return header, rows


def measured(rows: list[dict]) -> list[dict]:
    """The cells that are measurements: verified, with a fraction."""
    return [r for r in rows if r["verified"] == "ok" and not math.isnan(r["fraction"])]


def summarize(header: dict, rows: list[dict]) -> str:
    """The Markdown summary: per element size the worst cell, the median, and cells below 0.5 and 0.8; per
    element size and path the same; the lowest cells; the unverified and crashed cells; where the crossover
    columns say the other path was faster."""
    def shape(r):
        return f"{r['batch']} x {r['rows']} x {r['cols']}"

    good = measured(rows)
    sides = sorted({r["rows"] for r in rows} | {r["cols"] for r in rows})
    out = ["# memlab::transpose at every shape: fraction of a copy of the same bytes", "",
           f"Device: {header.get('device', 'unknown')}. Cells: {len(rows)} ({len(good)} verified and measured), "
           f"{len(sides)} sides: {', '.join(str(s) for s in sides)}."]
    out += [f"({n})" for n in header.get("notes", [])]
    out += ["", "fraction = copy time / transpose time (cold medians, the same bytes, the same process).", "",
            "| elements | cells | median | worst cell (batch x rows x cols) | path | < 0.5 | < 0.8 |",
            "| --- | ---: | ---: | --- | --- | ---: | ---: |"]
    for es in sorted({r["elem_size"] for r in good}):
        mine = [r for r in good if r["elem_size"] == es]
        worst = min(mine, key=lambda r: r["fraction"])
        median = statistics.median(r["fraction"] for r in mine)
        out.append(f"| {ELEM_NAMES.get(es, es)} | {len(mine)} | {median:.3f} | {shape(worst)}: {worst['fraction']:.3f} | "
                   f"{worst['path']} | {sum(r['fraction'] < 0.5 for r in mine)} | {sum(r['fraction'] < 0.8 for r in mine)} |")
    out += ["", "By path (which memlab::plan_transpose chose):", "",
            "| elements | path | cells | median | worst cell | < 0.5 | < 0.8 |",
            "| --- | --- | ---: | ---: | --- | ---: | ---: |"]
    for es in sorted({r["elem_size"] for r in good}):
        for path in sorted({r["path"] for r in good if r["elem_size"] == es}):
            mine = [r for r in good if r["elem_size"] == es and r["path"] == path]
            worst = min(mine, key=lambda r: r["fraction"])
            out.append(f"| {es} B | {path} | {len(mine)} | {statistics.median(r['fraction'] for r in mine):.3f} | "
                       f"{shape(worst)}: {worst['fraction']:.3f} | {sum(r['fraction'] < 0.5 for r in mine)} | "
                       f"{sum(r['fraction'] < 0.8 for r in mine)} |")
    bad = [r for r in rows if r["verified"] != "ok"]
    out += ["", f"Unverified cells (failed verification, or a CUDA error stopped the bench there): {len(bad)}."]
    out += [f"- {r['elem_size']}-byte {shape(r)} ({r['path']}): {r['verified']}" for r in bad]
    lows = sorted((r for r in good if r["fraction"] < 0.8), key=lambda r: r["fraction"])[:20]
    if lows:
        out += ["", "The 20 lowest cells:", "", "| elements | batch x rows x cols | path | fraction | GB/s |",
                "| --- | --- | --- | ---: | ---: |"]
        out += [f"| {r['elem_size']} | {shape(r)} | {r['path']} | {r['fraction']:.3f} | {r['gbps']:.0f} |" for r in lows]
    crossed = [r for r in good if r["alt_fraction"] is not None]
    if crossed:
        better = sorted((r for r in crossed if r["alt_fraction"] > r["fraction"] * 1.03),
                        key=lambda r: r["fraction"] - r["alt_fraction"])
        out += ["", f"Crossover: {len(crossed)} cells near the few paths' thresholds were also timed on the other "
                f"path; in {len(better)} it was > 3% faster."]
        if better:
            out += ["", "| elements | batch x rows x cols | taken | fraction | other | fraction |",
                    "| --- | --- | --- | ---: | --- | ---: |"]
            out += [f"| {r['elem_size']} | {shape(r)} | {r['path']} | {r['fraction']:.3f} | {r['alt_path']} | "
                    f"{r['alt_fraction']:.3f} |" for r in better[:40]]
    return "\n".join(out) + "\n"


def draw_heatmap(header: dict, rows: list[dict], es: int, png: str) -> None:
    """One element size's heat map: rows down, cols across, every side of the sweep labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    mine = [r for r in rows if r["elem_size"] == es]
    sides = sorted({r["rows"] for r in rows} | {r["cols"] for r in rows})
    at = {s: i for i, s in enumerate(sides)}
    n = len(sides)
    grid = np.full((n, n), np.nan)
    unverified = np.zeros((n, n), dtype=bool)
    for r in mine:
        i, j = at[r["rows"]], at[r["cols"]]
        if r["verified"] == "ok" and not math.isnan(r["fraction"]):
            grid[i, j] = r["fraction"]
        else:
            unverified[i, j] = True
    good = measured(mine)

    size = max(6.0, min(13.0, 0.11 * n + 3.0))
    fig, ax = plt.subplots(figsize=(size + 1.8, size + 0.9))
    cmap = ListedColormap(BAND_COLOURS).with_extremes(bad=MISSING_COLOUR, under=BAND_COLOURS[0],
                                                      over=AT_LEAST_ONE_COLOUR)
    norm = BoundaryNorm(BANDS, cmap.N)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, origin="upper", interpolation="nearest",
                      aspect="equal")
    if unverified.any():
        ax.imshow(np.ma.masked_where(~unverified, unverified.astype(float)), cmap=ListedColormap([UNVERIFIED_COLOUR]),
                  origin="upper", interpolation="nearest", aspect="equal")
    # Cells below 0.5 crossed as well as coloured: unmissable in print and for colour-blind readers.
    low = np.argwhere(grid < 0.5)
    if len(low):
        ax.scatter(low[:, 1], low[:, 0], marker="x", s=max(6, 900 / n), c="white", linewidths=0.8)
    if n <= 32:  # few enough cells to print each value
        for i in range(n):
            for j in range(n):
                if not math.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=5.5,
                            color="white" if grid[i, j] < 0.6 or grid[i, j] >= 0.95 else "black")
    label_sides(ax, sides)
    edge = at.get(FEW_LIMIT)
    if edge is not None and edge < n - 1:  # the two groups of sides, and the few paths' limit between them
        for line in (ax.axhline, ax.axvline):
            line(edge + 0.5, color="white", linewidth=3.0)
            line(edge + 0.5, color="black", linewidth=0.6, linestyle="--")
    title = (f"memlab::transpose on {gpu_name(header)}, {ELEM_NAMES.get(es, es)} elements:\n"
             "time of a copy of the same bytes / time of the transpose (1.0: as fast as the copy)")
    if good:
        worst = min(good, key=lambda r: r["fraction"])
        i, j = at[worst["rows"]], at[worst["cols"]]
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#00bfff", linewidth=1.2))
        ax.add_patch(plt.Circle((j, i), max(1.3, n / 30), fill=False, edgecolor="#00bfff", linewidth=1.6))
        below5 = sum(r["fraction"] < 0.5 for r in good)
        below8 = sum(r["fraction"] < 0.8 for r in good)
        title += (f"\nmedian {statistics.median(r['fraction'] for r in good):.2f}; worst {worst['fraction']:.2f} at "
                  f"{worst['batch']} x {worst['rows']} x {worst['cols']} ({worst['path']}, circled); "
                  f"{below5} cells < 0.5, {below8} < 0.8 of {len(good)}, every one verified")
    title += "\na cell: a batch of matrices moving >= 64 MiB, cold medians"
    ax.set_title(title, fontsize=10)
    bar = fig.colorbar(image, ax=ax, shrink=0.7, extend="max", ticks=BANDS, pad=0.02)
    bar.ax.set_yticklabels([f"{b:.2f}" for b in BANDS], fontsize=7)
    bar.set_label("fraction of a copy of the same bytes (top: >= 1)", fontsize=8)
    for b in (0.5, 0.8):
        bar.ax.axhline(b, color="black", linewidth=1.4)
    legend = [Patch(facecolor=MISSING_COLOUR, edgecolor="#999999", label="not measured"),
              Patch(facecolor=UNVERIFIED_COLOUR, label="failed verification / crashed"),
              Patch(facecolor="none", edgecolor="#00bfff", linewidth=1.6, label="the worst cell"),
              plt.Line2D([], [], color="white", marker="x", linestyle="none", markeredgecolor="black",
                         label="below 0.5 (also crossed)")]
    if edge is not None and edge < n - 1:
        legend.append(plt.Line2D([], [], color="black", linestyle="--", linewidth=0.6,
                                 label=f"{FEW_LIMIT}: the few paths' limit"))
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, -0.02), fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(png, dpi=150)
    plt.close(fig)


FEW_LIMIT = 64  # the few paths' limit (a side of at most 64 elements): every side up to it is in the sweep


def gpu_name(header: dict) -> str:
    """The GPU of the sweep's header, its L2 in MiB: "NVIDIA H100 80GB HBM3 (132 SMs, 50 MiB of L2)"."""
    text = header.get("device", "an unnamed GPU")
    m = re.match(r"^(.*?) \((\d+) SMs\), L2 (\d+) bytes$", text)
    return f"{m.group(1)} ({m.group(2)} SMs, {int(m.group(3)) >> 20} MiB of L2)" if m else text


def label_sides(ax, sides: list[int]) -> None:
    """The heat map's sides as what they are, categories: every side up to FEW_LIMIT one cell each (labelled
    every 8th), then the powers of two and the primes beside them (each power of two labelled; the primes are
    the unlabelled ticks between), both groups named under the axis. Not a scale: a cell is a side, whatever its
    value."""
    import matplotlib.ticker as ticker

    for axis, rotation in ((ax.xaxis, 90), (ax.yaxis, 0)):
        major = [i for i, s in enumerate(sides) if s in (1, FEW_LIMIT) or (s <= FEW_LIMIT and s % 8 == 0)
                 or (s > FEW_LIMIT and s & (s - 1) == 0)]
        axis.set_major_locator(ticker.FixedLocator(major))
        axis.set_major_formatter(ticker.FixedFormatter([str(sides[i]) for i in major]))
        axis.set_minor_locator(ticker.FixedLocator(range(len(sides))))
        for t in axis.get_majorticklabels():
            t.set_rotation(rotation)
            t.set_fontsize(8)
    ax.tick_params(which="major", length=4)
    ax.tick_params(which="minor", length=1.5)
    few = sum(s <= FEW_LIMIT for s in sides)
    more = len(sides) - few
    groups = f"every side 1-{FEW_LIMIT}" + (" | powers of two and the primes beside them" if more else "")
    ax.set_xlabel(f"cols, elements of a source row ({groups}; categories, not to scale)", fontsize=9)
    ax.set_ylabel(f"rows of each source matrix ({groups})", fontsize=9)


def heatmap_png(out_dir: str, es: int) -> str:
    return os.path.join(out_dir, f"transpose_heatmap_{ELEM_FILES.get(es, f'{es}byte')}.png")


def _sweep(args):
    """(header, rows) of args.csv, or None after one line naming what is wrong."""
    try:
        return read_sweep(args.csv)
    except ValueError as e:
        cli.fail(args.prog, str(e))
        return None


def summary_main(args) -> int:
    sweep = _sweep(args)
    if sweep is None:
        return cli.BAD_INPUT
    header, rows = sweep
    try:
        cli.write_text(args.out, summarize(header, rows))
    except OSError as e:
        return cli.fail(args.prog, f"{args.out}: {e.strerror}")
    print(args.out)
    return cli.OK


def heatmap_main(args) -> int:
    sweep = _sweep(args)
    if sweep is None:
        return cli.BAD_INPUT
    header, rows = sweep
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        return cli.fail(args.prog, f"{args.out}: {e.strerror}")
    if not args.no_summary:
        cli.write_text(os.path.join(args.out, "transpose_shapes.md"), summarize(header, rows))
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"{args.prog}: {e.name} missing: no picture", file=sys.stderr)
        return cli.MISSING_DEPENDENCY
    for es in sorted({r["elem_size"] for r in rows}):
        png = heatmap_png(args.out, es)
        draw_heatmap(header, rows, es, png)
        print(png)
    return cli.OK


# ---- the acceptance measurements (GPU) --------------------------------------------------------------------


def _summary(ms: list[float], bytes_moved: int) -> dict:
    ordered = sorted(ms)
    median = statistics.median(ordered)
    return {"median_ms": median, "min_ms": ordered[0], "samples": len(ordered),
            "gbps": bytes_moved / (median * 1e-3) / 1e9}


def torch_bar(rec: dict) -> tuple[bool, str]:
    """Whether a record meets the torch bar, and the word for its table cell: a batched case has none (torch's
    figure is shown, not judged); else met where memlab.transpose's median is at least torch's or the paired
    difference's 95% interval holds 0 (the same, within what the timer resolves)."""
    if rec["batch"] != 1:
        return True, ""
    paired = rec.get("vs_torch_paired", {})
    if rec.get("vs_torch", 0) >= 1.0:
        return True, ""
    if paired.get("word") == "SAME":
        return True, "same as torch"
    return False, ""


def acceptance_cases(sides=(1, 2, 3, 4, 5, 7, 8), elem_sizes=(1, 2, 4, 8), matrix_bytes=128 << 20,
                     matrices=((3, 3), (4, 4), (8, 8), (16, 16)), batch=10**6):
    """(batch, rows, cols, elem_size) of the acceptance, element size by element size (a budget cut loses the
    last sizes whole): a short side against one long enough for matrix_bytes (>= 2 x that moved), both ways
    round, then the batches of small matrices."""
    cases = []
    for es in elem_sizes:
        for a in sides:
            b = -(-matrix_bytes // (es * a))
            cases += [(1, b, a, es), (1, a, b, es)]
        cases += [(batch, r, c, es) for r, c in matrices]
    return cases


def accept_markdown(header: dict, records: list[dict]) -> str:
    """The acceptance table of accept's records: per shape memlab.transpose's GB/s, its % of the faster copy of the
    same bytes, torch's GB/s and ratio, and the bar (>= 80% of a copy, and the torch bar of torch_bar)."""
    lines = [f"# memlab.transpose, every shape: acceptance ({header['device']})", "",
             "A side of 1..8 elements against >= 256 MiB of traffic, and 10^6 small matrices; cold medians of "
             "interleaved samples, one process. Bar: >= 80% of a copy of the same bytes and >= torch (or the same "
             "as torch: the median paired difference's 95% interval holds 0).", "",
             "| batch x rows x cols | elements | path | GB/s | % of copy | torch GB/s | vs torch | bar |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in records:
        if "skipped" in r:
            lines.append(f"| {r['batch']} x {r['rows']} x {r['cols']} | {r['elem_size']} B | "
                         f"skipped ({r['skipped']}) | | | | | |")
            continue
        c = r["candidates"]
        mine = c.get("memlab.transpose", {})
        tor = c.get(r.get("torch", ""), {})
        bar_torch, why = torch_bar(r)
        ok = mine.get("verified") == "ok" and r.get("pct_of_copy", 0) >= 80 and bar_torch
        p = r.get("vs_torch_paired", {})
        vs = f"{r.get('vs_torch', float('nan')):.2f}"
        if why:
            vs = (f"{r['vs_torch']:.3f} (paired {1e3 * p['diff_ms']:+.1f} us, [{1e3 * p['low_ms']:+.1f}, "
                  f"{1e3 * p['high_ms']:+.1f}])")
        verdict = ("met" if ok else "MISSED") + (f" ({why})" if ok and why else "")
        if mine.get("verified") != "ok":
            verdict += f" ({mine.get('verified')})"
        lines.append(f"| {r['batch']} x {r['rows']} x {r['cols']} | {r['elem_size']} B | {r['path']} | "
                     f"{mine.get('gbps', float('nan')):.0f} | {r.get('pct_of_copy', float('nan')):.1f} | "
                     f"{tor.get('gbps', float('nan')):.0f} | {vs} | {verdict} |")
    return "\n".join(lines) + "\n"


def accept_main(args) -> int:
    try:
        import torch
    except ImportError:
        return cli.fail(args.prog, "torch missing: the acceptance measurements need PyTorch and a GPU",
                        cli.MISSING_DEPENDENCY)
    import memlab

    if not torch.cuda.is_available():
        return cli.fail(args.prog, "no GPU", cli.MISSING_DEPENDENCY)
    os.makedirs(args.out, exist_ok=True)
    dtypes = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}
    from .gpu_timing import Timer, interleaved, judge, tick_ms

    props = torch.cuda.get_device_properties(0)
    timer = Timer(torch, getattr(props, "L2_cache_size", 50 << 20), max_time_s=3.0)
    records, failed = [], 0
    t_start = time.perf_counter()
    for batch, rows, cols, es in acceptance_cases(matrix_bytes=args.matrix_mib << 20, batch=args.batch):
        if time.perf_counter() - t_start > args.budget:
            records.append({"batch": batch, "rows": rows, "cols": cols, "elem_size": es, "skipped": "budget"})
            continue
        dt = dtypes[es]
        n = batch * rows * cols
        x = torch.randint(1, 255, (n * es,), dtype=torch.uint8, device="cuda").view(dt)
        x = x.view(rows, cols) if batch == 1 else x.view(batch, rows, cols)
        xt = x.t() if batch == 1 else x.transpose(1, 2)
        ref = xt.contiguous()
        out = torch.empty_like(ref)
        flat_x, flat_out = x.view(-1), out.view(-1)
        path = memlab.transpose_path(out.data_ptr(), x.data_ptr(), batch, rows, cols, es)
        is_view = ref.data_ptr() == x.data_ptr()  # a side of 1: .t().contiguous() moves no bytes
        cands = {
            "memlab.transpose": lambda: memlab.transpose(x, out),
            "memlab.copy_ (same bytes)": lambda: memlab.copy_(flat_out, flat_x),
            "torch copy_ (same bytes)": lambda: flat_out.copy_(flat_x),
            "torch .t().contiguous()": lambda: xt.contiguous(),
            "torch out.copy_(x.t())": lambda: out.copy_(xt),
        }
        rec = {"batch": batch, "rows": rows, "cols": cols, "elem_size": es, "path": path,
               "bytes": 2 * n * es, "torch_contiguous_is_view": is_view, "candidates": {}}
        timed = {}
        for name, fn in cands.items():
            out.zero_()
            try:
                r = fn()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - recorded, the others still run
                rec["candidates"][name] = {"verified": f"error: {e}"}
                continue
            if "same bytes" in name:
                ok = torch.equal(out.view(-1).view(torch.uint8), flat_x.view(torch.uint8))
            elif name == "torch .t().contiguous()":
                ok = torch.equal(r.reshape(-1).view(torch.uint8), ref.view(-1).view(torch.uint8))
            else:
                ok = torch.equal(out.view(-1).view(torch.uint8), ref.view(-1).view(torch.uint8))
            rec["candidates"][name] = {"verified": "ok" if ok else "WRONG"}
            timed[name] = fn
            failed += not ok and name.startswith("memlab")
        runs = interleaved(timer, timed, args.samples)  # one sample of each per round, paired by round
        for name, ms in runs.items():
            rec["candidates"][name].update(_summary(ms, rec["bytes"]))
        c = rec["candidates"]
        copies = [c[k]["median_ms"] for k in ("memlab.copy_ (same bytes)", "torch copy_ (same bytes)") if "median_ms" in c.get(k, {})]
        mine = c.get("memlab.transpose", {}).get("median_ms")
        torch_key = "torch out.copy_(x.t())" if is_view else "torch .t().contiguous()"
        torch_ms = c.get(torch_key, {}).get("median_ms")
        if mine and copies:
            rec["pct_of_copy"] = 100.0 * min(copies) / mine
        if mine and torch_ms:
            rec["torch"] = torch_key
            rec["vs_torch"] = torch_ms / mine
            mine_ms, theirs_ms = runs["memlab.transpose"], runs[torch_key]
            v = judge(mine_ms, theirs_ms, tick_ms(mine_ms + theirs_ms))
            rec["vs_torch_paired"] = {"diff_ms": v.diff_ms, "low_ms": v.low_ms, "high_ms": v.high_ms, "word": v.word}
        records.append(rec)
        print(f"{batch} x {rows} x {cols} {es}-byte {path:>14}: {rec.get('pct_of_copy', float('nan')):6.1f}% of a copy, "
              f"{rec.get('vs_torch', float('nan')):5.2f}x torch", file=sys.stderr, flush=True)
        del x, xt, ref, out, flat_x, flat_out
        torch.cuda.empty_cache()
    header = {"schema": "memlab.transpose_shapes.accept/1", "device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "memlab_library": str(memlab.library_path()),
              "method": "cold: L2 flushed, stream held while enqueuing; the contenders interleaved sample by sample, "
                        "medians; the torch bar on the paired samples (gpu_timing.judge)",
              "bytes": "read + written (2 x the matrices)",
              "pct_of_copy": "the faster copy of the same bytes (memlab.copy_, torch copy_) over memlab.transpose",
              "vs_torch": "torch's time over memlab.transpose's: .t().contiguous(), or out.copy_(x.t()) where "
                          ".t().contiguous() is a view (a side of 1)"}
    with open(os.path.join(args.out, "acceptance.json"), "w") as f:
        json.dump({"header": header, "records": records}, f, indent=1)
    cli.write_text(os.path.join(args.out, "acceptance.md"), accept_markdown(header, records))
    print(os.path.join(args.out, "acceptance.md"))
    return cli.VERDICT if failed else cli.OK


def main(argv=None) -> int:
    ap = cli.Parser(prog="memlab-transpose-shapes", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("summary", help="the Markdown summary of a transpose_shapes_bench CSV (no matplotlib)")
    m.add_argument("csv")
    m.add_argument("-o", "--out", default="transpose_shapes.md", help="the Markdown file to write")
    h = sub.add_parser("heatmap", help="the heat maps (one per element size) and summary from a transpose_shapes_bench CSV")
    h.add_argument("csv")
    h.add_argument("-o", "--out", default=".")
    h.add_argument("--no-summary", action="store_true", help="the pictures only")
    a = sub.add_parser("accept", help="the acceptance measurements (GPU, torch, import memlab)")
    a.add_argument("-o", "--out", default=".")
    a.add_argument("--samples", type=int, default=20)
    a.add_argument("--budget", type=float, default=120.0, help="seconds; cases after it are recorded as skipped")
    a.add_argument("--matrix-mib", type=int, default=128, help="MiB of each skinny matrix (>= 2 x that moved)")
    a.add_argument("--batch", type=int, default=10**6, help="matrices in each batched case")
    args = ap.parse_args(argv)
    args.prog = ap.prog
    return {"summary": summary_main, "heatmap": heatmap_main, "accept": accept_main}[args.command](args)


if __name__ == "__main__":
    sys.exit(cli.run(main))
