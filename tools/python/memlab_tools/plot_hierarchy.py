"""Pictures of the hierarchy lab (memlab.results/1 files): latency against working set (log x, the
device's L1 and L2 sizes marked), per-load latency histograms, the per-SM L2 latency map, the TLB
map (stride x working set), bandwidth against working set (TB/s and B/clk/SM), the loaded-latency
curve, Little's law (bytes in flight per SM against DRAM bandwidth) and the vector add on the
roofline beside the reference's claim.

    python -m memlab_tools.plot_hierarchy FILES... -o DIR

Everything is read from the records: params, gbps, sm_clock_mhz, the lab's `measured` figures
(cycles_per_load, ns_per_load, hist_<lo>_<hi>, sm<k>_cycles, load_gbps) and the run's device.
"""
from __future__ import annotations

import argparse
import json
import math
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

L1_BYTES = 256 * 1024  # H100: 256 KiB of L1 + shared memory per SM (the L1 part is what smem leaves)


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
                records.append(r)
    return records, device


def save(f, out, name):
    """Lays the figure out, writes it as out/name (130 dpi), closes it; returns the path."""
    p = os.path.join(out, name)
    f.tight_layout()
    f.savefig(p, dpi=130)
    plt.close(f)
    return p


def fig(m, r, key):
    v = r.get("measured", {}).get(key)
    return v["value"] if v else None


def bytes_of(r):
    return 4 * int(r["params"]["n"])


def label_bytes(b):
    for unit, s in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit:
            return f"{b / unit:g} {s}"
    return f"{b} B"


def mark_levels(ax, device):
    ax.axvline(L1_BYTES, color="gray", ls=":", lw=1)
    ax.text(L1_BYTES, ax.get_ylim()[1], " L1 256 KiB", va="top", fontsize=7, color="gray")
    l2 = device.get("l2_bytes", 50 * 1024 * 1024)
    for x, t in ((l2, f" L2 {label_bytes(l2)}"), (l2 / 2, " L2 / 2")):
        ax.axvline(x, color="gray", ls="--", lw=1)
        ax.text(x, ax.get_ylim()[1] * 0.9, t, va="top", fontsize=7, color="gray")


