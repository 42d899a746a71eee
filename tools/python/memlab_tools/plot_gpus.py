"""The transfer lab across GPUs: pictures and the comparison with nccl-tests, from committed files.

  python -m memlab_tools.plot_gpus FILES... [--nccl-tests LOG...] [--only ...] [--table MD] -o DIR

  pairs_<size>.png        a heat map per peer rung: GB/s for every ordered pair (row: the GPU whose
                          engine or SMs drive the copy, column: the other), each row of panels on one colour
                          scale over its own values
  latency_pairs.png       the latency probes between every ordered pair, ns
  peer_sweep.png          GB/s against size for GPU 0 -> 1, every peer rung, the roof as a line
  busbw_<N>gpu.png        busbw against size per collective: memlab cold, memlab by nccl-tests' method,
                          and nccl-tests' own (out of place), the NVLink roof as a line
  nccl_tests_vs_memlab.md memlab's figure by nccl-tests' method beside nccl-tests' own: for every collective,
                          placement and size both figures (us and busbw), their ratio, and whether they agree
                          within 3% (>= 1 MiB) or 5% or 2 us (below); --table names where it goes

FILES are memlab.results/1 files (transfer records are read, others left out); --nccl-tests takes the
logs nccl-tests printed (each `####` section a test: `all_reduce_perf -g 2`), as
tools/gpu/measure_transfer_gpus.sh writes them; --also-nccl-tests LABEL=LOG draws a further run beside in the
time pictures; --only draws some of the pictures. Exit 2 on a file it cannot read.
"""
import os
import re
import sys
from collections import defaultdict

from . import cli, results, table

MIB = 1 << 20


def _reads(rung, axis_name):
    return axis_name not in (rung.get("ignores") or [])


def collectives():
    """The transfer lab's collectives, in table order: the rungs that read its placement axis."""
    return [v["name"] for v in table.variants("transfer") if _reads(v, "placement")]


def peer_rungs():
    """Its GPU <-> GPU rungs, in table order: the rungs that read its peer axis."""
    return [v["name"] for v in table.variants("transfer") if _reads(v, "peer")]


def _plain(name):
    return name.replace("_", "")


def nccl_test_of(rung, tests):
    """The nccl-tests binary among `tests` that times `rung` (all-to-all: alltoall_perf), matched by
    name without memlab's prefix and underscores; None when none does."""
    want = _plain(rung.split("_", 1)[1] if "_" in rung else rung)
    return next((t for t in tests if _plain(t) == want), None)


def parse_nccl_tests(text):
    """Records from nccl-tests' output: {test, gpus, size, placement, us, algbw, busbw, wrong}.

    A log holds sections that start with `#### <test>_perf -g N`; inside, each data row is
    `size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong` (out of place, then in
    place)."""
    out, test, gpus = [], None, None
    for line in text.splitlines():
        m = re.match(r"#### (\w+)_perf -g (\d+)", line)
        if m:
            test, gpus = m.group(1), int(m.group(2))
            continue
        if test is None or line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if len(f) < 13 or not f[0].isdigit():
            continue
        size = int(f[0])
        tail = f[-8:]
        for placement, (t, alg, bus, wrong) in (("out_of_place", tail[:4]), ("in_place", tail[4:])):
            try:
                rec = {"test": test, "gpus": gpus, "size": size, "placement": placement,
                       "us": float(t), "algbw": float(alg), "busbw": float(bus), "wrong": wrong}
            except ValueError:
                continue
            out.append(rec)
    return out


def _transfer(records):
    return [r for r in records if r.get("lab") == "transfer" and r.get("status") == "ok"]


def _device_name(header):
    d = header.get("device", {})
    return d.get("name", "GPU")


def _within(memlab_us, nccl_us, size):
    """The acceptance rule: within 3% from 1 MiB up, within 5% or 2 us below."""
    if nccl_us <= 0:
        return False
    rel = abs(memlab_us - nccl_us) / nccl_us
    if size >= MIB:
        return rel <= 0.03
    return rel <= 0.05 or abs(memlab_us - nccl_us) <= 2.0


