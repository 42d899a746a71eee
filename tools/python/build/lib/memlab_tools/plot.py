"""memlab-plot RESULTS.json... -o DIR: pictures of memlab runs and peers, merged.

  size_<lab>_<dtype>[_<params>].png   GB/s against size (log x), one line per variant and peer
                                      (peers dashed), the DRAM theoretical peak and the measured
                                      ceiling as horizontal lines
  sweep_<lab>_<axis>_<...>.png        GB/s against one axis of a lab at a fixed size (stride,
                                      offsets, table bytes, ...), with the hardware GB/s the lab's
                                      model declares (dashed) where it declares one
  points_<lab>_<dtype>.png            labs that no size or sweep figure shows (a few tiles, matrices):
                                      bars per point, one per variant and peer, GB/s (GFLOP/s where
                                      the lab counts flops)
  roofline.png                        results that declare flops under the DRAM, L2, shared-memory
                                      and FP32 roofs; beside it, each lab's best rung and best peer
                                      in GB/s under the bandwidth roofs
  times_<lab>_<dtype>.md              time per size per implementation (the reference study's table)
  index.md                            every picture with one sentence

Every number comes from the files: GB/s from the declared bytes over the cold median.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections import defaultdict

from .results import Record, ResultsError, rate, records

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIZE = "n"


# Files written before results carried `peer` (memlab < 0.1.0 at 39c3c8d) mark none: their library
# variants are known by lab and name.
_LEGACY_PEERS = {("copy", "memcpy"), ("copy", "cub"), ("copy", "thrust"), ("async", "memcpy"), ("async", "cub"),
                 ("transpose", "cublas"), ("transpose", "copy"), ("stencil", "1d_copy"), ("stencil", "3d_copy"),
                 ("matmul", "cublas_sgemm"), ("matmul", "cublas_tf32")}


def _is_peer(rec: Record) -> bool:
    return bool(rec.data.get("peer", (rec.lab, rec.variant) in _LEGACY_PEERS))


def _lab_roof(rows: list[Record]) -> str:
    """The roof the lab declares in its file ("dram" for files that predate roofs)."""
    return rows[0].run.get("labs", {}).get(rows[0].lab, {}).get("roof") or rows[0].data.get("roof", {}).get("name", "dram")


def _value(rec: Record, roof: str) -> float:
    """What the lab is measured by: GFLOP/s under the FP32 roof, GB/s under the others (cold median)."""
    if roof == "fp32":
        ms = rec.data.get("cold", {}).get("median_ms", 0)
        return rec.data.get("flops", 0) / (ms * 1e-3) / 1e9 if ms > 0 else 0.0
    return rate(rec.data)


_ROOF_NAMES = {"smem": "shared-memory roof", "fp32": "FP32 roof", "l2": "L2 (measured copy)"}


def _lab_roof_lines(ax, rows: list[Record]):
    """A DRAM lab: the theoretical peak and the measured ceiling. Another: its roof, from the SM clock
    measured during each case (the median over the rows drawn, and their range when it varies)."""
    roof = _lab_roof(rows)
    if roof == "dram":
        _roof_lines(ax, rows[0].run.get("device", {}))
        return
    values = sorted(r.data.get("roof", {}).get("value", 0) for r in rows if r.data.get("roof", {}).get("value"))
    if not values:
        return
    unit = next(r.data["roof"].get("unit", "") for r in rows if r.data.get("roof", {}).get("value"))
    mid = values[len(values) // 2]
    spread = f", {values[0]:.0f}-{values[-1]:.0f} over the cases" if values[-1] > 1.01 * values[0] else ""
    ax.axhline(mid, color="black", lw=1, ls="-", label=f"{_ROOF_NAMES.get(roof, roof)} {mid:.0f} {unit} (median{spread})")


def _unit_label(roof: str) -> str:
    return "GFLOP/s (flops / cold median)" if roof == "fp32" else "GB/s (bytes read + written / cold median)"


def _label(rec: Record, fixed: dict) -> str:
    """The variant, the params of its own that the figure does not fix (a Triton block), and whose it is."""
    extra = [f"{k}={v}" for k, v in rec.params.items() if k not in fixed and k not in ("dtype", SIZE)]
    name = rec.variant + (f" ({', '.join(extra)})" if extra else "")
    if rec.data.get("library"):
        return f"{name} [{rec.data['library'].split()[0]}]"
    return name + (" [peer]" if _is_peer(rec) else "")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")


def _device_line(rec: Record) -> str:
    d = rec.run.get("device", {})
    return f"{d.get('name', '?')}, cc {d.get('cc', '?')}"


def _roof_lines(ax, device: dict):
    if device.get("peak_gbps"):
        ax.axhline(device["peak_gbps"], color="black", lw=1, ls="-", label=f"DRAM theoretical {device['peak_gbps']:.0f} GB/s")
    if device.get("measured_peak_gbps"):
        ax.axhline(device["measured_peak_gbps"], color="gray", lw=1, ls="--",
                   label=f"measured ceiling {device['measured_peak_gbps']:.0f} GB/s (cudaMemcpy)")


def size_plots(recs: list[Record], out: str) -> list[dict]:
    """One figure per (lab, dtype, other params shared by all its memlab rows)."""
    made = []
    by_lab = defaultdict(list)
    for r in recs:
        if r.ok and SIZE in r.params:
            by_lab[(r.lab, r.params.get("dtype", ""))].append(r)
    for (lab, dtype), rows in sorted(by_lab.items()):
        sizes = {r.params[SIZE] for r in rows}
        if len(sizes) < 3 or max(sizes) < 4 * min(sizes):
            continue  # a few nearby sizes (4096, 4100, 8192): bars per point say more than a line
        # One figure per combination of the lab's own params other than dtype and n (memlab's rows
        # define them); a peer's parameters of its own (a Triton block) stay in its line's label.
        own = [r for r in rows if not r.data.get("library")] or rows
        roof = _lab_roof(rows)
        keys = sorted({k for r in own for k in r.params if k not in ("dtype", SIZE)})
        combos = sorted({tuple((k, r.params.get(k)) for k in keys) for r in own}) or [()]
        for combo in combos:
            fixed = dict(combo)
            fig, ax = plt.subplots(figsize=(9, 5.5))
            series = defaultdict(list)
            for r in rows:
                if all(r.params.get(k, v) == v for k, v in fixed.items() if k in r.params):
                    series[_label(r, fixed)].append((r.params[SIZE], _value(r, roof), _is_peer(r)))
            for name, pts in sorted(series.items(), key=lambda kv: (kv[1][0][2], kv[0])):
                pts.sort()
                if len({p[0] for p in pts}) < len(pts):
                    print(f"memlab-plot: warning: {lab} {name} has sizes measured more than once (files from "
                          "several runs?): every point is drawn", file=sys.stderr)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, lw=1.5,
                        ls="--" if pts[0][2] else "-", label=name)
            _lab_roof_lines(ax, rows)
            ax.set_xscale("log", base=2)
            ax.set_xlabel(f"size n ({rows[0].run.get('labs', {}).get(lab, {}).get('size_meaning', 'elements')}, {dtype})")
            ax.set_ylabel(_unit_label(roof))
            title_fixed = ", ".join(f"{k}={v}" for k, v in fixed.items())
            ax.set_title(f"{lab} {dtype}{' (' + title_fixed + ')' if title_fixed else ''} on {_device_line(rows[0])}\n"
                         "bytes = reads + writes; L2 flushed before every sample", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8, loc="best")
            name = f"size_{lab}_{dtype}" + (f"_{_slug(title_fixed)}" if title_fixed else "") + ".png"
            fig.tight_layout()
            fig.savefig(os.path.join(out, name), dpi=110)
            plt.close(fig)
            made.append({"file": name, "kind": "size", "lab": lab, "series": sorted(series),
                         "sentence": f"{lab} ({dtype}{', ' + title_fixed if title_fixed else ''}): "
                                     f"{'FLOP rate' if roof == 'fp32' else 'bandwidth'} against size for {len(series)} "
                                     "variants and peers, under "
                                     + ("the DRAM peak and the measured cudaMemcpy ceiling." if roof == "dram"
                                        else f"the lab's {_ROOF_NAMES.get(roof, roof)}.")})
    return made


def sweep_plots(recs: list[Record], out: str) -> list[dict]:
    """A lab's non-size axis swept at one size: GB/s (and hardware GB/s) against it."""
    made = []
    rows_by_lab = defaultdict(list)
    for r in recs:
        if r.ok:
            rows_by_lab[r.lab].append(r)
    for lab, rows in sorted(rows_by_lab.items()):
        own = [r for r in rows if not r.data.get("library")] or rows
        roof = _lab_roof(rows)
        axes = sorted({k for r in own for k, v in r.params.items() if k not in ("dtype", SIZE) and isinstance(v, int)})
        for axis in axes:
            groups = defaultdict(list)
            for r in rows:
                rest = tuple(sorted((k, v) for k, v in r.params.items() if k != axis))
                groups[rest].append(r)
            # A figure per (size, dtype, other axes fixed) where the axis takes 3+ values.
            by_fig = defaultdict(lambda: defaultdict(list))
            for rest, rs in groups.items():
                fixed = dict(rest)
                fig_key = tuple((k, v) for k, v in rest)
                for r in rs:
                    by_fig[tuple((k, v) for k, v in fig_key if k != "variant")][r.variant].append(r)
            for fig_key, series in by_fig.items():
                values = {r.params[axis] for rs in series.values() for r in rs}
                if len(values) < 3:
                    continue
                fixed = dict(fig_key)
                fig, ax = plt.subplots(figsize=(9, 5.5))
                for variant, rs in sorted(series.items(), key=lambda kv: (_is_peer(kv[1][0]), kv[0])):
                    rs.sort(key=lambda r: r.params[axis])
                    xs = [r.params[axis] for r in rs]
                    peer = _is_peer(rs[0])
                    line = ax.plot(xs, [_value(r, roof) for r in rs], marker="s" if peer else "o", ms=3,
                                   ls=":" if peer else "-",
                                   label=f"{_label(rs[0], rs[0].params)}" + ("" if roof == "fp32" else ": useful GB/s"))[0]
                    hw = [r.data.get("hardware_gbps", 0) for r in rs]
                    if any(hw) and not peer and roof != "fp32":
                        ax.plot(xs, hw, marker="x", ms=3, ls="--", color=line.get_color(),
                                label=f"{variant}: hardware GB/s (the lab's model)")
                device = rows[0].run.get("device", {})
                _lab_roof_lines(ax, [r for rs in series.values() for r in rs])
                if min(values) > 0 and max(values) >= 16 * min(values):
                    ax.set_xscale("log", base=2)
                elif len(values) <= 12:
                    ax.set_xticks(sorted(values))  # a few whole values (a field, stages): no ticks between them
                if axis.endswith("_bytes") and device.get("l2_bytes"):
                    ax.axvline(device["l2_bytes"], color="tab:gray", lw=1, ls="-.",
                               label=f"L2 size {device['l2_bytes'] / 2**20:.0f} MiB")
                ax.set_xlabel(axis + (" (bytes)" if axis.endswith("_bytes") or axis.endswith("_offset") else ""))
                ax.set_ylabel("GFLOP/s (cold median)" if roof == "fp32" else "GB/s (cold median)")
                title_fixed = ", ".join(f"{k}={v}" for k, v in fixed.items())
                ax.set_title(f"{lab}: {axis} swept ({title_fixed}) on {_device_line(rows[0])}\n"
                             + ("flops as the lab declares them" if roof == "fp32" else
                                "useful bytes = reads + writes; hardware bytes from the lab's model"), fontsize=10)
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=8, loc="best")
                name = _slug(f"sweep_{lab}_{axis}_{title_fixed}") + ".png"
                fig.tight_layout()
                fig.savefig(os.path.join(out, name), dpi=110)
                plt.close(fig)
                made.append({"file": name, "kind": "sweep", "lab": lab, "series": sorted(series),
                             "sentence": f"{lab}: {axis} from {min(values)} to {max(values)} at {title_fixed}: "
                                         + ("GFLOP/s per variant." if roof == "fp32" else
                                            "useful and (where modelled) hardware bandwidth per variant.")})
    return made


