"""Pictures of the hierarchy lab (memlab.results/1 files), each titled with the GPU of the runs: latency against
working set (log x, the device's L1 and L2 sizes marked), per-load latency histograms (one panel per level), each
SM's own L2 and DRAM latency as its deviation from the median over the SMs, address translation (latency per
dependent load against the 2 MiB pages a random walk spreads over: DRAM-missing and L2-hitting hops), bandwidth
against working set (TB/s and B/clk/SM, the points of a grid smaller than the GPU greyed), the loaded-latency
curve, Little's law (bytes in flight per SM against DRAM bandwidth, beside bytes in flight / the DRAM latency)
and the vector add on this GPU's roofline, with the fraction of its own roof set beside a tutorial's claim.

    python -m memlab_tools.plot_hierarchy FILES... -o DIR

The rungs each picture draws are picked by what memlab's table says their kernels are (the rungs' facts in
memlab_tools.table: a chase's load path and walk order, a stream's arrays and FLOPs), never by name, so a renamed or
added rung is drawn where it belongs. Everything else is read from the records: params, gbps, gflops, sm_clock_mhz,
model.sms_busy, model.nodes and model.bytes_in_flight_per_sm, the lab's `measured` figures (cycles_per_load,
ns_per_load, hist_<lo>_<hi>, p50_cycles, sm<k>_cycles, load_gbps) and the run's device. A case measured more than
once (in several files, or twice in one) is one point: the median of its records, as each legend says.
The stream pictures (bandwidth, Little's law, roofline) take those records from the case's latest machine
session only (files created within SESSION_S of its newest): the stream kernels changed between sessions,
and a median over two kernels is neither's figure. A point measured only before the stream kernels of today
(STREAM_KERNELS_SINCE) is drawn as such, with its files named.
What cannot be drawn for want of records is printed with the memlab command that would measure it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict
from datetime import datetime, timezone
from functools import lru_cache

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from memlab_tools import table  # noqa: E402

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
L1_BYTES = 256 * KIB  # H100: 256 KiB of L1 + shared memory per SM (the L1 part is what smem leaves)
L1_BYTES_PER_CLK = 128  # an SM's L1 and shared memory: one 128-byte wavefront per clock (H100)
LINE = 128  # the chases' default node spacing (--node-stride): one node per cache line
PAGE = 2 * MIB  # the GPU's page for cudaMalloc'd memory (H100: 2 MiB): the translation picture counts these
L1_LINES_BYTES = 128 * KIB  # lines an ld.global chase keeps in the H100's L1 (its plateau holds to 128 KiB)
DRAM_CHAIN = GIB  # a chase over at least this much (20x the H100's L2) is the DRAM plateau
# One machine session: a device machine is held at most 30 minutes, so files whose `created` times are further
# apart come from different sessions (and, for the streams, maybe different kernels: the first H100 session of
# 2026-11-25 ran the stream kernels before the whole-tile change, the second after it).
SESSION_S = 30 * 60
# When the stream kernels of today were first measured: the whole-tile kernels (docs/notes/hierarchy_l1_bandwidth.md),
# in the H100 session from 16:03 UTC on 2026-11-25. A stream point whose records all predate it ran the kernels they
# replaced and is drawn as such; a later session of the same kernels (the Little's-law sweep of 2026-11-27) is not
# "earlier" than another. A change of the stream kernels moves this time.
STREAM_KERNELS_SINCE = datetime(2026, 11, 25, 15, 30, tzinfo=timezone.utc).timestamp()

# A tutorial's roofline example (the chapter "Memory Access Patterns" of the code accompanying AI Systems
# Performance Engineering, github.com/cfregly/ai-performance-engineering, code/ch7/README.md, "Roofline Model"):
# vector addition, 1 FLOP per 12 bytes, "Peak bandwidth: 8 TB/s", "Roofline: 8000 GB/s x (1/12) = 667
# GFLOPS maximum", "Actual: ~600 GFLOPS (near roofline!)". Its GPU is not an H100 (HBM3e, 8 TB/s).
REFERENCE_ADD = {"peak_gbps": 8000.0, "roof_gflops": 667.0, "actual_gflops": 600.0, "ai": 1 / 12}

LAB = "hierarchy"
# One colour per stream rung, in the table's order (the bandwidth picture's hollow grey markers must not shift a
# cycle); the roofline's markers, in the table's order of the rungs it draws.
STREAM_PALETTE = ("tab:brown", "tab:green", "tab:red", "tab:purple", "tab:gray", "tab:orange", "tab:olive",
                  "tab:blue", "tab:pink", "tab:cyan")
ROOFLINE_MARKERS = ("o", "^", "s", "D", "v")
SM_CYCLES = re.compile(r"sm(\d+)_cycles")  # the per-SM chase's measured figure of SM k: sm<k>_cycles


# ---- the rungs, picked from the table by their facts -----------------------------------------------------------

def rung_with(**facts):
    """The one rung of the lab whose facts hold all of `facts` (memlab_tools.table.rungs_with); a ValueError when the
    table has none or several: a picture that cannot say which rung it draws must not guess."""
    found = table.rungs_with(LAB, **facts)
    if len(found) != 1:
        raise ValueError(f"plot_hierarchy: {len(found)} rungs of the {LAB} table with {facts}: {found}")
    return found[0]


@lru_cache(maxsize=None)
def chase(path, order="random"):
    """The chase of one walker over the chain through `path` (l1: ld.global, l2: ld.global.cg, shared), in `order`."""
    return rung_with(kind="chase", path=path, order=order, per_sm=False)


@lru_cache(maxsize=None)
def per_sm_chase():
    """The chase with one walker on every SM at once (each SM's own latency)."""
    return rung_with(kind="chase", per_sm=True)


@lru_cache(maxsize=None)
def chase_under_load():
    """The chase of one SM while other SMs stream from DRAM (latency under load)."""
    return rung_with(kind="chase_under_load")


@lru_cache(maxsize=None)
def dot():
    """BabelStream's dot: two arrays read through the L1 path, none written, each CTA over its own slice."""
    return rung_with(kind="stream", path="l1", arrays_read=2, arrays_written=0, every_cta_reads_all=False)


def streams():
    """Every stream rung, in the table's order."""
    return table.rungs_with(LAB, kind="stream")


def roofline_streams():
    """The streams the roofline draws: through the L1 path, writing an array, with FLOPs (mul, add, triad: from
    DRAM, their FLOPs per byte set them under the HBM roof)."""
    return table.rungs_with(LAB, kind="stream", path="l1", arrays_written=1, flops_per_element=lambda f: f > 0)


def stream_colour(v):
    names = streams()
    return STREAM_PALETTE[names.index(v) % len(STREAM_PALETTE)] if v in names else None


def arrays_of(v):
    f = table.facts(LAB, v)
    return f.get("arrays_read", 0) + f.get("arrays_written", 0)


def hist_levels():
    """The per-load histograms, one panel per level: (panel title, rung, chain bytes). A level whose records are
    missing is named with the command that measures it (--steps 4096: 512 loads timed one by one)."""
    return (("shared memory", chase("shared"), 32 * KIB),
            ("L1", chase("l1"), 32 * KIB),
            ("L2 (chain < half the L2)", chase("l2"), 8 * MIB),
            ("L2 past half its size", chase("l2"), 32 * MIB),
            ("HBM", chase("l2"), GIB))


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


def save(f, out, name, rect=(0, 0, 1, 1), constrained=False):
    """Lays the figure out (in `rect`, figure fractions; a figure made with layout="constrained" lays itself out),
    writes it as out/name (130 dpi), closes it; returns the path."""
    p = os.path.join(out, name)
    if not constrained:
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


def gpu_of(device):
    """The GPU the runs were measured on, for every title ("NVIDIA H100 80GB HBM3")."""
    return device.get("name") or "an unnamed GPU"


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
    is before STREAM_KERNELS_SINCE, so the point was measured only with the stream kernels those replaced.
    Returns a legend line naming those points' files and sessions, or None when there are none."""
    for p in points:
        p["earlier"] = p.get("newest") is not None and p["newest"] < STREAM_KERNELS_SINCE
    old = [p for p in points if p["earlier"]]
    if not old:
        return None
    files = sorted({f for p in old for f in p["files"].split(", ")})
    span = sorted({stamp(p["newest"]) for p in old})
    when = span[0] if len(span) == 1 else f"{span[0]} to {span[-1][11:]}"
    return f"earlier kernels only ({when}, before the kernels measured since {stamp(STREAM_KERNELS_SINCE)}): " \
           f"{', '.join(files)}"


def group(records, key):
    """{key(r): [records]} in first-seen order."""
    g = defaultdict(list)
    for r in records:
        g[key(r)].append(r)
    return g


# ---- the figures the pictures stand on (the tests check these) ------------------------------------------------

def dram_latency(records):
    """The DRAM plateau: the median `ns_per_load` and `cycles_per_load` over the records of the random .cg chase
    (chase("l2"), one node per line) whose chain is at least 1 GiB. None without such records."""
    rs = [r for r in records if r["variant"] == chase("l2") and stride_of(r) == LINE and bytes_of(r) >= DRAM_CHAIN
          and measured(r, "ns_per_load")]
    if not rs:
        return None
    return {"ns": statistics.median(measured(r, "ns_per_load") for r in rs),
            "cycles": statistics.median(measured(r, "cycles_per_load") for r in rs),
            "records": len(rs), "files": files_of(rs), "sizes": sorted({bytes_of(r) for r in rs})}


def latency_series(records):
    """{(rung, node spacing): {chain bytes: (cycles, ns, records)}}: the chases of the latency picture,
    the median of each case's records. Only chains of a node per line or closer: a chain spread out over more
    bytes than its lines (the translation sweeps' --node-stride) has no working set of its bytes."""
    keep = [r for r in records if measured(r, "cycles_per_load") is not None and stride_of(r) <= LINE
            and r["variant"] in (chase("shared"), chase("l1"), chase("l2"), chase("l1", "sequential"))
            and not (r["variant"] == chase("l1", "sequential") and stride_of(r) != LINE)]
    series = defaultdict(dict)
    for (v, s, b), rs in group(keep, lambda r: (r["variant"], stride_of(r), bytes_of(r))).items():
        series[(v, s)][b] = (statistics.median(measured(r, "cycles_per_load") for r in rs),
                             statistics.median(measured(r, "ns_per_load") for r in rs), len(rs))
    return dict(series)


def histogram_levels(records):
    """One entry per hist_levels() row: the summed per-load histogram of that rung's records at that size
    (node spacing one line), or, where no record has one, `missing`: the memlab command that measures it."""
    levels = []
    for title, variant, size in hist_levels():
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
    earlier (measured only with the stream kernels before STREAM_KERNELS_SINCE: mark_earlier)."""
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
    records)} of the dot (dot()) over >= 1 GiB arrays (the cold median, the median over the latest session's records),
    `earlier` (the keys of points measured only with the stream kernels before STREAM_KERNELS_SINCE) and its legend
    line `earlier_note`, the DRAM latency (dram_latency), the bandwidth 90% of the theoretical peak asks, the
    bytes in flight per SM Little's law asks for it at that latency, and the smallest measured bytes in
    flight per SM that reached it."""
    rs = [r for r in records if r["variant"] == dot() and bytes_of(r) >= GIB and r["gbps"] > 0
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
    """[point] of the roofline's streams (roofline_streams()) over DRAM-sized arrays (>= 256 MiB each), one per rung
    and size:
    the median of its latest session's records' GFLOP/s (each record's from its cold median), flop per byte,
    records, files, earlier (measured only with the stream kernels before STREAM_KERNELS_SINCE)."""
    rs = [r for r in records if r["variant"] in roofline_streams() and r["gbps"] > 0 and r.get("flops")
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


def histograms(records, out, notes=None, device=None):
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
        if len(edges) == 1:  # one bar: say that it is every load, not a histogram that failed
            ax.text(0.5, 0.5, f"every load in\n{lo}-{hi} cycles", transform=ax.transAxes, ha="center", va="center",
                    fontsize=8, color="white")
        ax.set_xlabel("cycles per load (16-cycle buckets)", fontsize=8)
        ax.legend(fontsize=6.5, loc="upper right")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("fraction of the timed loads")
    f.suptitle(f"Per-load latency by level on {gpu_of(device or {})}: each load timed alone (clock64 around it, a "
               "shared store after: the offset from the walk's mean)", fontsize=9)
    return save(f, out, "hierarchy_latency_histograms.png")


def per_sm_points(records):
    """{chain bytes: {sm id: cycles}} of the per-SM chase (several records of a size: each SM's median)."""
    out = {}
    for b, rs in sorted(group([r for r in records if r["variant"] == per_sm_chase()], bytes_of).items()):
        per_sm = defaultdict(list)
        for r in rs:
            for k, v in r["measured"].items():
                m = SM_CYCLES.fullmatch(k)
                if m:
                    per_sm[int(m.group(1))].append(v["value"])
        out[b] = {sm: statistics.median(c) for sm, c in sorted(per_sm.items())}
    return out


def per_sm_map(records, device, out):
    """Each SM's own .cg chase, every SM at once, as its deviation from the median over the SMs, in percent, on one
    symmetric scale for every chain size: a spread of a few percent looks like one (bars on axes cut to the
    spread made a 10% spread look like a factor)."""
    rows = per_sm_points(records)
    if not rows:
        return None
    devs = {b: {sm: 100 * (c / statistics.median(sms.values()) - 1) for sm, c in sms.items()}
            for b, sms in rows.items()}
    lim = max(5, math.ceil(max(abs(d) for ds in devs.values() for d in ds.values()) / 2 + 0.5) * 2)
    f, axes = plt.subplots(len(rows), 1, figsize=(12, 1.9 * len(rows) + 0.9), squeeze=False, sharex=True)
    l2 = device.get("l2_bytes", 50 * MIB)
    for ax, (b, sms) in zip(axes[:, 0], rows.items()):
        med = statistics.median(sms.values())
        d = devs[b]
        ax.bar(list(d), list(d.values()), width=0.85, color=["tab:red" if v > 0 else "tab:blue" for v in d.values()])
        ax.axhline(0, color="k", lw=0.8)
        ax.set_ylim(-lim, lim)
        ax.set_ylabel("% from median", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        ax.tick_params(labelsize=7)
        level = "the L2" if b <= l2 / 2 else "DRAM" if b > 2 * l2 else "the L2 and DRAM"
        lo, hi = min(sms.values()), max(sms.values())
        ax.set_title(f"{label_bytes(b)} chain ({level}): median {med:.0f} cycles per load; SMs from {lo:.0f} to "
                     f"{hi:.0f} ({100 * (lo / med - 1):+.1f}% to {100 * (hi / med - 1):+.1f}%)", fontsize=8.5)
    axes[-1, 0].set_xlabel("SM id (%smid)")
    f.suptitle(f"Each SM's own latency on {gpu_of(device)}: {per_sm_chase()}, every SM walking its own .cg chain at "
               f"once\n(each bar: that SM's cycles per load against the median over its "
               f"{max(len(sms) for sms in rows.values())} SMs, in percent; one scale, +-{lim}%, for every row)",
               fontsize=10)
    return save(f, out, "hierarchy_per_sm_map.png")


def nodes_of(r):
    """The chase's nodes: model.nodes, else chain bytes / stride."""
    n = r.get("model", {}).get("nodes")
    return int(n) if n else bytes_of(r) // max(stride_of(r), 1)


def translation_points(records, device):
    """The address-translation picture's series, each {2 MiB pages: (cycles per load, records, files)}, a case in
    several records: their median.
      dram: random .cg chases (chase("l2")) over more distinct lines than 8x the L2 holds: each hop a DRAM access
            (the L2 keeps at most an eighth of them); pages = the chain's bytes / 2 MiB. Only the chains of one node
            count, the one measured at the most page counts (--node-stride = span / nodes): along this line nothing
            changes but the pages.
      dram_other: the other DRAM-hop chains (another node count at each span: one node per line, say).
      l2:   random .cg chases with one node per 2 MiB page or fewer (--node-stride >= 2 MiB) whose lines fit half the
            L2: after the first pass each hop an L2 hit; pages = nodes.
      l2_address_order: the chase in address order (chase("l1", "sequential"), ld.global) at --node-stride >= 2 MiB
            with more lines than the L1 keeps (128 KiB): L2 hits, each on the next page; pages = nodes.
    A TLB level that runs out of entries shows as a step in pages: the same hops, now each paying a page walk."""
    l2 = device.get("l2_bytes", 50 * MIB)
    keep = {"dram": [], "dram_other": [], "l2": [], "l2_address_order": []}
    dram = []
    for r in records:
        if measured(r, "cycles_per_load") is None:
            continue
        nodes, stride = nodes_of(r), stride_of(r)
        if dram_hops(r, device):
            dram.append((max(1, bytes_of(r) // PAGE), r))
        elif r["variant"] == chase("l2") and stride >= PAGE and nodes * LINE <= l2 / 2:
            keep["l2"].append((nodes, r))
        elif r["variant"] == chase("l1", "sequential") and stride >= PAGE and L1_LINES_BYTES < nodes * LINE <= l2 / 2:
            keep["l2_address_order"].append((nodes, r))
    line = dram_line_nodes(dram)
    for pages, r in dram:
        keep["dram" if nodes_of(r) == line else "dram_other"].append((pages, r))
    out = {}
    for name, pts in keep.items():
        out[name] = {pages: (statistics.median(measured(r, "cycles_per_load") for _, r in g), len(g),
                             files_of([r for _, r in g]))
                     for pages, g in sorted(group(pts, lambda pr: pr[0]).items())}
    return out


def dram_hops(r, device):
    """Whether the record is a random .cg chase over more distinct lines than 8x the L2 holds: each hop a DRAM
    access."""
    lines = nodes_of(r) if stride_of(r) >= LINE else bytes_of(r) // LINE
    return r["variant"] == chase("l2") and lines * LINE >= 8 * device.get("l2_bytes", 50 * MIB)


def dram_line_nodes(dram):
    """The node count of the DRAM-hop line: of the (pages, record) pairs, the count measured at the most page counts
    (the larger on a tie); None without any."""
    by_nodes = group(dram, lambda pr: nodes_of(pr[1]))
    return max(by_nodes, key=lambda n: (len({p for p, _ in by_nodes[n]}), n)) if by_nodes else None


def l2_hit_latency(records, device):
    """The L2 hit in few pages: the median cycles per load of the random .cg chase (one node per line) whose chain fits
    half the L2 and at most 8 pages of 2 MiB; None without such records."""
    l2 = device.get("l2_bytes", 50 * MIB)
    rs = [r for r in records if r["variant"] == chase("l2") and stride_of(r) == LINE
          and bytes_of(r) <= min(l2 / 2, 8 * PAGE) and measured(r, "cycles_per_load") is not None]
    return statistics.median(measured(r, "cycles_per_load") for r in rs) if rs else None


def largest_rise(pts):
    """(cycles, from pages, to pages): the largest rise between neighbouring page counts of a series, or None."""
    xs = sorted(pts)
    rises = [(pts[b][0] - pts[a][0], a, b) for a, b in zip(xs, xs[1:])]
    return max(rises) if rises else None


def translation(records, device, out):
    """Latency per dependent load against the 2 MiB pages a random walk spreads over, for hops that miss the L2
    (DRAM + translation) and hops that hit it (L2 + translation), the L2 hit and the DRAM plateau as reference lines:
    a TLB that runs out of entries would show as a step. Left the cycles per load from zero; right each kind of hop
    zoomed to a window of ZOOM cycles (the same height for both), where a step of a few cycles shows. A box says how
    far each line moved and its largest rise."""
    s = translation_points(records, device)
    if not any(s.values()):
        return None
    zoom = 60
    f = plt.figure(figsize=(14.5, 6.2))
    grid = f.add_gridspec(2, 2, width_ratios=[1.25, 1])
    ax = f.add_subplot(grid[:, 0])
    zl2, zdram = f.add_subplot(grid[0, 1]), f.add_subplot(grid[1, 1])
    styles = {"dram": ("tab:red", "o", "-", "random .cg chase, each hop a DRAM access: 2^{k} nodes, one per line at "
                                           "2 GiB, spaced out to span more pages"),
              "dram_other": ("lightcoral", "o", "none", "random .cg chase, DRAM hops: chains of other lengths, one "
                                                        "node per line"),
              "l2": ("tab:blue", "s", "-", "random .cg chase, one node per 2 MiB page: each hop an L2 hit"),
              "l2_address_order": ("tab:cyan", "^", "none", "stride chase in address order, one node per 2 MiB "
                                                           "page or fewer: L2 hits")}
    short = {"dram": "DRAM hops", "dram_other": "DRAM hops, other chains", "l2": "L2 hops, random",
             "l2_address_order": "L2 hops, address order"}
    notes = []
    for name, pts in s.items():
        if not pts:
            continue
        colour, marker, ls, label = styles[name]
        if name == "dram":
            nodes = dram_line_nodes([(max(1, bytes_of(r) // PAGE), r) for r in records
                                     if measured(r, "cycles_per_load") is not None and dram_hops(r, device)])
            label = label.replace("{k}", str((nodes or 1).bit_length() - 1))
        xs = list(pts)
        ys = [pts[x][0] for x in xs]
        records_n = sum(p[1] for p in pts.values())
        ax.plot(xs, ys, marker=marker, color=colour, ms=5, ls=ls, label=f"{label} ({records_n} records)")
        z = zl2 if name.startswith("l2") else zdram
        z.plot(xs, ys, marker=marker, color=colour, ms=5, ls=ls, label=short[name])
        lo, hi = min(ys), max(ys)
        rise = largest_rise(pts)
        step = f"; largest rise +{rise[0]:.1f} ({rise[1]}->{rise[2]} pages)" if rise and rise[0] > 0 else ""
        notes.append(f"{short[name]}: {lo:.1f}-{hi:.1f} cycles over {min(xs)}-{max(xs)} pages{step}")
    l2_hit = l2_hit_latency(records, device)
    lat = dram_latency(records)
    for a, y, text, style in ((ax, l2_hit, "L2 hit, one node per line in <= 8 pages", "--"),
                              (zl2, l2_hit, "L2 hit, one node per line in <= 8 pages", "--"),
                              (ax, lat and lat["cycles"], "DRAM plateau (chains >= 1 GiB, one node per line)", ":"),
                              (zdram, lat and lat["cycles"], "DRAM plateau (chains >= 1 GiB, one node per line)", ":")):
        if y:
            a.axhline(y, color="gray", ls=style, lw=0.9)
            a.text(1.1, y, f" {text}: {y:.1f} cycles", fontsize=7, color="dimgray", va="bottom")
    mem = device.get("global_mem_bytes")
    for a in (ax, zl2, zdram):
        a.set_xscale("log", base=2)
        a.set_xlim(1, 2 ** 16)
        a.grid(True, which="both", alpha=0.3)
        if mem:
            a.axvline(mem / PAGE, color="gray", ls=":", lw=1)
    ax.set_xlabel("2 MiB pages the walk spreads over", fontsize=9)
    zdram.set_xlabel("2 MiB pages the walk spreads over", fontsize=9)
    if mem:
        ax.text(mem / PAGE, 830, f"all {mem / GIB:.0f} GiB of the GPU = {mem // PAGE} pages ", ha="right", va="top",
                fontsize=7, color="dimgray")
    ax.set_ylim(0, 850)
    ax.set_ylabel("cycles per dependent load (clock64)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(0, 0.64))
    ax.text(0.01, 0.03, "How far each line moved:\n" + "\n".join(notes), transform=ax.transAxes, fontsize=7,
            va="bottom", bbox={"facecolor": "white", "edgecolor": "lightgray"})
    ax.set_title("cycles per load, from zero (pages: chain bytes / 2 MiB for DRAM hops, nodes for L2 hits)",
                 fontsize=8.5)
    for z, names, title in ((zl2, ("l2", "l2_address_order"), "L2 hops"), (zdram, ("dram", "dram_other"), "DRAM hops")):
        ys = [c for n in names for c, _, _ in s[n].values()]
        if ys:
            lo = 5 * math.floor((min(ys) - 10) / 5)
            z.set_ylim(lo, lo + zoom)
        z.yaxis.set_major_locator(matplotlib.ticker.MultipleLocator(10))
        z.set_ylabel("cycles per load", fontsize=8)
        z.tick_params(labelsize=7)
        z.legend(fontsize=7, loc="lower right")
        z.set_title(f"{title}, zoomed: {zoom} cycles tall (a step of a few cycles shows)", fontsize=8.5)
    most = max(max(pts) for pts in s.values() if pts)
    f.suptitle(f"Address translation on {gpu_of(device)}: latency per dependent load against the 2 MiB pages a "
               f"random walk spreads over, up to {most} pages ({label_bytes(most * PAGE)});\na TLB level that runs "
               "out of entries would add a page walk to every hop past its reach: a step in a line", fontsize=10)
    return save(f, out, "hierarchy_tlb.png")


def drawn_bandwidth_points(records, device):
    """The points the bandwidth picture draws: bandwidth_points where every SM streams (the grid covers the GPU:
    a level's figure, not a part of the GPU) and the kernels are today's (a point measured only with the stream
    kernels before STREAM_KERNELS_SINCE is left out, not drawn beside the others)."""
    points = bandwidth_points(records, device)
    kept = {v: {b: p for b, p in pts.items() if p["full"] and not p["earlier"]} for v, pts in points.items()}
    return {v: pts for v, pts in kept.items() if pts}


def bandwidth_vs_working_set(records, device, out):
    points = drawn_bandwidth_points(records, device)
    if not points:
        return None
    f, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5.0), layout="constrained")
    for v, pts in sorted(points.items()):
        xs = sorted(pts)
        for a, key in ((a1, "tbps"), (a2, "b_per_clk_sm")):
            # a line joins neighbours at most 4x apart: none is drawn across sizes that were not measured
            ys = [pts[x][key] for x in xs]
            gaps = [i for i in range(1, len(xs)) if xs[i] > 4 * xs[i - 1]]
            for lo, hi in zip([0] + gaps, gaps + [len(xs)]):
                a.plot(xs[lo:hi], ys[lo:hi], marker="o", ms=4, color=stream_colour(v),
                       label=v if lo == 0 else None)
    peak = device.get("peak_gbps", 0) / 1e3
    if peak:
        a1.axhline(peak, color="k", ls=":", lw=1, label=f"HBM theoretical {peak:.2f} TB/s")
    for a, yl in ((a1, "TB/s (reads + writes), log scale"), (a2, "bytes per clock per SM, log scale")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel(f"bytes per array, log scale ({arrays_label(points)})", fontsize=8)
        a.set_ylabel(yl)
        a.grid(True, which="both", alpha=0.3)
        a.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        a.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
            lambda y, _: f"{y:g}" if round(y, 6) in (2, 3, 5, 20, 30, 50) else ""))
        mark_levels(a, device, aggregate=True)
    # What one H100 SM's L1 hit path and LDS.128 deliver at most (docs/notes/hierarchy_l1_bandwidth.md).
    a2.axhline(L1_BYTES_PER_CLK, color="k", ls=":", lw=1)
    a2.set_ylim(top=max(a2.get_ylim()[1], 3 * L1_BYTES_PER_CLK))  # room above it for the labels
    a2.text(a2.get_xlim()[0], L1_BYTES_PER_CLK, f"  {L1_BYTES_PER_CLK} B/clk/SM: the L1's and LDS.128's ceiling",
            ha="left", va="bottom", fontsize=7, color="dimgray")
    a1.legend(fontsize=7.5, loc="center right")
    sms = device.get("sm_count", 132)
    f.suptitle(f"Bandwidth against working set on {gpu_of(device)}, all {sms} SMs streaming: "
               "4 CTAs of 256 threads per SM, 4 x 16 B in flight per thread and array", fontsize=10)
    return save(f, out, "hierarchy_bandwidth_ws.png", constrained=True)


def arrays_label(points):
    """How many arrays each drawn stream moves, from its facts, fewest first: "<rung>: 1 array; <rung>, <rung>: 2"."""
    by = defaultdict(list)
    for v in streams():
        if v in points:
            by[arrays_of(v)].append(v)
    return "; ".join(f"{', '.join(vs)}: {n}{' array' if n == 1 else ''}" for n, vs in sorted(by.items()))


def loaded_points(records, device):
    """{chain bytes: [(TB/s the other SMs draw, probe ns per load, SMs streaming)]} of the loaded chase over
    chains larger than the L2 (a smaller chain's probe measures the L2, not DRAM under load), in the order of
    the SMs streaming (what the run sets; past saturation the bandwidth drawn falls back while the latency still
    climbs); a case in several records: their median."""
    l2 = device.get("l2_bytes", 50 * MIB)
    rs = [r for r in records if r["variant"] == chase_under_load() and measured(r, "ns_per_load") and bytes_of(r) > l2]
    return {b: sorted(((statistics.median((measured(r, "load_gbps") or 0.0) / 1e3 for r in gg),
                        statistics.median(measured(r, "ns_per_load") for r in gg), c)
                       for c, gg in group(g, lambda r: r["params"].get("load_ctas", 0)).items()), key=lambda p: p[2])
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
        ax.axhline(lat["ns"], color="gray", ls=":", lw=1,
                   label=f"unloaded DRAM latency {lat['ns']:.0f} ns ({chase('l2')})")
    ax.set_xlabel("bandwidth the other SMs draw from DRAM (TB/s)")
    ax.set_ylabel("probe's DRAM latency (ns per dependent .cg load)")
    ax.set_ylim(0, ax.get_ylim()[1])
    ax.set_title(f"Loaded latency on {gpu_of(device)}:\none SM's .cg chase while other SMs stream from DRAM "
                 "(labels: SMs streaming)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.3)
    return save(f, out, "hierarchy_loaded_latency.png")


ILP_MARKERS = {1: "o", 2: "s", 4: "^", 8: "D"}
CTA_COLOURS = {1: "tab:blue", 2: "tab:orange", 4: "tab:green", 8: "tab:purple"}


def littles_law(records, device, out):
    """Achieved DRAM bandwidth against bytes in flight per SM, a marker per --ilp and a colour per --ctas-per-sm (no
    labels over each other); points measured only with stream kernels an earlier session ran, since replaced, are
    hollow and named so in the legend."""
    m = littles_law_model(records, device)
    if len(m["points"]) < 3 or not m["latency"]:
        return None
    lat, sms, peak = m["latency"], m["sms"], m["peak_gbps"] / 1e3
    f, ax = plt.subplots(figsize=(12, 5.6))
    for (ilp, ctas), (b, g, _) in sorted(m["points"].items()):
        colour = CTA_COLOURS.get(ctas, "k")
        hollow = (ilp, ctas) in m["earlier"]
        nudge = 2 ** (0.07 * (math.log2(ilp) - 1.5))  # the points of one x apart, by ILP: none hides another
        ax.scatter([b / KIB * nudge], [g / 1e3], zorder=3, s=36, marker=ILP_MARKERS.get(ilp, "x"),
                   facecolors="none" if hollow else colour, edgecolors=colour, linewidths=1.2)
    xs = [2 ** (i / 8) for i in range(0, 8 * 10 + 1)]
    handles = [ax.plot(xs, [x * KIB * sms / (lat["ns"] * 1e-9) / 1e12 for x in xs], "k--", lw=1,
                       label=f"bytes in flight x {sms} SMs / {lat['ns']:.0f} ns (DRAM latency)")[0]]
    if peak:
        handles.append(ax.axhline(peak, color="r", ls=":", lw=1, label=f"HBM theoretical {peak:.2f} TB/s"))
        handles.append(ax.axhline(0.9 * peak, color="r", ls="--", lw=0.8, label=f"90%: {0.9 * peak:.2f} TB/s"))
    if m["law_bytes_per_sm"]:
        x = m["law_bytes_per_sm"] / KIB
        ax.axvline(x, color="gray", ls="--", lw=0.8)
        ax.text(x, 0.12, f" Little's law\n at {lat['ns']:.0f} ns:\n {x:.1f} KiB/SM\n for 90%", fontsize=7)
    if m["first_reached"]:
        b, g, (ilp, ctas) = m["first_reached"]
        old = " (hollow: an earlier\n session's kernels)" if (ilp, ctas) in m["earlier"] else ""
        ax.axvline(b / KIB, color="tab:green", ls="-", lw=1)
        ax.text(b / KIB, 0.12, f" measured: {b / KIB:.0f} KiB/SM is the\n least that reached 90%\n"
                f" (--ilp {ilp} --ctas-per-sm {ctas}:\n {g:.0f} GB/s){old}", fontsize=7, color="tab:green")
    ilps = sorted({k[0] for k in m["points"]})
    ctas_all = sorted({k[1] for k in m["points"]})
    handles += [Line2D([], [], ls="none", marker=ILP_MARKERS.get(i, "x"), color="k", mfc="none", label=f"--ilp {i}")
                for i in ilps]
    handles += [Line2D([], [], ls="none", marker="o", color=CTA_COLOURS.get(c, "k"), label=f"--ctas-per-sm {c}")
                for c in ctas_all]
    if m["earlier"]:
        handles.append(Line2D([], [], ls="none", marker="o", color="gray", mfc="none",
                              label="hollow: measured only with the stream\nkernels of an earlier session, since "
                                    "replaced:\n" + m["earlier_note"].replace(" (", "\n(", 1)
                                    .replace(", before", ",\nbefore", 1).replace("): ", "):\n", 1)))
    ax.set_xscale("log", base=2)
    ax.set_xlim(2, 2 ** 10)
    ax.set_ylim(0, (peak or 3.5) * 1.15)
    ax.set_xlabel("bytes in flight per SM (KiB): CTAs x 256 threads x ILP x 16 B x 2 arrays (model; the points of "
                  "one x nudged apart by ILP)", fontsize=8.5)
    ax.set_ylabel("achieved TB/s (cold median; several runs: median)")
    ax.legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, alpha=0.3)
    ax.set_title(f"Little's law on {gpu_of(device)} DRAM: bandwidth = bytes in flight / latency; {dot()} over 1 GiB "
                 f"arrays\nlatency: {lat['ns']:.1f} ns ({lat['cycles']:.0f} cycles), the median of {lat['records']} "
                 f"{chase('l2')} records >= 1 GiB", fontsize=9)
    return save(f, out, "hierarchy_littles_law.png")


def roofline_add(records, device, out):
    """Left: the roofline's streams (roofline_streams()) on this GPU's roofline (its own roofs only). Right: the
    fraction of its own roof each reaches, beside the tutorial's vector add on its GPU: the comparison the two GPUs
    allow (GFLOP/s of two GPUs on one set of axes would set one GPU's points under the other's roof)."""
    pts = roofline_points(records)
    if not pts:
        return None
    rs = [r for r in records if r["variant"] in roofline_streams() and r.get("sm_clock_mhz")]
    sms = device.get("sm_count", 132)
    clock = max((r["sm_clock_mhz"] for r in rs), default=1980)
    fp32 = sms * 128 * 2 * clock * 1e6 / 1e9  # GFLOP/s
    peak = device.get("peak_gbps", 3352)
    measured_peak = device.get("measured_peak_gbps", 0)
    gpu = gpu_of(device)
    ref = REFERENCE_ADD
    f, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [1.5, 1]})
    xs = [2 ** (i / 8) for i in range(-8 * 7, 8 * 7 + 1)]
    ax.plot(xs, [min(fp32, x * peak) for x in xs], "k-", lw=1,
            label=f"roof: {peak / 1e3:.2f} TB/s HBM (theoretical), {fp32 / 1e3:.0f} TFLOP/s FP32")
    if measured_peak:
        ax.plot(xs, [min(fp32, x * measured_peak) for x in xs], "k:", lw=1,
                label=f"measured ceiling: cudaMemcpy {measured_peak / 1e3:.2f} TB/s")
    largest = {v: max(p["bytes"] for p in pts if p["variant"] == v) for v in {p["variant"] for p in pts}}
    drawn = [v for v in roofline_streams() if v in largest]  # in the table's order
    bars = [(f"a tutorial's vector add\n(its GPU: {ref['peak_gbps'] / 1e3:.0f} TB/s HBM3e)",
             ref["actual_gflops"] / ref["roof_gflops"], "tab:purple")]
    for p in pts:
        roof = p["ai"] * peak
        big = p["bytes"] == largest[p["variant"]]  # smaller arrays: a larger hollow marker around the same spot
        colour = stream_colour(p["variant"])
        marker = ROOFLINE_MARKERS[drawn.index(p["variant"]) % len(ROOFLINE_MARKERS)]
        ax.scatter([p["ai"]], [p["gflops"]], zorder=3 if big else 2, marker=marker,
                   s=30 if big else 110, color=colour if big else "none", edgecolors=colour,
                   label=f"{p['variant']}, {label_bytes(p['bytes'])} arrays: {p['gflops']:.0f} of {roof:.0f} GFLOP/s "
                         f"({p['gflops'] / roof:.0%}; median of {p['records']} "
                         f"record{'s' if p['records'] > 1 else ''}"
                         f"{', an earlier session' if p['earlier'] else ''})")
        if big:
            ceiling = (f"; {p['gflops'] / (p['ai'] * measured_peak):.0%} of the cudaMemcpy ceiling"
                       if measured_peak else "")
            bars.append((f"{p['variant']}, {label_bytes(p['bytes'])} arrays\n(this GPU{ceiling})", p["gflops"] / roof,
                         colour))
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
    ax.set_title(f"{' and '.join(drawn)} on the roofline of {gpu}", fontsize=10)
    ys = list(range(len(bars)))
    bx.barh(ys, [100 * v for _, v, _ in bars], color=[c for _, _, c in bars], height=0.6)
    for y, (_, v, _) in zip(ys, bars):
        bx.text(100 * v - 1, y, f"{v:.0%}", ha="right", va="center", color="white", fontsize=9)
    bx.set_yticks(ys, [t for t, _, _ in bars], fontsize=7.5)
    bx.invert_yaxis()
    bx.set_xlim(0, 100)
    bx.set_xlabel("% of its own GPU's HBM roof at its arithmetic intensity")
    bx.grid(True, axis="x", alpha=0.3)
    bx.set_title("each on its own GPU: the fraction of that GPU's roof", fontsize=10)
    f.suptitle(f"Vector add on {gpu}, beside a tutorial's claim for another GPU (~{ref['actual_gflops']:.0f} of "
               f"{ref['roof_gflops']:.0f} GFLOP/s at {ref['peak_gbps'] / 1e3:.0f} TB/s): compare fractions of each "
               "roof, not GFLOP/s", fontsize=10)
    return save(f, out, "hierarchy_roofline_add.png")


def plot_hierarchy(records, out, device=None, notes=None):
    """Writes every picture the records allow into `out`; returns their paths. What is not drawn for want
    of records goes to `notes` (a list), with the command that would measure it."""
    device = device or {}
    os.makedirs(out, exist_ok=True)
    made = [latency_vs_working_set(records, device, out), histograms(records, out, notes, device),
            per_sm_map(records, device, out), translation(records, device, out),
            bandwidth_vs_working_set(records, device, out),
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