def comparison(records, nccl):
    """Rows: (rung, gpus, placement, size, memlab us, nccl-tests us, ratio, within) for every pair found."""
    index = {(n["test"], n["gpus"], n["placement"], n["size"]): n for n in nccl}
    tests = sorted({n["test"] for n in nccl})
    rows = []
    for r in records:
        if r["variant"] not in collectives() or "nccl_tests" not in r:
            continue
        p = r["params"]
        key = (nccl_test_of(r["variant"], tests), int(p.get("gpus", 0)), p.get("placement", "out_of_place"), int(p["n"]))
        n = index.get(key)
        if n is None:
            continue
        m_us = 1e3 * r["nccl_tests"]["median_ms"]
        rows.append({"rung": r["variant"], "gpus": key[1], "placement": key[2], "size": key[3], "memlab_us": m_us,
                     "nccl_us": n["us"], "memlab_busbw": r.get("nccl_tests_busbw_gbps", 0), "nccl_busbw": n["busbw"],
                     "cold_us": 1e3 * r["cold"]["median_ms"], "ratio": m_us / n["us"] if n["us"] else 0,
                     "within": _within(m_us, n["us"], key[3])})
    rows.sort(key=lambda x: (x["gpus"], x["rung"], x["placement"], x["size"]))
    return rows