def point_plots(recs: list[Record], out: str, skip_labs=()) -> list[dict]:
    """Labs that no size or sweep figure shows (a few shapes: tiles, matrices): grouped bars, one group
    per point, one bar per variant and peer, in GB/s (GFLOP/s where every result counts flops)."""
    made = []
    by_fig = defaultdict(list)
    for r in recs:
        if r.ok and r.lab not in skip_labs:
            by_fig[(r.lab, r.params.get("dtype", ""))].append(r)
    for (lab, dtype), rows in sorted(by_fig.items()):
        flops = all(r.data.get("flops", 0) > 0 for r in rows)
        roof = "fp32" if flops else _lab_roof(rows)

        def value(r):
            return _value(r, roof)

        own = [r for r in rows if not r.data.get("library")] or rows
        keys = [k for k in own[0].params if k != "dtype"]  # the lab's own point; a peer's extras go to its label

        def point(r):
            return tuple((k, r.params.get(k)) for k in keys)

        points = sorted({point(r) for r in own}, key=str)
        cells = {}
        for r in rows:
            # A peer lacks some of the lab's params (a CTA order, say): it joins every point it matches.
            for pt in ([point(r)] if r in own else [pt for pt in points if all(r.params.get(k, v) == v for k, v in pt)]):
                cells[(pt, _label(r, dict(pt)))] = value(r)
        # The lab's own order (the ladder as its table declares it, as the rows came), peers last.
        first = {}
        for pt_v in cells:
            first.setdefault(pt_v[1], len(first))
        variants = sorted({v for _, v in cells}, key=lambda v: (v.endswith("]"), first[v]))
        width = 0.8 / max(len(variants), 1)
        fig, ax = plt.subplots(figsize=(min(18, max(9, 0.25 * len(points) * len(variants) + 3)), 5.5))
        colors = plt.get_cmap("tab20" if len(variants) > 10 else "tab10").colors
        for i, v in enumerate(variants):
            ax.bar([j + i * width for j in range(len(points))], [cells.get((pt, v), 0) for pt in points], width,
                   label=v, hatch="//" if v.endswith("]") else None, color=colors[i % len(colors)])
        if _lab_roof(rows) == roof:  # a bandwidth lab that also counts flops: no GB/s roof on a GFLOP/s axis
            _lab_roof_lines(ax, rows)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(points))])
        ax.set_xticklabels([" ".join(f"{k}={v}" for k, v in pt) for pt in points], fontsize=7, rotation=20, ha="right")
        shown = [v for v in cells.values() if v > 0]
        if shown and max(shown) > 20 * min(shown):
            ax.set_yscale("log")  # a ladder that climbs 60x (naive to cuBLAS): every rung stays readable
        gflops = roof == "fp32"  # the values follow the roof: an FP32 lab's peer without flops still reads GFLOP/s
        ax.set_ylabel("GFLOP/s (cold median)" if gflops else "GB/s (bytes read + written / cold median)")
        subtitle = "flops as the lab declares them" if gflops else "bytes = reads + writes; L2 flushed before every sample"
        ax.set_title(f"{lab} {dtype} on {_device_line(rows[0])}\n{subtitle}", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="best", ncol=2)
        name = _slug(f"points_{lab}_{dtype}") + ".png"
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        made.append({"file": name, "kind": "points", "lab": lab, "series": variants,
                     "sentence": f"{lab} ({dtype}): {'GFLOP/s' if gflops else 'GB/s'} of {len(variants)} variants and "
                                 f"peers at {len(points)} points."})
    return made


