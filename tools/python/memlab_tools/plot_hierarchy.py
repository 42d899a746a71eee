"""Pictures of the hierarchy lab (memlab.results/1 files): latency against working set (log x, the
device's L1 and L2 sizes marked), per-load latency histograms (one panel per level), the per-SM L2
latency map, the TLB map (stride x working set), bandwidth against working set (TB/s and B/clk/SM, the
points of a grid smaller than the GPU greyed), the loaded-latency curve, Little's law (bytes in flight
per SM against DRAM bandwidth, beside bytes in flight / the DRAM latency) and the vector add on the
roofline beside the reference's claim.

    python -m memlab_tools.plot_hierarchy FILES... -o DIR

Everything is read from the records: params, gbps, gflops, sm_clock_mhz, model.sms_busy and
model.bytes_in_flight_per_sm, the lab's `measured` figures (cycles_per_load, ns_per_load,
hist_<lo>_<hi>, p50_cycles, sm<k>_cycles, load_gbps) and the run's device. A case measured more than
once (in several files, or twice in one) is one point: the median of its records, as each legend says.
The stream pictures (bandwidth, Little's law, roofline) take those records from the case's latest machine
session only (files created within SESSION_S of its newest): the stream kernels changed between sessions,
and a median over two kernels is neither's figure. A point whose latest session is older than the
picture's latest is drawn as such, with its files named.
What cannot be drawn for want of records is printed with the memlab command that would measure it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
L1_BYTES = 256 * KIB  # H100: 256 KiB of L1 + shared memory per SM (the L1 part is what smem leaves)
L1_BYTES_PER_CLK = 128  # an SM's L1 and shared memory: one 128-byte wavefront per clock (H100)
LINE = 128  # the chases' default node spacing (--node-stride): one node per cache line
DRAM_CHAIN = GIB  # a chase over at least this much (20x the H100's L2) is the DRAM plateau
# One machine session: a device machine is held at most 30 minutes, so files whose `created` times are further
# apart come from different sessions (and, for the streams, maybe different kernels: the first H100 session of
# 2026-11-25 ran the stream kernels before the whole-tile change, the second after it).
SESSION_S = 30 * 60

# The reference's roofline example (../shared/references/004_72feab931a699fac.txt, "Roofline Model"):
# vector addition, 1 FLOP per 12 bytes, "Peak bandwidth: 8 TB/s", "Roofline: 8000 GB/s x (1/12) = 667
# GFLOPS maximum", "Actual: ~600 GFLOPS (near roofline!)". Its GPU is not an H100 (HBM3e, 8 TB/s).
REFERENCE_ADD = {"peak_gbps": 8000.0, "roof_gflops": 667.0, "actual_gflops": 600.0, "ai": 1 / 12}

# One colour per stream rung in the bandwidth picture (its hollow grey markers must not shift a cycle).
STREAM_COLOURS = {"smem_dot": "tab:brown", "dot": "tab:green", "dot_l2": "tab:red", "dot_l2_all": "tab:purple",
                  "write": "tab:gray", "copy": "tab:orange", "add": "tab:blue", "triad": "tab:pink"}

# The per-load histograms, one panel per level: (panel title, rung, chain bytes). A level whose records
# are missing is named with the command that measures it (--steps 4096: 512 loads timed one by one).
HIST_LEVELS = (
    ("shared memory", "chase_shared", 32 * KIB),
    ("L1", "chase_l1", 32 * KIB),
    ("L2 (chain < half the L2)", "chase_l2", 8 * MIB),
    ("L2 past half its size", "chase_l2", 32 * MIB),
    ("HBM", "chase_l2", GIB),
)


def load(paths):
    """(records, device) from memlab.results/1 files: every ok record of the hierarchy lab."""
    records, device = [], {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        device = device or d.get("device", {})
        for r in d.get("results", []):
            if r.get("lab") == "hierarchy" and r.get("status") == "ok":
                r = dict(r)
                r["_file"] = os.path.basename(p)
                r["_created"] = d.get("created", "")
                records.append(r)
    return records, device


def save(f, out, name, rect=(0, 0, 1, 1)):
    """Lays the figure out (in `rect`, figure fractions), writes it as out/name (130 dpi), closes it; returns the
    path."""
    p = os.path.join(out, name)
    f.tight_layout(rect=rect)
    f.savefig(p, dpi=130)
    plt.close(f)
    return p


def measured(r, key):
    """The value of the record's measured figure `key`, or None."""
    v = r.get("measured", {}).get(key)
    return v["value"] if v else None