def _size_text(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def comparison_markdown(rows, device, graph_launches=0):
    """The comparison as a page; `graph_launches` > 0: both tools ran nccl-tests' graph mode (-G)."""
    method = ("nccl-tests' graph mode: 20 launches back to back captured once per GPU, replayed "
              f"{graph_launches} times, host clock; nccl-tests with -G {graph_launches}" if graph_launches > 0
              else "nccl-tests' own loop (1 warm-up, 20 launches back to back, host clock)")
    title = "nccl-tests' method, -G" if graph_launches > 0 else "nccl-tests' method"
    lines = [f"# memlab ({title}) against nccl-tests, {device}", "",
             "Both tools on one machine, one after the other; uint8, sum. `memlab` is the median of repetitions of "
             f"{method}; `cold` is memlab's headline (one launch after an L2 flush). Within: 3% from 1 MiB up, "
             "else 5% or 2 us.", "",
             "| GPUs | rung | placement | size | nccl-tests us | memlab us | ratio | busbw nccl-tests | busbw memlab "
             "| cold us | within |", "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for x in rows:
        lines.append(f"| {x['gpus']} | {x['rung']} | {x['placement']} | {_size_text(x['size'])} | {x['nccl_us']:.2f} | "
                     f"{x['memlab_us']:.2f} | {x['ratio']:.3f} | {x['nccl_busbw']:.2f} | {x['memlab_busbw']:.2f} | "
                     f"{x['cold_us']:.2f} | {'yes' if x['within'] else '**no**'} |")
    bad = [x for x in rows if not x["within"]]
    lines += ["", "By size band (points within of points; the median of memlab / nccl-tests):", ""]
    bands = (("below 1 MiB", lambda n: n < MIB), ("1 MiB and above", lambda n: n >= MIB),
             ("16 MiB and above", lambda n: n >= 16 * MIB))
    for gpus in sorted({x["gpus"] for x in rows}) + [None]:
        for band, inside in bands:
            here = [x for x in rows if inside(x["size"]) and (gpus is None or x["gpus"] == gpus)]
            if here:
                ratios = sorted(x["ratio"] for x in here)
                mid = len(ratios) // 2
                median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
                who = f"{gpus} GPUs" if gpus is not None else "all"
                lines.append(f"- {who}, {band}: {sum(x['within'] for x in here)} of {len(here)} within, median "
                             f"{median:.3f}")
    lines += ["", f"{len(rows) - len(bad)} of {len(rows)} points within; "
              + ("none outside." if not bad else "outside: " + ", ".join(
                  f"{x['rung']} {x['gpus']} GPUs {x['placement']} {_size_text(x['size'])} ({x['ratio']:.3f})"
                  for x in bad))]
    return "\n".join(lines) + "\n"


def _method(graph_launches):
    """nccl-tests' method as the figures name it: its graph mode reads as its flag, -G N."""
    return f"nccl-tests -G {graph_launches}" if graph_launches > 0 else "nccl-tests"


def collective_picture(records, nccl, gpus, out, device, name, title, draw, ylabel, yscale="linear"):
    """One panel per collective measured on `gpus` GPUs, out of place, against size: `draw(ax, rung, mine, theirs)`
    draws memlab's records (`mine`, by size) and nccl-tests' rows of that collective (`theirs`, by size). Returns
    the path of out/`name`, or None when no collective ran on `gpus` GPUs."""
    import matplotlib.pyplot as plt

    rungs = [v for v in collectives() if any(r["variant"] == v and int(r["params"].get("gpus", 0)) == gpus
                                             for r in records)]
    if not rungs:
        return None
    tests = sorted({n["test"] for n in nccl})
    cols = 3
    rows_n = (len(rungs) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 3.8 * rows_n), squeeze=False, layout="constrained")
    for ax, rung in zip(axes.flat, rungs):
        mine = sorted((r for r in records if r["variant"] == rung and int(r["params"].get("gpus", 0)) == gpus
                       and r["params"].get("placement", "out_of_place") == "out_of_place"),
                      key=lambda r: r["params"]["n"])
        theirs = sorted((n for n in nccl if n["test"] == nccl_test_of(rung, tests) and n["gpus"] == gpus
                         and n["placement"] == "out_of_place" and n["size"] > 0), key=lambda n: n["size"])
        draw(ax, rung, mine, theirs, tests)
        ax.set_xscale("log", base=2)
        ax.set_yscale(yscale)
        ax.set_title(rung, fontsize=10)
        ax.set_xlabel("size S (bytes, log scale)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[len(rungs):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"NCCL collectives on {gpus} x {device}, one process: {title}", fontsize=11)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path


def busbw_picture(records, nccl, gpus, out, device, roof, graph_launches=0):
    """busbw against size per collective: memlab cold, memlab by nccl-tests' method, nccl-tests' own; the NVLink
    roof as a line."""
    def draw(ax, rung, mine, theirs, tests):
        xs = [r["params"]["n"] for r in mine]
        ax.plot(xs, [r.get("busbw_gbps", 0) for r in mine], "o-", ms=3, label="memlab cold (L2 flushed, one launch)")
        ax.plot(xs, [r.get("nccl_tests_busbw_gbps", 0) for r in mine], "s-", ms=3,
                label="memlab, nccl-tests' method" if graph_launches <= 0 else f"memlab, {_method(graph_launches)}")
        if theirs:
            ax.plot([n["size"] for n in theirs], [n["busbw"] for n in theirs], "k--", lw=1,
                    label=_method(graph_launches))
        if roof:
            ax.axhline(roof, color="grey", lw=0.8, ls=":")
            ax.text(xs[-1] if xs else 1, roof, f"NVLink {roof:.0f} GB/s ", va="bottom", ha="right", fontsize=7,
                    color="grey")

    return collective_picture(records, nccl, gpus, out, device, f"busbw_{gpus}gpu.png",
                              "bus bandwidth against size, out of place", draw, "busbw (GB/s)")


def time_picture(records, nccl, gpus, out, device, graph_launches=0, more_nccl=()):
    """Microseconds per collective against size, log-log: where the launch path, not the link, sets the time.
    `graph_launches` > 0: both tools ran nccl-tests' graph mode; `more_nccl`: (label, rows) of further
    nccl-tests runs drawn beside (dotted)."""
    method = "nccl-tests' method" if graph_launches <= 0 else _method(graph_launches)

    def draw(ax, rung, mine, theirs, tests):
        xs = [r["params"]["n"] for r in mine]
        ax.plot(xs, [1e3 * r["cold"]["median_ms"] for r in mine], "o-", ms=3, label="memlab cold")
        timed = [r for r in mine if "nccl_tests" in r]
        ax.plot([r["params"]["n"] for r in timed], [1e3 * r["nccl_tests"]["median_ms"] for r in timed], "s-", ms=3,
                label=f"memlab, {method} (median of repetitions)")
        ax.plot(xs, [1e3 * r["graph"]["median_ms"] if (r.get("graph") or {}).get("samples") else float("nan")
                     for r in mine], "^-", ms=3, lw=0.8, label="memlab graph (GPU only)")
        if theirs:
            ax.plot([n["size"] for n in theirs], [n["us"] for n in theirs], "k--", lw=1,
                    label=f"{_method(graph_launches)} (one run)")
        for label, rows in more_nccl:
            other = sorted((n for n in rows if n["test"] == nccl_test_of(rung, tests) and n["gpus"] == gpus
                            and n["placement"] == "out_of_place" and n["size"] > 0), key=lambda n: n["size"])
            if other:
                ax.plot([n["size"] for n in other], [n["us"] for n in other], ":", color="grey", lw=1.2, label=label)

    mode = f", both tools in nccl-tests' graph mode (-G {graph_launches})" if graph_launches > 0 else ""
    return collective_picture(records, nccl, gpus, out, device, f"time_{gpus}gpu.png",
                              f"time against size, out of place{mode}", draw, "µs per collective (log scale)",
                              yscale="log")


def _copies(records):
    """Peer copy records: the peer rungs' records that carry no figures of their own kernels (the latency
    probes do)."""
    rungs = peer_rungs()
    return [r for r in records if r["variant"] in rungs and not r.get("measured")]


def _both_ways(r):
    return len(r.get("directions") or {}) > 1


def _heat(ax, grid, norm, cmap, fmt):
    """One pair map: `grid`[this GPU][peer] drawn with `norm` and `cmap`, each cell's value written in the colour
    that reads on it (black on light cells, white on dark), the diagonal (a GPU is not its own peer) left blank."""
    import numpy as np

    n = grid.shape[0]
    im = ax.imshow(grid, norm=norm, cmap=cmap)
    colours = im.cmap(norm(np.nan_to_num(grid, nan=norm.vmin)))
    for i in range(n):
        for j in range(n):
            if not np.isnan(grid[i, j]):
                r, g, b, _ = colours[i, j]
                light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
                ax.text(j, i, fmt(grid[i, j]), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("peer GPU", fontsize=8)
    return im


def _spread(values):
    """max / min - 1 of the values, in percent."""
    return 100 * (max(values) / min(values) - 1) if values and min(values) > 0 else 0.0


def _norm(values):
    """A colour scale over the values' own range (never from 0: the pairs differ by a few percent, and a scale from
    0 would paint them alike), widened to at least 1% of their middle so that equal values do not divide by 0."""
    from matplotlib.colors import Normalize

    lo, hi = min(values), max(values)
    pad = max(0.0, 0.01 * (lo + hi) / 2 - (hi - lo)) / 2
    return Normalize(vmin=lo - pad, vmax=hi + pad)


def pairs_picture(records, size, out, device):
    """GB/s of every ordered pair at one size, a panel per peer copy rung: the one-way rungs on a row, the two-way
    rungs (both directions summed) on the next, each row on one colour scale over its own values, so that a rung
    that is slower than another reads so and the pairs of one rung are compared on the same scale."""
    import matplotlib.pyplot as plt
    import numpy as np

    at = [r for r in _copies(records) if r["params"]["n"] == size and "device" in r]
    rows = [[v for v in peer_rungs() if any(r["variant"] == v and _both_ways(r) == both for r in at)]
            for both in (False, True)]
    rows = [row for row in rows if row]
    if not rows:
        return None
    n = 1 + max(max(r["device"], int(r["params"]["peer"])) for r in at)
    cols = max(len(row) for row in rows)
    fig, axes = plt.subplots(len(rows), cols, figsize=(3.3 * cols + 1.2, 3.5 * len(rows) + 0.8), squeeze=False,
                             layout="constrained")
    for row, axs in zip(rows, axes):
        values = [r["gbps"] for r in at if r["variant"] in row]
        norm = _norm(values)
        both = any(_both_ways(r) for r in at if r["variant"] in row)
        for ax, rung in zip(axs, row):
            grid = np.full((n, n), np.nan)
            for r in at:
                if r["variant"] == rung:
                    grid[r["device"], int(r["params"]["peer"])] = r["gbps"]
            mine = grid[~np.isnan(grid)].tolist()
            im = _heat(ax, grid, norm, "viridis", lambda v: f"{v:.0f}")
            ax.set_title(f"{rung}\n{min(mine):.0f}-{max(mine):.0f} GB/s, pairs within {_spread(mine):.1f}%",
                         fontsize=9)
        axs[0].set_ylabel("this GPU (drives the copy)", fontsize=8)
        for ax in axs[len(row):]:
            ax.axis("off")
        fig.colorbar(im, ax=list(axs), fraction=0.03, pad=0.02,  # at the row's right end, as in every row
                     label="GB/s, both directions summed" if both else "GB/s, one direction")
    fig.suptitle(f"GPU to GPU copies of {_size_text(size)}, every ordered pair of {n} x {device}: GB/s, cold median "
                 "(colour scale over each row's own range)", fontsize=11)
    path = os.path.join(out, f"pairs_{_size_text(size).replace(' ', '')}.png")
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path


def peer_sweep_picture(records, out, device):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.4))
    roof = 0
    copies = _copies(records)
    for rung in peer_rungs():
        mine = sorted((r for r in copies if r["variant"] == rung and r.get("device", 0) == 0 and not _both_ways(r)
                       and int(r["params"].get("peer", -1)) == 1), key=lambda r: r["params"]["n"])
        if mine:
            ax.plot([r["params"]["n"] for r in mine], [r["gbps"] for r in mine], "o-", ms=3, label=rung)
            roof = max(roof, max(r["roof"]["value"] for r in mine))
    if roof:
        ax.axhline(roof, color="grey", ls=":", lw=0.8)
        ax.text(4096, roof, f" NVLink roof {roof:.0f} GB/s (one direction)", va="bottom", fontsize=8, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes copied (log scale)")
    ax.set_ylabel("GB/s, one direction (cold median)")
    ax.set_title(f"GPU 0 -> GPU 1, {device}:\ncopy engine, SM loads, SM stores, memlab::copy", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "peer_sweep.png")
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path


# What each latency probe's panel says it measures, by the memory its chase ends in: (bytes chased at most, words).
CHASE_LEVEL = ((64 << 20, "the peer's L2"), (None, "the peer's DRAM"))


def _moves_with_size(by_pair):
    """The size changes a probe's figure where every pair moves the same way between its smallest and largest
    size (a probe that ignores the size scatters both ways)."""
    steps = [v[-1] - v[0] for v in by_pair.values() if len(v) > 1]
    return bool(steps) and (all(d > 0 for d in steps) or all(d < 0 for d in steps))


def latency_panels(records):
    """[(rung, figure, size or None, title)] of the latency probes (the peer rungs whose records carry their
    kernels' own figures), each probe's first figure in ns: one panel per size where the size changes the figure
    (a chase over the peer's L2, then over its DRAM), else one panel of every size (their median)."""
    at = [r for r in records if r["variant"] in peer_rungs() and "device" in r and r.get("measured")]
    panels = []
    for rung in peer_rungs():
        mine = [r for r in at if r["variant"] == rung]
        if not mine:
            continue
        figure = next(k for k, v in mine[0]["measured"].items() if v.get("unit") == "ns")
        teaches = (table.variant("transfer", rung) or {}).get("teaches", "")
        what = teaches.rsplit(": ", 1)[-1].replace("the ", "", 1)  # "round trip of a read across the link"
        by_pair = defaultdict(list)
        for r in sorted(mine, key=lambda r: r["params"]["n"]):
            by_pair[(r["device"], r["params"]["peer"])].append(r["measured"][figure]["value"])
        sizes = sorted({r["params"]["n"] for r in mine})
        if len(sizes) > 1 and _moves_with_size(by_pair):
            for sz in sizes:
                level = next(words for top, words in CHASE_LEVEL if top is None or sz <= top)
                panels.append((rung, figure, sz, f"{rung}, {_size_text(sz)} chased ({level}):\n{what}, ns"))
        else:
            panels.append((rung, figure, None, f"{rung}:\n{what}, ns"))
    return panels


def latency_picture(records, out, device):
    """Heat maps of the latency probes between every ordered pair (ns): the panels of one probe on one colour scale
    over their own values, so that a faster pair (a GPU nearer the switch) reads so."""
    import matplotlib.pyplot as plt
    import numpy as np

    at = [r for r in records if r["variant"] in peer_rungs() and "device" in r and r.get("measured")]
    panels = latency_panels(records)
    if not panels:
        return None
    n = 1 + max(max(r["device"], int(r["params"]["peer"])) for r in at)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.9 * len(panels) + 1.0, 4.3), squeeze=False,
                             layout="constrained")
    grids = []
    for rung, figure, size, _ in panels:
        cells = defaultdict(list)
        for r in at:
            if r["variant"] == rung and (size is None or r["params"]["n"] == size):
                cells[(r["device"], int(r["params"]["peer"]))].append(r["measured"][figure]["value"])
        grid = np.full((n, n), np.nan)
        for (i, j), v in cells.items():
            grid[i, j] = float(np.median(v))
        grids.append(grid)
    for rung in dict.fromkeys(p[0] for p in panels):
        mine = [k for k, p in enumerate(panels) if p[0] == rung]
        norm = _norm([v for k in mine for v in grids[k][~np.isnan(grids[k])].tolist()])
        for k in mine:
            im = _heat(axes[0][k], grids[k], norm, "magma_r", lambda v: f"{v:.0f}")
            axes[0][k].set_title(panels[k][3], fontsize=8)
        axes[0][mine[0]].set_ylabel("this GPU", fontsize=8)
        fig.colorbar(im, ax=[axes[0][k] for k in mine], fraction=0.04, pad=0.02, label="ns")
    fig.suptitle(f"Latency between GPUs, every ordered pair of {n} x {device} (NVLink through NVSwitch)\n"
                 "row: the GPU that loads or stores, column: the peer; each probe's colour scale over its own range",
                 fontsize=10)
    path = os.path.join(out, "latency_pairs.png")
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path