def roofline(recs: list[Record], out: str) -> list[dict]:
    ok = [r for r in recs if r.ok]
    if not ok:
        return []
    device = ok[0].run.get("device", {})
    sms = device.get("sm_count", 0)
    clock_ghz = device.get("sm_default_clock_khz", 0) / 1e6
    fp32 = max([r.data["roof"]["value"] for r in ok if r.data.get("roof", {}).get("name") == "fp32"] or
               [sms * 128 * 2 * clock_ghz])
    smem = sms * 32 * 4 * clock_ghz
    dram = device.get("peak_gbps", 0)
    l2 = device.get("measured_l2_gbps", 0)
    fig, (left, right) = plt.subplots(1, 2, figsize=(18, 7), gridspec_kw={"width_ratios": [3, 2], "wspace": 0.9})
    flops = [r for r in ok if r.data.get("flops", 0) > 0 and r.data["bytes"] > 0]
    import numpy as np

    # From 0.01 (or under the least intense result) to a decade past the most intense one (8192^3 f32
    # GEMM: 1365 FLOP per byte).
    intensities = [r.data["flops"] / (r.data.get("hardware_bytes") or r.data["bytes"]) for r in flops] or [1.0]
    xs = [min(0.01, min(intensities) / 3), max(10.0, 10 ** math.ceil(math.log10(max(intensities)) + 0.5))]
    ai = np.logspace(math.log10(xs[0]), math.log10(xs[1]), 200)
    for bw, name, style in ((dram, "DRAM theoretical", "-"), (device.get("measured_peak_gbps", 0), "DRAM measured", "--"),
                            (l2, "L2 measured", "-."), (smem, "shared memory", ":")):
        if bw:
            left.plot(ai, np.minimum(bw * ai, fp32) if fp32 else bw * ai, ls=style, color="gray", lw=1,
                      label=f"{name} {bw:.0f} GB/s")
    if fp32:
        left.axhline(fp32, color="black", lw=1, label=f"FP32 {fp32:.0f} GFLOP/s")
    else:  # files written before the SM clock was recorded
        left.plot([], [], color="black", lw=1, label="FP32 and shared memory: no SM clock in these files")
    # One point per lab and variant, its best case: a ladder reads as a column of rungs under the roofs.
    top = {}
    for r in flops:
        k = (r.lab, r.variant, r.params.get("dtype", ""))
        if k not in top or _value(r, "fp32") > _value(top[k], "fp32"):
            top[k] = r
    lab_colors = {lab: plt.get_cmap("tab10").colors[i % 10] for i, lab in enumerate(sorted({k[0] for k in top}))}
    markers = "o^vDPX*hp<>8"
    seen = defaultdict(int)
    for (lab, variant, dtype), r in top.items():
        # Bytes the memory system really moved where the lab models them (halos, re-reads), else the declared.
        moved = r.data.get("hardware_bytes") or r.data["bytes"]
        point = {k: v for k, v in r.params.items() if k not in ("dtype",)}
        left.scatter([r.data["flops"] / moved], [_value(r, "fp32")], color=lab_colors[lab], s=30,
                     marker="s" if _is_peer(r) else markers[seen[lab] % len(markers)],
                     label=f"{lab} {variant}{' [peer]' if _is_peer(r) else ''} ({dtype + ' ' if dtype else ''}"
                           + " ".join(f"{k}={v}" for k, v in point.items()) + ")")
        seen[lab] += 1
    if not l2:
        left.plot([], [], ls="-.", color="gray", lw=1, label="L2: not measured in these files (a lab with an L2 roof "
                                                              "measures it)")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlim(*xs)
    left.set_xlabel("arithmetic intensity (FLOP per DRAM byte: the lab's modelled bytes, else the declared)")
    left.set_ylabel("GFLOP/s (cold median)")
    left.set_title("results that declare flops (best case of each variant), under the roofs", fontsize=10)
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    # Bandwidth: each lab's best rung and best peer under the bandwidth roofs.
    best = {}
    for r in ok:
        if r.data.get("flops", 0) > 0:
            continue
        kind = "peer" if _is_peer(r) else "rung"
        k = (r.lab, kind)
        if k not in best or rate(r.data) > rate(best[k].data):
            best[k] = r
    labels = [f"{lab} {r.variant}" + (" [peer]" if kind == "peer" else "") for (lab, kind), r in sorted(best.items())]
    right.bar(range(len(labels)), [rate(r.data) for _, r in sorted(best.items())], color="tab:blue")
    for bw, name, style in ((dram, "DRAM theoretical", "-"), (device.get("measured_peak_gbps", 0), "DRAM measured", "--"),
                            (l2, "L2 measured", "-."), (smem, "shared memory", ":")):
        if bw:
            right.axhline(bw, ls=style, color="gray", lw=1, label=f"{name} {bw:.0f} GB/s")
    right.set_xticks(range(len(labels)))
    right.set_xticklabels(labels, fontsize=7, rotation=60, ha="right")
    right.set_yscale("log")
    right.set_ylabel("GB/s (best case of each)")
    right.set_title("bytes-only results: best rung and best peer per lab", fontsize=10)
    right.legend(fontsize=7)
    fig.suptitle(f"roofline on {_device_line(ok[0])}; bytes = the fewest the job must move, reads + writes", fontsize=11)
    fig.subplots_adjust(left=0.05, right=0.98, bottom=0.22, top=0.9)
    fig.savefig(os.path.join(out, "roofline.png"), dpi=110)
    plt.close(fig)
    return [{"file": "roofline.png", "kind": "roofline", "lab": "*",
             "series": [f"{lab}/{variant}" for lab, variant, _ in top] + [f"{lab}/{r.variant}" for (lab, _), r in best.items()],
             "sentence": f"{len(top)} variants' best results with flops placed by arithmetic intensity under the DRAM, L2, shared-"
                         f"memory and FP32 roofs; {len(best)} labs' best rungs and peers in GB/s beside them."}]


