"""The transfer lab across GPUs: pictures and the comparison with nccl-tests, from committed files.

  python -m memlab_tools.plot_gpus FILES... [--nccl-tests LOG...] -o DIR

  pairs_<size>.png        a heat map per peer rung: GB/s for every ordered pair (row: the GPU whose
                          engine or SMs drive the copy, column: the other), % of the NVLink roof
  peer_sweep.png          GB/s against size for GPU 0 -> 1, every peer rung, the roof as a line
  busbw_<N>gpu.png        busbw against size per collective: memlab cold, memlab by nccl-tests' method,
                          and nccl-tests' own (out of place), the NVLink roof as a line
  nccl_tests_vs_memlab.md the table behind the acceptance: for every collective, placement and size both
                          figures (us and busbw), their ratio, and whether it is within 3% (>= 1 MiB) or
                          5% or 2 us (below)

FILES are memlab.results/1 files (transfer records are read, others left out); --nccl-tests takes the
logs nccl-tests printed (each `####` section a test: `all_reduce_perf -g 2`), as
tools/gpu/measure_transfer_gpus.sh writes them. Exit 2 on a file it cannot read.
"""
import argparse
import os
import re
import sys

from . import results, table

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
              else "nccl-tests' own loop: 1 warm-up, 20 launches back to back, host clock")
    title = "nccl-tests' method, -G" if graph_launches > 0 else "nccl-tests' method"
    lines = [f"# memlab ({title}) against nccl-tests, {device}", "",
             f"Same machine, same call; uint8, sum. `memlab` is the median of repetitions of {method}; `cold` is "
             "memlab's headline (one launch after an L2 flush). Within: 3% from 1 MiB up, else 5% or 2 us.", "",
             "| GPUs | rung | placement | size | nccl-tests us | memlab us | ratio | busbw nccl-tests | busbw memlab "
             "| cold us | within |", "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for x in rows:
        lines.append(f"| {x['gpus']} | {x['rung']} | {x['placement']} | {_size_text(x['size'])} | {x['nccl_us']:.2f} | "
                     f"{x['memlab_us']:.2f} | {x['ratio']:.3f} | {x['nccl_busbw']:.2f} | {x['memlab_busbw']:.2f} | "
                     f"{x['cold_us']:.2f} | {'yes' if x['within'] else '**no**'} |")
    bad = [x for x in rows if not x["within"]]
    lines += ["", f"{len(rows) - len(bad)} of {len(rows)} points within; "
              + ("none outside." if not bad else "outside: " + ", ".join(
                  f"{x['rung']} {x['gpus']} GPUs {x['placement']} {_size_text(x['size'])} ({x['ratio']:.3f})"
                  for x in bad))]
    return "\n".join(lines) + "\n"


def busbw_picture(records, nccl, gpus, out, device, roof, graph_launches=0):
    import matplotlib.pyplot as plt

    rungs = [v for v in collectives() if any(r["variant"] == v and int(r["params"].get("gpus", 0)) == gpus
                                             for r in records)]
    if not rungs:
        return None
    tests = sorted({n["test"] for n in nccl})
    cols = 3
    rows_n = (len(rungs) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 3.8 * rows_n), squeeze=False)
    for ax, rung in zip(axes.flat, rungs):
        mine = sorted((r for r in records if r["variant"] == rung and int(r["params"].get("gpus", 0)) == gpus
                       and r["params"].get("placement", "out_of_place") == "out_of_place"),
                      key=lambda r: r["params"]["n"])
        xs = [r["params"]["n"] for r in mine]
        ax.plot(xs, [r.get("busbw_gbps", 0) for r in mine], "o-", ms=3, label="memlab cold (L2 flushed, one launch)")
        ax.plot(xs, [r.get("nccl_tests_busbw_gbps", 0) for r in mine], "s-", ms=3,
                label="memlab, nccl-tests' method" if graph_launches <= 0 else f"memlab, {_method(graph_launches)}")
        theirs = sorted((n for n in nccl if n["test"] == nccl_test_of(rung, tests) and n["gpus"] == gpus
                         and n["placement"] == "out_of_place" and n["size"] > 0), key=lambda n: n["size"])
        if theirs:
            ax.plot([n["size"] for n in theirs], [n["busbw"] for n in theirs], "k--", lw=1, label=_method(graph_launches))
        if roof:
            ax.axhline(roof, color="grey", lw=0.8, ls=":")
            ax.text(xs[-1] if xs else 1, roof, f"NVLink {roof:.0f} GB/s ", va="bottom", ha="right", fontsize=7,
                    color="grey")
        ax.set_xscale("log", base=2)
        ax.set_title(rung, fontsize=10)
        ax.set_xlabel("size S (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(rungs):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"NCCL collectives on {gpus} x {device}, one process: busbw against size, out of place", fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, f"busbw_{gpus}gpu.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _method(graph_launches):
    """nccl-tests' method as the figures name it: its graph mode reads as its flag, -G N."""
    return f"nccl-tests -G {graph_launches}" if graph_launches > 0 else "nccl-tests"


def time_picture(records, nccl, gpus, out, device, graph_launches=0, more_nccl=()):
    """Microseconds per collective against size, log-log: where the launch path, not the link, sets the time.
    `graph_launches` > 0: both tools ran nccl-tests' graph mode; `more_nccl`: (label, rows) of further
    nccl-tests runs drawn beside (dotted)."""
    import matplotlib.pyplot as plt

    rungs = [v for v in collectives() if any(r["variant"] == v and int(r["params"].get("gpus", 0)) == gpus
                                             for r in records)]
    if not rungs:
        return None
    tests = sorted({n["test"] for n in nccl})
    cols = 3
    rows_n = (len(rungs) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 3.8 * rows_n), squeeze=False)
    for ax, rung in zip(axes.flat, rungs):
        mine = sorted((r for r in records if r["variant"] == rung and int(r["params"].get("gpus", 0)) == gpus
                       and r["params"].get("placement", "out_of_place") == "out_of_place"),
                      key=lambda r: r["params"]["n"])
        xs = [r["params"]["n"] for r in mine]
        ax.plot(xs, [1e3 * r["cold"]["median_ms"] for r in mine], "o-", ms=3, label="memlab cold")
        method = "nccl-tests' method" if graph_launches <= 0 else _method(graph_launches)
        ax.plot(xs, [1e3 * r["nccl_tests"]["median_ms"] for r in mine if "nccl_tests" in r], "s-", ms=3,
                label=f"memlab, {method} (median of repetitions)")
        ax.plot(xs, [1e3 * r["graph"]["median_ms"] if r.get("graph", {}).get("samples") else float("nan") for r in mine],
                "^-", ms=3, lw=0.8, label="memlab graph (GPU only)")
        theirs = sorted((n for n in nccl if n["test"] == nccl_test_of(rung, tests) and n["gpus"] == gpus
                         and n["placement"] == "out_of_place" and n["size"] > 0), key=lambda n: n["size"])
        if theirs:
            ax.plot([n["size"] for n in theirs], [n["us"] for n in theirs], "k--", lw=1,
                    label=f"{_method(graph_launches)} (one run)")
        for label, rows in more_nccl:
            other = sorted((n for n in rows if n["test"] == nccl_test_of(rung, tests) and n["gpus"] == gpus
                            and n["placement"] == "out_of_place" and n["size"] > 0), key=lambda n: n["size"])
            if other:
                ax.plot([n["size"] for n in other], [n["us"] for n in other], ":", color="grey", lw=1.2, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(rung, fontsize=10)
        ax.set_xlabel("size S (bytes)")
        ax.set_ylabel("us per collective")
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[len(rungs):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    mode = f", both tools in nccl-tests' graph mode (-G {graph_launches})" if graph_launches > 0 else ""
    fig.suptitle(f"NCCL collectives on {gpus} x {device}, one process: time against size, out of place{mode}",
                 fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, f"time_{gpus}gpu.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _copies(records):
    """Peer copy records: the peer rungs' records that carry no figures of their own kernels (the latency
    probes do)."""
    rungs = peer_rungs()
    return [r for r in records if r["variant"] in rungs and not r.get("measured")]


def _both_ways(r):
    return len(r.get("directions") or {}) > 1


def pairs_picture(records, size, out, device):
    import matplotlib.pyplot as plt
    import numpy as np

    at = [r for r in _copies(records) if r["params"]["n"] == size and "device" in r]
    # one way first, then both ways, each in table order
    order = [v for v in peer_rungs() if any(r["variant"] == v and not _both_ways(r) for r in at)]
    order += [v for v in peer_rungs() if any(r["variant"] == v and _both_ways(r) for r in at)]
    rungs = order
    if not rungs:
        return None
    n = 1 + max(max(r["device"], int(r["params"]["peer"])) for r in at)
    cols = 4
    rows_n = (len(rungs) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.6 * cols, 3.4 * rows_n), squeeze=False)
    for ax, rung in zip(axes.flat, rungs):
        grid = np.full((n, n), np.nan)
        pct = np.full((n, n), np.nan)
        for r in at:
            if r["variant"] == rung:
                grid[r["device"], int(r["params"]["peer"])] = r["gbps"]
                pct[r["device"], int(r["params"]["peer"])] = r.get("pct_roof", 0)
        bidir = any(_both_ways(r) for r in at if r["variant"] == rung)
        top = max((r["roof"]["value"] for r in at if r["variant"] == rung), default=1)
        im = ax.imshow(grid, vmin=0, vmax=top, cmap="viridis")
        for i in range(n):
            for j in range(n):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.0f}\n{pct[i, j]:.0f}%", ha="center", va="center", fontsize=7,
                            color="white" if grid[i, j] < 0.6 * top else "black")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xlabel("peer GPU")
        ax.set_ylabel("this GPU (drives the copy)")
        ax.set_title(f"{rung}\n(GB/s, % of {'both directions' if bidir else 'one direction'}: {top:.0f})",
                     fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    for ax in list(axes.flat)[len(rungs):]:
        ax.axis("off")
    fig.suptitle(f"GPU <-> GPU, every ordered pair, {_size_text(size)}: {n} x {device}, cold median", fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, f"pairs_{_size_text(size).replace(' ', '')}.png")
    fig.savefig(path, dpi=120)
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
    ax.set_xlabel("bytes copied")
    ax.set_ylabel("GB/s (cold median)")
    ax.set_title(f"GPU 0 -> GPU 1, {device}:\ncopy engine, SM loads, SM stores, memlab::copy", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "peer_sweep.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def latency_picture(records, out, device):
    """Heat maps of the latency probes: ns a peer load takes (chase) and ns one way (ping-pong)."""
    import matplotlib.pyplot as plt
    import numpy as np

    # The latency probes: the peer rungs whose records carry their kernels' own figures; each panel one
    # probe's first figure in ns (its name says what it is), one per size where the size is read.
    at = [r for r in records if r["variant"] in peer_rungs() and "device" in r and r.get("measured")]
    if not at:
        return None
    n = 1 + max(max(r["device"], int(r["params"]["peer"])) for r in at)
    panels = []
    for rung in peer_rungs():
        mine = [r for r in at if r["variant"] == rung]
        if not mine:
            continue
        figure = next(k for k, v in mine[0]["measured"].items() if v.get("unit") == "ns")
        teaches = (table.variant("transfer", rung) or {}).get("teaches", "").split(":")[0].split(" (")[0]
        sizes = sorted({r["params"]["n"] for r in mine})
        # One panel per size only where the size changes the figure (a probe that ignores it: one panel).
        by_pair = {}
        for r in mine:
            by_pair.setdefault((r["device"], r["params"]["peer"]), []).append(r["measured"][figure]["value"])
        moves = any(max(v) > 1.005 * min(v) for v in by_pair.values() if min(v) > 0)
        for sz in (sizes if len(sizes) > 1 and moves else [None]):
            panels.append((rung, figure, teaches, sz))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.9), squeeze=False)
    for ax, (rung, figure, title, size) in zip(axes[0], panels):
        grid = np.full((n, n), np.nan)
        for r in at:
            if r["variant"] == rung and (size is None or r["params"]["n"] == size):
                grid[r["device"], int(r["params"]["peer"])] = r["measured"][figure]["value"]
        im = ax.imshow(grid, cmap="magma_r", vmin=0, vmax=np.nanmax(grid) * 1.1)
        for i in range(n):
            for j in range(n):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=8, color="white")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xlabel("peer GPU")
        ax.set_ylabel("this GPU")
        label = f"{rung}, {_size_text(size)}" if size else f"{rung}, every size"
        ax.set_title(f"{label}: {figure} (ns)\n{title}", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(f"Latency between GPUs: {n} x {device} (NVLink through NVSwitch)", fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, "latency_pairs.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m memlab_tools.plot_gpus", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--nccl-tests", nargs="*", default=[], help="logs of nccl-tests' output")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    records, header = [], {}
    try:
        for f in a.files:
            doc = results.load(f)
            header = header or doc
            records += _transfer(doc["results"])
        nccl = []
        for f in a.nccl_tests:
            with open(f, encoding="utf-8") as fh:
                nccl += parse_nccl_tests(fh.read())
    except (results.ResultsError, OSError) as e:
        print(f"plot_gpus: {e}", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    device = _device_name(header)
    link = header.get("device", {}).get("link", {})
    roof = link.get("nvlink_gbps", 0)
    graph_launches = header.get("timing", {}).get("nccl_tests_graph_launches", 0)
    made = []
    for gpus in sorted({int(r["params"].get("gpus", 0)) for r in records if r["variant"] in collectives()}):
        made.append(busbw_picture(records, nccl, gpus, a.out, device, roof, graph_launches))
        made.append(time_picture(records, nccl, gpus, a.out, device, graph_launches))
    for size in sorted({r["params"]["n"] for r in _copies(records) if "device" in r}):
        if size >= MIB:
            made.append(pairs_picture(records, size, a.out, device))
    if any(r.get("device", 0) == 0 and int(r["params"].get("peer", -1)) == 1 for r in _copies(records)):
        made.append(peer_sweep_picture(records, a.out, device))
    made.append(latency_picture(records, a.out, device))
    rows = comparison(records, nccl)
    if rows:
        path = os.path.join(a.out, "nccl_tests_vs_memlab.md")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(comparison_markdown(rows, device, graph_launches))
        made.append(path)
    for m in made:
        if m:
            print(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