PICTURES = ("busbw", "time", "pairs", "peer_sweep", "latency", "table")


def parser():
    p = cli.Parser(prog="python -m memlab_tools.plot_gpus", description=__doc__.split("\n")[0],
                   epilog="Exit codes: 0 drawn; 2 a file that cannot be read (one line naming it) or a bad flag.")
    p.add_argument("files", nargs="+", help="memlab.results/1 files of the transfer lab")
    p.add_argument("--nccl-tests", nargs="*", default=[], help="logs of nccl-tests' output (#### <test>_perf -g N)")
    p.add_argument("--also-nccl-tests", action="append", default=[], metavar="LABEL=LOG",
                   help="a further nccl-tests log drawn beside in the time pictures (dotted), with its label; "
                        "repeatable")
    p.add_argument("--only", help=f"draw only these, comma-separated: {', '.join(PICTURES)} (default: all)")
    p.add_argument("--table", help="where the comparison with nccl-tests goes (default: OUT/nccl_tests_vs_memlab.md)")
    p.add_argument("-o", "--out", required=True)
    return p


def _nccl_rows(path):
    with open(path, encoding="utf-8") as fh:
        return parse_nccl_tests(fh.read())


def main(argv=None):
    prog = "plot_gpus"
    a = parser().parse_args(argv)
    only = set(a.only.split(",")) if a.only else set(PICTURES)
    if only - set(PICTURES):
        return cli.fail(prog, f"--only: {sorted(only - set(PICTURES))[0]!r} is not one of {', '.join(PICTURES)}")
    more = []
    for item in a.also_nccl_tests:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            return cli.fail(prog, f"--also-nccl-tests: {item!r} is not LABEL=LOG")
        more.append((label, path))
    records, header = [], {}
    try:
        for f in a.files:
            doc = results.load(f)
            header = header or doc
            records += _transfer(doc["results"])
        nccl = [row for f in a.nccl_tests for row in _nccl_rows(f)]
        more = [(label, _nccl_rows(path)) for label, path in more]
    except results.ResultsError as e:
        return cli.fail(prog, str(e))
    except (OSError, UnicodeDecodeError) as e:
        return cli.fail(prog, f"{getattr(e, 'filename', '') or 'a --nccl-tests log'}: cannot be read "
                              f"({getattr(e, 'strerror', '') or e})")
    os.makedirs(a.out, exist_ok=True)
    device = _device_name(header)
    link = header.get("device", {}).get("link", {})
    roof = link.get("nvlink_gbps", 0)
    graph_launches = header.get("timing", {}).get("nccl_tests_graph_launches", 0)
    made = []
    for gpus in sorted({int(r["params"].get("gpus", 0)) for r in records if r["variant"] in collectives()}):
        if "busbw" in only:
            made.append(busbw_picture(records, nccl, gpus, a.out, device, roof, graph_launches))
        if "time" in only:
            made.append(time_picture(records, nccl, gpus, a.out, device, graph_launches, more))
    if "pairs" in only:
        for size in sorted({r["params"]["n"] for r in _copies(records) if "device" in r}):
            if size >= MIB:
                made.append(pairs_picture(records, size, a.out, device))
    if "peer_sweep" in only and any(r.get("device", 0) == 0 and int(r["params"].get("peer", -1)) == 1
                                    for r in _copies(records)):
        made.append(peer_sweep_picture(records, a.out, device))
    if "latency" in only:
        made.append(latency_picture(records, a.out, device))
    rows = comparison(records, nccl)
    if rows and "table" in only:
        path = a.table or os.path.join(a.out, "nccl_tests_vs_memlab.md")
        cli.write_text(path, comparison_markdown(rows, device, graph_launches))
        made.append(path)
    for m in made:
        if m:
            print(m)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