def time_tables(recs: list[Record], out: str) -> list[dict]:
    """Time per size per implementation (cold median, ms): the reference study's table."""
    made = []
    groups = defaultdict(dict)
    peers_of = defaultdict(dict)
    for r in recs:
        if r.ok and SIZE in r.params and all(v == 0 for k, v in r.params.items() if k.endswith("_offset")):
            fixed = {k: v for k, v in r.params.items() if k.endswith("_offset")}
            groups[(r.lab, r.params.get("dtype", ""))][(r.params[SIZE], _label(r, fixed))] = r.data["cold"]["median_ms"]
            peers_of[(r.lab, r.params.get("dtype", ""))][_label(r, fixed)] = _is_peer(r)
    for (lab, dtype), cells in sorted(groups.items()):
        sizes = sorted({n for n, _ in cells})
        impls = sorted({v for _, v in cells}, key=lambda v: (peers_of[(lab, dtype)][v], v))
        if len(sizes) < 3:
            continue
        lines = [f"Time per case, cold median (ms), {dtype}: memlab's variants and the peers, in one table as "
                 f"the reference study's.", "",
                 "| N | " + " | ".join(impls) + " |", "| ---: |" + " ---: |" * len(impls)]
        for n in sizes:
            lines.append(f"| {n} | " + " | ".join(f"{cells[(n, v)]:.6f}" if (n, v) in cells else "-" for v in impls) + " |")
        name = f"times_{lab}_{dtype}.md"
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        made.append({"file": name, "kind": "table", "lab": lab, "series": impls,
                     "sentence": f"{lab} {dtype}: time per size per implementation, cold median (ms)."})
    return made