def latency_vs_working_set(records, device, out):
    series = defaultdict(dict)
    for r in records:
        c = fig(None, r, "cycles_per_load")
        if c is None or r["variant"] in ("register_chain", "loaded_chase", "chase_l2_per_sm"):
            continue
        stride = r["params"].get("stride", 128)
        if r["variant"] == "chase_stride" and stride != 128:
            continue
        series[(r["variant"], stride)][bytes_of(r)] = (c, fig(None, r, "ns_per_load"))
    if not series:
        return None
    f, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
    for (v, s), pts in sorted(series.items()):
        xs = sorted(pts)
        a1.plot(xs, [pts[x][0] for x in xs], marker="o", ms=3, label=f"{v} ({s} B nodes)")
        a2.plot(xs, [pts[x][1] for x in xs], marker="o", ms=3, label=f"{v} ({s} B nodes)")
    for a, unit in ((a1, "cycles (clock64)"), (a2, "ns (%globaltimer)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("working set (bytes)")
        a.set_ylabel(f"latency per dependent load, {unit}")
        a.grid(True, which="both", alpha=0.3)
        mark_levels(a, device)
    a1.legend(fontsize=7)
    f.suptitle(f"Pointer-chase latency against working set — {device.get('name', '')}")
    return save(f, out, "hierarchy_latency_ws.png")


def histograms(records, out):
    picks = [r for r in records if r["variant"] in ("chase_shared", "chase_l1", "chase_l2")
             and any(k.startswith("hist_") for k in r.get("measured", {}))
             and r["params"].get("stride", 128) == 128]
    if not picks:
        return None
    seen, chosen = set(), []
    for r in sorted(picks, key=lambda r: (r["variant"], bytes_of(r))):
        key = (r["variant"], bytes_of(r))
        if key not in seen:
            seen.add(key)
            chosen.append(r)
    chosen = [r for r in chosen if bytes_of(r) in (4096, 32768, 8 << 20, 32 << 20, 1 << 30)] or chosen[:6]
    f, ax = plt.subplots(figsize=(10, 4.5))
    for r in chosen:
        h = {int(k.split("_")[1]): v["value"] for k, v in r["measured"].items() if k.startswith("hist_")}
        xs = sorted(h)
        total = sum(h.values()) or 1
        ax.step(xs, [h[x] / total for x in xs], where="post", label=f"{r['variant']} {label_bytes(bytes_of(r))}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("cycles per load (each timed alone: includes ~the clock read and a shared store)")
    ax.set_ylabel("fraction of sampled loads")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    ax.set_title("Per-load latency histograms (16-cycle buckets)")
    return save(f, out, "hierarchy_latency_histograms.png")


def per_sm_map(records, out):
    rs = [r for r in records if r["variant"] == "chase_l2_per_sm"]
    if not rs:
        return None
    f, axes = plt.subplots(len(rs), 1, figsize=(12, 2.6 * len(rs)), squeeze=False)
    for ax, r in zip(axes[:, 0], sorted(rs, key=bytes_of)):
        sms = sorted((int(k[2:-7]), v["value"]) for k, v in r["measured"].items() if k.startswith("sm") and k.endswith("_cycles"))
        ax.bar([s for s, _ in sms], [c for _, c in sms], width=0.9)
        lo = min(c for _, c in sms)
        ax.set_ylim(lo * 0.9, max(c for _, c in sms) * 1.05)
        ax.set_ylabel("cycles / load")
        ax.set_title(f"chase_l2_per_sm, {label_bytes(bytes_of(r))}: each SM's own .cg chase (all at once)", fontsize=9)
    axes[-1, 0].set_xlabel("SM id (%smid)")
    return save(f, out, "hierarchy_per_sm_map.png")


def tlb_map(records, out):
    rs = [r for r in records if r["variant"] == "chase_stride" and fig(None, r, "cycles_per_load") is not None]
    if not rs:
        return None
    strides = sorted({r["params"]["stride"] for r in rs})
    sizes = sorted({bytes_of(r) for r in rs})
    grid = [[math.nan] * len(sizes) for _ in strides]
    for r in rs:
        grid[strides.index(r["params"]["stride"])][sizes.index(bytes_of(r))] = fig(None, r, "cycles_per_load")
    f, ax = plt.subplots(figsize=(9, 4.5))
    im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
    ax.set_xticks(range(len(sizes)), [label_bytes(s) for s in sizes], rotation=45, fontsize=7)
    ax.set_yticks(range(len(strides)), [label_bytes(s) for s in strides], fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=6, color="w")
    ax.set_xlabel("working set")
    ax.set_ylabel("stride (node spacing)")
    f.colorbar(im, label="cycles per dependent load")
    ax.set_title("TLB map: sequential stride chase, cycles per load")
    return save(f, out, "hierarchy_tlb_map.png")


def achieved_gbps(r):
    """The cold median for DRAM-bound cases (the L2 flushed first, as a stream from DRAM is); the batch
    median for L2- and L1-resident ones (back-to-back launches: the data stays where it lives)."""
    return r.get("batch_gbps", 0) if r["roof"]["name"] in ("l2", "smem") else r["gbps"]


def sms_busy(r, device):
    return r.get("model", {}).get("sms_busy") or device.get("sm_count", 132)


def bandwidth_vs_working_set(records, device, out):
    series = defaultdict(dict)
    for r in records:
        if r.get("measured") or r["gbps"] <= 0 or "ilp" not in r["params"]:
            continue
        if r["params"].get("ilp") != 4 or r["params"].get("ctas_per_sm") != 4 or r["params"].get("passes", 0) != 0:
            continue
        series[r["variant"]][bytes_of(r)] = r
    if not series:
        return None
    f, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
    for v, pts in sorted(series.items()):
        xs = sorted(pts)
        a1.plot(xs, [achieved_gbps(pts[x]) / 1e3 for x in xs], marker="o", ms=3, label=v)
        a2.plot(xs, [achieved_gbps(pts[x]) * 1e3 / (pts[x]["sm_clock_mhz"] * sms_busy(pts[x], device))
                     if pts[x]["sm_clock_mhz"] else math.nan for x in xs], marker="o", ms=3, label=v)
    peak = device.get("peak_gbps", 0) / 1e3
    if peak:
        a1.axhline(peak, color="k", ls=":", lw=1)
        a1.text(a1.get_xlim()[0], peak, " HBM theoretical", fontsize=7, va="bottom")
    for a, yl in ((a1, "TB/s (reads + writes)"), (a2, "bytes per clock per SM")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("bytes per array")
        a.set_ylabel(yl)
        a.grid(True, which="both", alpha=0.3)
        mark_levels(a, device)
    a1.legend(fontsize=7)
    f.suptitle("Bandwidth against working set, every SM busy")
    return save(f, out, "hierarchy_bandwidth_ws.png")


def loaded_latency(records, out):
    rs = [r for r in records if r["variant"] == "loaded_chase" and fig(None, r, "ns_per_load")]
    if not rs:
        return None
    pts = sorted(((fig(None, r, "load_gbps") or 0.0) / 1e3, fig(None, r, "ns_per_load"), r["params"].get("load_ctas", 0))
                 for r in rs)
    f, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o")
    for x, y, c in pts:
        ax.annotate(str(c), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("bandwidth the other SMs draw from DRAM (TB/s)")
    ax.set_ylabel("probe's DRAM latency (ns per dependent .cg load)")
    ax.set_title("Loaded latency (labels: SMs streaming)")
    ax.grid(True, alpha=0.3)
    return save(f, out, "hierarchy_loaded_latency.png")


def littles_law(records, device, out):
    rs = [r for r in records if r["variant"] == "dot" and bytes_of(r) >= (1 << 30) and r["gbps"] > 0]
    if len({(r["params"]["ilp"], r["params"]["ctas_per_sm"]) for r in rs}) < 3:
        return None
    lat = [fig(None, r, "ns_per_load") for r in records if r["variant"] == "loaded_chase"
           and r["params"].get("load_ctas", 0) == 0]
    lat_ns = lat[0] if lat and lat[0] else 600.0
    sms = device.get("sm_count", 132)
    pts = sorted((r["model"]["bytes_in_flight_per_sm"] / 1024, r["gbps"] / 1e3) for r in rs)
    f, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], label="dot, 1 GiB arrays (ILP x CTAs per SM)")
    xs = [2 ** (i / 4) for i in range(0, 4 * 10)]
    ax.plot(xs, [x * 1024 * sms / (lat_ns * 1e-9) / 1e12 for x in xs], "k--", lw=1,
            label=f"bytes in flight / latency ({lat_ns:.0f} ns, unloaded)")
    peak = device.get("peak_gbps", 0) / 1e3
    if peak:
        ax.axhline(peak, color="r", ls=":", lw=1, label="HBM theoretical")
        ax.axhline(0.9 * peak, color="r", ls="--", lw=0.8, label="90%")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, (peak or 3.5) * 1.15)
    ax.set_xlabel("bytes in flight per SM (KiB): CTAs x 256 threads x ILP x 16 B x 2 arrays")
    ax.set_ylabel("achieved TB/s")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    ax.set_title("Little's law on H100 DRAM")
    return save(f, out, "hierarchy_littles_law.png")


def roofline_add(records, device, out):
    rs = [r for r in records if r["variant"] in ("add", "triad") and r["gbps"] > 0 and bytes_of(r) >= (1 << 28)
          and r.get("flops")]
    if not rs:
        return None
    sms = device.get("sm_count", 132)
    clock = max((r["sm_clock_mhz"] for r in rs), default=1755)
    fp32 = sms * 128 * 2 * clock * 1e6 / 1e12
    peak = device.get("peak_gbps", 3352) / 1e3
    f, ax = plt.subplots(figsize=(7, 4.5))
    xs = [2 ** (i / 4) for i in range(-40, 32)]
    ax.plot(xs, [min(fp32, x * peak) for x in xs], "k-", lw=1, label=f"roof: {peak:.2f} TB/s, {fp32:.0f} TFLOP/s FP32")
    for r in rs:
        ai = r["flops"] / r["bytes"]
        ax.scatter([ai], [r["gflops"] / 1e3], label=f"{r['variant']} {label_bytes(bytes_of(r))}: {r['gflops'] / 1e3:.2f} TFLOP/s")
    ax.axvline(1 / 12, color="gray", ls=":", lw=1)
    ax.text(1 / 12, fp32 / 3, " c=a+b: 1 FLOP / 12 B\n (the reference: memory-bound)", fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("TFLOP/s")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Vector add on the roofline")
    return save(f, out, "hierarchy_roofline_add.png")


def plot_hierarchy(records, out, device=None):
    """Writes every picture the records allow into `out`; returns their paths."""
    device = device or {}
    os.makedirs(out, exist_ok=True)
    made = [latency_vs_working_set(records, device, out), histograms(records, out), per_sm_map(records, out),
            tlb_map(records, out), bandwidth_vs_working_set(records, device, out), loaded_latency(records, out),
            littles_law(records, device, out), roofline_add(records, device, out)]
    return [p for p in made if p]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    records, device = load(a.files)
    for p in plot_hierarchy(records, a.out, device):
        print(p)


if __name__ == "__main__":
    main()