def bytes_of(r):
    return 4 * int(r["params"]["n"])


def stride_of(r):
    p = r["params"]
    return p.get("node_stride", p.get("stride", LINE))  # "stride" in files before the axis was named for its unit


def label_bytes(b):
    for unit, s in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if b >= unit:
            return f"{b / unit:g} {s}"
    return f"{b} B"


def size_arg(b):
    """A size as memlab's --sizes grammar writes it: 32KiB, 8MiB, 1GiB."""
    return label_bytes(b).replace(" ", "")


def files_of(rs):
    return ", ".join(sorted({r["_file"] for r in rs if "_file" in r}))


def created_s(r):
    """The POSIX time of the record's file (`created`, ISO 8601 UTC), or None."""
    try:
        return datetime.fromisoformat(r.get("_created", "").replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def latest_session(rs):
    """The records of one case from its latest machine session: those of files created within SESSION_S of the
    newest file that holds the case. Records without a `created` time: all of them, as one session."""
    ts = [created_s(r) for r in rs]
    if None in ts:
        return list(rs)
    return [r for r, t in zip(rs, ts) if max(ts) - t <= SESSION_S]


def stamp(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def mark_earlier(points):
    """Sets `earlier` on each point (a dict with `newest`, the newest `created` of its records): True where that
    is more than SESSION_S older than the newest point's, so the point was measured only in an earlier session.
    Returns a legend line naming those points' files and sessions, or None when there are none."""
    ts = [p["newest"] for p in points if p.get("newest") is not None]
    for p in points:
        p["earlier"] = bool(ts) and p.get("newest") is not None and max(ts) - p["newest"] > SESSION_S
    old = [p for p in points if p["earlier"]]
    if not old:
        return None
    files = sorted({f for p in old for f in p["files"].split(", ")})
    span = sorted({stamp(p["newest"]) for p in old})
    when = span[0] if len(span) == 1 else f"{span[0]} to {span[-1][11:]}"
    return f"earlier session only ({when}, before {stamp(max(ts))}): {', '.join(files)}"


def group(records, key):
    """{key(r): [records]} in first-seen order."""
    g = defaultdict(list)
    for r in records:
        g[key(r)].append(r)
    return g


# ---- the figures the pictures stand on (the tests check these) ------------------------------------------------

def dram_latency(records):
    """The DRAM plateau: the median `ns_per_load` and `cycles_per_load` over the chase_l2 records (random
    chase, one node per line) whose chain is at least 1 GiB. None without such records."""
    rs = [r for r in records if r["variant"] == "chase_l2" and stride_of(r) == LINE and bytes_of(r) >= DRAM_CHAIN
          and measured(r, "ns_per_load")]
    if not rs:
        return None
    return {"ns": statistics.median(measured(r, "ns_per_load") for r in rs),
            "cycles": statistics.median(measured(r, "cycles_per_load") for r in rs),
            "records": len(rs), "files": files_of(rs), "sizes": sorted({bytes_of(r) for r in rs})}


def latency_series(records):
    """{(rung, node spacing): {chain bytes: (cycles, ns, records)}}: the chases of the latency picture,
    the median of each case's records."""
    keep = [r for r in records if measured(r, "cycles_per_load") is not None
            and r["variant"] in ("chase_shared", "chase_l1", "chase_l2", "chase_stride")
            and not (r["variant"] == "chase_stride" and stride_of(r) != LINE)]
    series = defaultdict(dict)
    for (v, s, b), rs in group(keep, lambda r: (r["variant"], stride_of(r), bytes_of(r))).items():
        series[(v, s)][b] = (statistics.median(measured(r, "cycles_per_load") for r in rs),
                             statistics.median(measured(r, "ns_per_load") for r in rs), len(rs))
    return dict(series)


def histogram_levels(records):
    """One entry per HIST_LEVELS row: the summed per-load histogram of that rung's records at that size
    (node spacing one line), or, where no record has one, `missing`: the memlab command that measures it."""
    levels = []
    for title, variant, size in HIST_LEVELS:
        rs = [r for r in records if r["variant"] == variant and bytes_of(r) == size and stride_of(r) == LINE
              and any(k.startswith("hist_") for k in r.get("measured", {}))]
        entry = {"title": title, "variant": variant, "bytes": size}
        if not rs:
            entry["missing"] = f"memlab run hierarchy --variant {variant} --sizes {size_arg(size)} --steps 4096"
            levels.append(entry)
            continue
        counts = defaultdict(float)
        for r in rs:
            for k, v in r["measured"].items():
                if k.startswith("hist_"):
                    _, lo, hi = k.split("_")
                    counts[(int(lo), int(hi))] += v["value"]
        entry.update(buckets=dict(sorted(counts.items())), loads=int(sum(counts.values())), records=len(rs),
                     files=files_of(rs), mean_cycles=statistics.median(measured(r, "cycles_per_load") for r in rs),
                     p50_cycles=statistics.median(measured(r, "p50_cycles") for r in rs
                                                  if measured(r, "p50_cycles") is not None))
        levels.append(entry)
    return levels


def achieved_gbps(r):
    """The cold median for DRAM-bound cases (the L2 flushed first, as a stream from DRAM is); the batch
    median for L2- and L1-resident ones (back-to-back launches: the data stays where it lives)."""
    return r.get("batch_gbps", 0) if r["roof"]["name"] in ("l2", "smem") else r["gbps"]


def sms_busy(r, device):
    return r.get("model", {}).get("sms_busy") or device.get("sm_count", 132)


def newest_of(rs):
    ts = [t for t in (created_s(r) for r in rs) if t is not None]
    return max(ts) if ts else None


def bandwidth_points(records, device):
    """{rung: {bytes per array: point}} of the bandwidth sweep (--ilp 4 --ctas-per-sm 4, automatic
    passes), each point the median of its latest session's records: tbps, b_per_clk_sm, sms_busy, full (the
    grid covers every SM: a level's figure; else a part of the GPU, not a plateau), records, files, newest,
    earlier (measured only in a session older than the newest point's: mark_earlier)."""
    sms = device.get("sm_count", 132)
    keep = [r for r in records if not r.get("measured") and r["gbps"] > 0 and "ilp" in r["params"]
            and r["params"].get("ilp") == 4 and r["params"].get("ctas_per_sm") == 4
            and r["params"].get("passes", 0) == 0]
    points = defaultdict(dict)
    for (v, b), rs in group(keep, lambda r: (r["variant"], bytes_of(r))).items():
        rs = latest_session(rs)
        busy = min(sms_busy(r, device) for r in rs)
        per_sm = [achieved_gbps(r) * 1e3 / (r["sm_clock_mhz"] * sms_busy(r, device)) for r in rs if r["sm_clock_mhz"]]
        points[v][b] = {"tbps": statistics.median(achieved_gbps(r) for r in rs) / 1e3,
                        "b_per_clk_sm": statistics.median(per_sm) if per_sm else math.nan,
                        "sms_busy": busy, "full": busy >= sms, "records": len(rs), "files": files_of(rs),
                        "newest": newest_of(rs)}
    mark_earlier([p for pts in points.values() for p in pts.values()])
    return dict(points)


def littles_law_model(records, device):
    """The Little's-law picture's figures: points {(ilp, ctas_per_sm): (bytes in flight per SM, GB/s,
    records)} of `dot` over >= 1 GiB arrays (the cold median, the median over the latest session's records),
    `earlier` (the keys of points measured only in an older session than the newest point's) and its legend
    line `earlier_note`, the DRAM latency (dram_latency), the bandwidth 90% of the theoretical peak asks, the
    bytes in flight per SM Little's law asks for it at that latency, and the smallest measured bytes in
    flight per SM that reached it."""
    rs = [r for r in records if r["variant"] == "dot" and bytes_of(r) >= GIB and r["gbps"] > 0
          and r.get("model", {}).get("bytes_in_flight_per_sm")]
    points, sessions = {}, {}
    for (ilp, ctas), g in group(rs, lambda r: (r["params"]["ilp"], r["params"]["ctas_per_sm"])).items():
        g = latest_session(g)
        points[(ilp, ctas)] = (g[0]["model"]["bytes_in_flight_per_sm"], statistics.median(r["gbps"] for r in g), len(g))
        sessions[(ilp, ctas)] = {"files": files_of(g), "newest": newest_of(g)}
    earlier_note = mark_earlier(list(sessions.values()))
    lat = dram_latency(records)
    peak = device.get("peak_gbps", 0.0)
    sms = device.get("sm_count", 132)
    target = 0.9 * peak
    reached = sorted((b, -gbps, k) for k, (b, gbps, _) in points.items() if target and gbps >= target)
    return {"points": points, "earlier": {k for k, p in sessions.items() if p["earlier"]},
            "earlier_note": earlier_note, "latency": lat, "peak_gbps": peak, "target_gbps": target, "sms": sms,
            "law_bytes_per_sm": target * 1e9 * lat["ns"] * 1e-9 / sms if lat and target else None,
            "first_reached": (reached[0][0], -reached[0][1], reached[0][2]) if reached else None}


def roofline_points(records, min_bytes=256 * MIB):
    """[point] of `add` and `triad` over DRAM-sized arrays (>= 256 MiB each), one per rung and size:
    the median of its latest session's records' GFLOP/s (each record's from its cold median), flop per byte,
    records, files, earlier (measured only in a session older than the newest point's)."""
    rs = [r for r in records if r["variant"] in ("add", "triad") and r["gbps"] > 0 and r.get("flops")
          and bytes_of(r) >= min_bytes]
    pts = []
    for (v, b), g in sorted(group(rs, lambda r: (r["variant"], bytes_of(r))).items()):
        g = latest_session(g)
        pts.append({"variant": v, "bytes": b, "ai": statistics.median(r["flops"] / r["bytes"] for r in g),
                    "gflops": statistics.median(r["gflops"] for r in g), "records": len(g), "files": files_of(g),
                    "newest": newest_of(g)})
    mark_earlier(pts)
    return pts


# ---- the pictures ------------------------------------------------------------------------------------------------

def mark_levels(ax, device, aggregate=False):
    """Dotted: the L1 (per SM, or every SM's together where `aggregate`); dashed: the L2 and its half. The
    labels sit at fixed heights of the axes, so that they do not overlap whatever the y scale."""
    sms = device.get("sm_count", 132)
    l1 = L1_BYTES * sms if aggregate else L1_BYTES
    l1_text = f"L1 of all {sms} SMs: {label_bytes(l1)} " if aggregate else " L1 + shared 256 KiB/SM"
    l2 = device.get("l2_bytes", 50 * MIB)
    at = ax.get_xaxis_transform()  # x in data, y in axes fraction
    ax.axvline(l1, color="gray", ls=":", lw=1)
    ax.text(l1, 0.80 if aggregate else 0.98, l1_text, transform=at, va="top", ha="right" if aggregate else "left",
            fontsize=7, color="dimgray")
    ax.axvline(l2 / 2, color="gray", ls="--", lw=1)
    ax.text(l2 / 2, 0.98, "L2 / 2 ", transform=at, va="top", ha="right", fontsize=7, color="dimgray")
    ax.axvline(l2, color="gray", ls="--", lw=1)
    ax.text(l2, 0.98, f" L2 {label_bytes(l2)}", transform=at, va="top", ha="left", fontsize=7, color="dimgray")


def latency_vs_working_set(records, device, out):
    series = latency_series(records)
    if not series:
        return None
    f, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.8))
    for (v, s), pts in sorted(series.items()):
        xs = sorted(pts)
        label = f"{v} ({s} B nodes)" + (f", {len(xs)} sizes" if len(xs) < 4 else "")
        style = {"marker": "o", "ms": 3} if len(xs) >= 4 else {"marker": "s", "ms": 5, "ls": "none"}
        for a, i in ((a1, 0), (a2, 1)):
            a.plot(xs, [pts[x][i] for x in xs], label=label, **style)
    for a, unit in ((a1, "cycles (clock64)"), (a2, "ns (%globaltimer)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("working set: the chain's bytes")
        a.set_ylabel(f"latency per dependent load, {unit}")
        a.grid(True, which="both", alpha=0.3)
        a.set_ylim(0, a.get_ylim()[1] * 1.08)
        mark_levels(a, device)
    a1.legend(fontsize=7, loc="center left")
    f.suptitle(f"Pointer-chase latency against working set, {device.get('name', '')} "
               "(a case measured in several runs: their median)", fontsize=11)
    return save(f, out, "hierarchy_latency_ws.png")


def histograms(records, out, notes=None):
    levels = histogram_levels(records)
    drawn = [lv for lv in levels if "buckets" in lv]
    for lv in levels:
        if "missing" in lv and notes is not None:
            notes.append(f"histogram of {lv['title']} not drawn: no {lv['variant']} record at "
                         f"{label_bytes(lv['bytes'])} with hist_ fields; measure it with `{lv['missing']}`")
    if not drawn:
        return None
    f, axes = plt.subplots(1, len(drawn), figsize=(3.3 * len(drawn) + 0.6, 3.9), squeeze=False)
    for ax, lv in zip(axes[0], drawn):
        edges = list(lv["buckets"])
        ax.bar([lo for lo, _ in edges], [n / lv["loads"] for n in lv["buckets"].values()],
               width=[hi - lo for lo, hi in edges], align="edge", color="tab:blue", edgecolor="white", lw=0.5)
        ax.axvline(lv["mean_cycles"], color="k", ls="--", lw=1, label=f"walk's mean: {lv['mean_cycles']:.1f}")
        if lv["p50_cycles"] is not None:
            ax.axvline(lv["p50_cycles"], color="tab:red", ls=":", lw=1.2,
                       label=f"timed alone, p50: {lv['p50_cycles']:.0f}")
        lo, hi = edges[0][0], edges[-1][1]
        pad = max(16, (hi - lo) * 0.08)
        ax.set_xlim(min(lo, lv["mean_cycles"]) - pad, hi + pad)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{lv['title']}\n{lv['variant']}, {label_bytes(lv['bytes'])}: {lv['loads']} loads, "
                     f"{lv['records']} run{'s' if lv['records'] > 1 else ''}", fontsize=8)
        ax.set_xlabel("cycles per load (16-cycle buckets)", fontsize=8)
        ax.legend(fontsize=6.5, loc="upper right")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("fraction of the timed loads")
    f.suptitle("Per-load latency by level: each load timed alone (clock64 around it, a shared store after: "
               "the offset from the walk's mean)", fontsize=9)
    return save(f, out, "hierarchy_latency_histograms.png")


def per_sm_map(records, out):
    rs = [r for r in records if r["variant"] == "chase_l2_per_sm"]
    if not rs:
        return None
    f, axes = plt.subplots(len(rs), 1, figsize=(12, 2.6 * len(rs)), squeeze=False)
    for ax, r in zip(axes[:, 0], sorted(rs, key=bytes_of)):
        sms = sorted((int(k[2:-7]), v["value"]) for k, v in r["measured"].items()
                     if k.startswith("sm") and k.endswith("_cycles"))
        ax.bar([s for s, _ in sms], [c for _, c in sms], width=0.9)
        lo, hi = min(c for _, c in sms), max(c for _, c in sms)
        ax.set_ylim(lo * 0.9, hi * 1.05)
        ax.set_ylabel("cycles / load")
        ax.set_title(f"chase_l2_per_sm, {label_bytes(bytes_of(r))}: each SM's own .cg chase, all at once "
                     f"({lo:.0f}-{hi:.0f} cycles; the axis starts at {lo * 0.9:.0f})", fontsize=9)
    axes[-1, 0].set_xlabel("SM id (%smid)")
    return save(f, out, "hierarchy_per_sm_map.png")


def tlb_map(records, out):
    rs = [r for r in records if r["variant"] == "chase_stride" and stride_of(r) > LINE
          and measured(r, "cycles_per_load") is not None]
    if not rs:
        return None
    strides = sorted({stride_of(r) for r in rs})
    sizes = sorted({bytes_of(r) for r in rs})
    grid = [[math.nan] * len(sizes) for _ in strides]
    for (s, b), g in group(rs, lambda r: (stride_of(r), bytes_of(r))).items():
        grid[strides.index(s)][sizes.index(b)] = statistics.median(measured(r, "cycles_per_load") for r in g)
    f, ax = plt.subplots(figsize=(9, 4.8))
    im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
    ax.set_xticks(range(len(sizes)), [label_bytes(s) for s in sizes], rotation=45, fontsize=7)
    ax.set_yticks(range(len(strides)), [label_bytes(s) for s in strides], fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.0f}\n{sizes[j] // strides[i]} nodes", ha="center", va="center", fontsize=6,
                        color="w" if v < 500 else "k")
    ax.set_xlabel("working set (blank: fewer than two nodes)")
    ax.set_ylabel("stride (node spacing)")
    f.colorbar(im, label="cycles per dependent load")
    ax.set_title("TLB map: stride chase in address order, cycles per load\n"
                 "(~32: every node an L1 hit, ~283: an L2 hit, ~690: a DRAM access per load)", fontsize=9)
    return save(f, out, "hierarchy_tlb_map.png")


def bandwidth_vs_working_set(records, device, out):
    points = bandwidth_points(records, device)
    if not points:
        return None
    sms = device.get("sm_count", 132)
    f, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.8))
    partial_edge = 0
    earlier_note = mark_earlier([p for pts in points.values() for p in pts.values()])  # its legend line
    for v, pts in sorted(points.items()):
        xs = sorted(pts)
        part = [x for x in xs if not pts[x]["full"]]
        old = [x for x in xs if pts[x]["earlier"]]
        colour = STREAM_COLOURS.get(v, None)
        for a, key in ((a1, "tbps"), (a2, "b_per_clk_sm")):
            line, = a.plot(xs, [pts[x][key] for x in xs], marker="o", ms=3, label=v, color=colour)
            if part:
                a.plot(part, [pts[x][key] for x in part], ls="none", marker="o", ms=6, mfc="white", mec="gray",
                       zorder=3)
            if old:  # a cross over the dot: this size was not measured again with the latest kernels
                a.plot(old, [pts[x][key] for x in old], ls="none", marker="x", ms=5, mew=1.1,
                       color=line.get_color(), zorder=4)
        partial_edge = max([partial_edge] + [x for x in xs if not pts[x]["full"]])
    peak = device.get("peak_gbps", 0) / 1e3
    if peak:
        a1.axhline(peak, color="k", ls=":", lw=1, label=f"HBM theoretical {peak:.2f} TB/s")
    for a, yl in ((a1, "TB/s (reads + writes)"), (a2, "bytes per clock per busy SM")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("bytes per array (write: 1 array, dot and copy: 2, add and triad: 3)")
        a.set_ylabel(yl)
        a.grid(True, which="both", alpha=0.3)
        if partial_edge:
            a.axvspan(a.get_xlim()[0], partial_edge * 1.41, color="gray", alpha=0.15, lw=0)
            a.text(a.get_xlim()[0], a.get_ylim()[0], f"  grey: grid < {sms} SMs (model.sms_busy),\n"
                   "  a part of the GPU, not a plateau", fontsize=7, va="bottom", color="dimgray")
        mark_levels(a, device, aggregate=True)
    # What one H100 SM's L1 hit path and LDS.128 deliver at most (docs/notes/hierarchy_l1_bandwidth.md).
    a2.axhline(L1_BYTES_PER_CLK, color="k", ls=":", lw=1)
    a2.set_ylim(top=max(a2.get_ylim()[1], 3 * L1_BYTES_PER_CLK))  # room above it for the labels
    a2.text(a2.get_xlim()[0], L1_BYTES_PER_CLK, f"  {L1_BYTES_PER_CLK} B/clk/SM: the L1's and LDS.128's ceiling",
            ha="left", va="bottom", fontsize=7, color="dimgray")
    if earlier_note:
        a1.plot([], [], ls="none", marker="x", color="k", label="x: not measured again (below)")
    a1.legend(fontsize=7, loc="lower right")
    f.suptitle("Bandwidth against working set (--ilp 4 --ctas-per-sm 4): hollow grey points had fewer CTAs "
               "than SMs; a case in several runs: the median of its latest session's", fontsize=10)
    if earlier_note:
        f.text(0.5, 0.01, f"x: {earlier_note}", ha="center", va="bottom", fontsize=8, color="dimgray")
    return save(f, out, "hierarchy_bandwidth_ws.png", rect=(0, 0.04 if earlier_note else 0, 1, 1))


def loaded_points(records, device):
    """{chain bytes: [(TB/s the other SMs draw, probe ns per load, SMs streaming)]} of loaded_chase over
    chains larger than the L2 (a smaller chain's probe measures the L2, not DRAM under load), sorted by
    bandwidth; a case in several records: their median."""
    l2 = device.get("l2_bytes", 50 * MIB)
    rs = [r for r in records if r["variant"] == "loaded_chase" and measured(r, "ns_per_load") and bytes_of(r) > l2]
    return {b: sorted((statistics.median((measured(r, "load_gbps") or 0.0) / 1e3 for r in gg),
                       statistics.median(measured(r, "ns_per_load") for r in gg), c)
                      for c, gg in group(g, lambda r: r["params"].get("load_ctas", 0)).items())
            for b, g in sorted(group(rs, bytes_of).items())}


def loaded_latency(records, device, out):
    curves = loaded_points(records, device)
    if not curves:
        return None
    f, ax = plt.subplots(figsize=(7.5, 4.8))
    for b, pts in curves.items():
        style = {"marker": "o"} if len(pts) > 1 else {"marker": "s", "ls": "none"}
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{label_bytes(b)} chain", **style)
        if len(pts) > 1:
            for x, y, c in pts:
                ax.annotate(str(c), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    lat = dram_latency(records)
    if lat:
        ax.axhline(lat["ns"], color="gray", ls=":", lw=1, label=f"unloaded DRAM latency {lat['ns']:.0f} ns (chase_l2)")
    ax.set_xlabel("bandwidth the other SMs draw from DRAM (TB/s)")
    ax.set_ylabel("probe's DRAM latency (ns per dependent .cg load)")
    ax.set_ylim(0, ax.get_ylim()[1])
    ax.set_title("Loaded latency (labels: SMs streaming)")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
    return save(f, out, "hierarchy_loaded_latency.png")


def littles_law(records, device, out):
    m = littles_law_model(records, device)
    if len(m["points"]) < 3 or not m["latency"]:
        return None
    lat, sms, peak = m["latency"], m["sms"], m["peak_gbps"] / 1e3
    f, ax = plt.subplots(figsize=(8, 5.2))
    pts = sorted(m["points"].items(), key=lambda kv: kv[1][0])
    new = [(b, g) for k, (b, g, _) in pts if k not in m["earlier"]]
    old = [(b, g) for k, (b, g, _) in pts if k in m["earlier"]]
    ax.scatter([b / KIB for b, _ in new], [g / 1e3 for _, g in new], zorder=3, color="tab:blue",
               label="dot, 1 GiB arrays (labels: ILP x CTAs per SM)")
    if old:
        note = m["earlier_note"].replace(" (", "\n(", 1).replace(", before", ",\nbefore", 1)
        ax.scatter([b / KIB for b, _ in old], [g / 1e3 for _, g in old], zorder=3, facecolors="none",
                   edgecolors="tab:blue", label=f"hollow: {note}")
    for (ilp, ctas), (b, g, _) in pts:
        ax.annotate(f"{ilp}x{ctas}", (b / KIB, g / 1e3), fontsize=6, xytext=(4, -8), textcoords="offset points")
    xs = [2 ** (i / 8) for i in range(0, 8 * 10 + 1)]
    ax.plot(xs, [x * KIB * sms / (lat["ns"] * 1e-9) / 1e12 for x in xs], "k--", lw=1,
            label=f"bytes in flight x {sms} SMs / {lat['ns']:.0f} ns (DRAM latency)")
    if peak:
        ax.axhline(peak, color="r", ls=":", lw=1, label=f"HBM theoretical {peak:.2f} TB/s")
        ax.axhline(0.9 * peak, color="r", ls="--", lw=0.8, label=f"90%: {0.9 * peak:.2f} TB/s")
    if m["law_bytes_per_sm"]:
        x = m["law_bytes_per_sm"] / KIB
        ax.axvline(x, color="gray", ls="--", lw=0.8)
        ax.text(x, 0.12, f" Little's law\n at {lat['ns']:.0f} ns:\n {x:.1f} KiB/SM\n for 90%", fontsize=7)
    if m["first_reached"]:
        b, g, (ilp, ctas) = m["first_reached"]
        ax.axvline(b / KIB, color="tab:green", ls="-", lw=1)
        ax.text(b / KIB, 0.12, f" measured: {b / KIB:.0f} KiB/SM is the\n least that reached 90%\n"
                f" (--ilp {ilp} --ctas-per-sm {ctas}:\n {g:.0f} GB/s)", fontsize=7, color="tab:green")
    ax.set_xscale("log", base=2)
    ax.set_xlim(2, 2 ** 10)
    ax.set_ylim(0, (peak or 3.5) * 1.15)
    ax.set_xlabel("bytes in flight per SM (KiB): CTAs x 256 threads x ILP x 16 B x 2 arrays (model)")
    ax.set_ylabel("achieved TB/s (cold median; several runs: median)")
    ax.legend(fontsize=7, loc="center right")
    ax.grid(True, alpha=0.3)
    ax.set_title("Little's law on H100 DRAM: bandwidth = bytes in flight / latency\n"
                 f"latency: {lat['ns']:.1f} ns ({lat['cycles']:.0f} cycles), the median of {lat['records']} chase_l2 "
                 f"records >= 1 GiB\n({lat['files']})", fontsize=9)
    return save(f, out, "hierarchy_littles_law.png")


def roofline_add(records, device, out):
    pts = roofline_points(records)
    if not pts:
        return None
    rs = [r for r in records if r["variant"] in ("add", "triad") and r.get("sm_clock_mhz")]
    sms = device.get("sm_count", 132)
    clock = max((r["sm_clock_mhz"] for r in rs), default=1980)
    fp32 = sms * 128 * 2 * clock * 1e6 / 1e9  # GFLOP/s
    peak = device.get("peak_gbps", 3352)
    measured_peak = device.get("measured_peak_gbps", 0)
    ref = REFERENCE_ADD
    f, ax = plt.subplots(figsize=(8.5, 5))
    xs = [2 ** (i / 8) for i in range(-8 * 7, 8 * 7 + 1)]
    ax.plot(xs, [min(fp32, x * peak) for x in xs], "k-", lw=1,
            label=f"H100 roof: {peak / 1e3:.2f} TB/s HBM, {fp32 / 1e3:.0f} TFLOP/s FP32")
    if measured_peak:
        ax.plot(xs, [min(fp32, x * measured_peak) for x in xs], "k:", lw=1,
                label=f"H100 measured ceiling: cudaMemcpy {measured_peak / 1e3:.2f} TB/s")
    ax.plot(xs, [x * ref["peak_gbps"] for x in xs], color="tab:purple", ls="--", lw=0.8,
            label="the reference's GPU: 8 TB/s (HBM3e)")
    ax.scatter([ref["ai"]], [ref["actual_gflops"]], marker="*", s=140, color="tab:purple", zorder=3,
               label=f"the reference's vector add: ~{ref['actual_gflops']:.0f} of {ref['roof_gflops']:.0f} GFLOP/s "
                     f"({ref['actual_gflops'] / ref['roof_gflops']:.0%})")
    largest = {v: max(p["bytes"] for p in pts if p["variant"] == v) for v in {p["variant"] for p in pts}}
    for p in pts:
        roof = p["ai"] * peak
        big = p["bytes"] == largest[p["variant"]]  # smaller arrays: a larger hollow marker around the same spot
        colour = "tab:blue" if p["variant"] == "add" else "tab:orange"
        ax.scatter([p["ai"]], [p["gflops"]], zorder=3 if big else 2, marker="o" if p["variant"] == "add" else "^",
                   s=30 if big else 110, color=colour if big else "none", edgecolors=colour,
                   label=f"{p['variant']}, {label_bytes(p['bytes'])} arrays: {p['gflops']:.0f} of {roof:.0f} GFLOP/s "
                         f"({p['gflops'] / roof:.0%}; median of {p['records']} "
                         f"record{'s' if p['records'] > 1 else ''}"
                         f"{', an earlier session' if p['earlier'] else ''})")
    ax.axvline(ref["ai"], color="gray", ls=":", lw=1)
    ax.text(ref["ai"], 40, " c = a + b: 1 FLOP / 12 B", fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(2 ** -7, 2 ** 7)
    ax.set_ylim(30, fp32 * 2)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=6.5, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Vector add on the roofline, beside the reference's claim\n(another GPU: compare the fraction of "
                 "each roof, not the GFLOP/s)", fontsize=10)
    return save(f, out, "hierarchy_roofline_add.png")


def plot_hierarchy(records, out, device=None, notes=None):
    """Writes every picture the records allow into `out`; returns their paths. What is not drawn for want
    of records goes to `notes` (a list), with the command that would measure it."""
    device = device or {}
    os.makedirs(out, exist_ok=True)
    made = [latency_vs_working_set(records, device, out), histograms(records, out, notes),
            per_sm_map(records, out), tlb_map(records, out), bandwidth_vs_working_set(records, device, out),
            loaded_latency(records, device, out), littles_law(records, device, out),
            roofline_add(records, device, out)]
    return [p for p in made if p]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    records, device = load(a.files)
    notes = []
    for p in plot_hierarchy(records, a.out, device, notes):
        print(p)
    for n in notes:
        print(f"plot_hierarchy: {n}", file=sys.stderr)


if __name__ == "__main__":
    main()