KINDS = ("size", "sweep", "points", "roofline", "table")


def _covered_labs(recs: list[Record]) -> set:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return {m["lab"] for m in size_plots(recs, tmp) + sweep_plots(recs, tmp)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="memlab-plot",
                                 description="Plots of memlab results files (memlab's and memlab-peers'), merged: "
                                             "bandwidth against size, sweeps against their models, a roofline.")
    ap.add_argument("results", nargs="+", help="memlab.results/1 files")
    ap.add_argument("-o", "--out", required=True, help="folder for the PNGs, tables and index.md")
    ap.add_argument("--only", help=f"draw only these kinds, comma-separated: {', '.join(KINDS)} (default: all)")
    args = ap.parse_args(argv)
    kinds = set(args.only.split(",")) if args.only else set(KINDS)
    if kinds - set(KINDS):
        print(f"memlab-plot: --only: {sorted(kinds - set(KINDS))[0]!r} is not one of {', '.join(KINDS)}", file=sys.stderr)
        return 2
    try:
        recs = records(args.results)
    except ResultsError as e:
        print(f"memlab-plot: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    shown = size_plots(recs, args.out) if "size" in kinds else []
    shown += sweep_plots(recs, args.out) if "sweep" in kinds else []
    made = list(shown)
    if "points" in kinds:
        # Labs a size or sweep figure shows need no bars (decided on every kind, so --only points agrees).
        covered = {m["lab"] for m in shown} if {"size", "sweep"} <= kinds else _covered_labs(recs)
        made += point_plots(recs, args.out, skip_labs=covered)
    made += roofline(recs, args.out) if "roofline" in kinds else []
    made += time_tables(recs, args.out) if "table" in kinds else []
    with open(os.path.join(args.out, "index.md"), "w") as f:
        f.write("# memlab plots\n\nFrom: " + ", ".join(f"`{os.path.basename(p)}`" for p in args.results) + "\n\n")
        for m in made:
            if m["file"].endswith(".png"):
                f.write(f"## {m['file']}\n\n{m['sentence']}\n\n![{m['file']}]({m['file']})\n\n")
            else:
                f.write(f"## {m['file']}\n\n{m['sentence']} [{m['file']}]({m['file']})\n\n")
    print(f"memlab-plot: {len(made)} files in {args.out} (index.md lists them)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
