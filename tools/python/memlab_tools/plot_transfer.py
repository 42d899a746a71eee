"""The transfer lab's pictures: what host <-> device transfers deliver against the PCIe roof.

  python -m memlab_tools.plot_transfer FILES... -o DIR [--only gib|sweep]

  transfer_gib.png    GB/s per rung at the largest size, one panel per host memory kind holding only the rungs
                      measured with it (bidirectional: both directions summed), each bar under the PCIe roof of
                      its own directions (one for h2d and d2h, two for bidir).
  transfer_sweep.png  per rung and host memory kind measured over three sizes or more: GB/s against the transfer
                      size, per direction (the cold median, a bar from the fastest to the slowest sample), each
                      direction under its own roof; beside it the time per copy against size, log-log, where a
                      small copy's fixed cost shows as the floor.

A case several files hold is drawn from the last file given that holds it. --only draws one of the two pictures,
so that each can come from the files its page cites (a sweep's 1 GiB point is another run than the 1 GiB runs).

The rungs, the directions and the host memory kinds come from the transfer lab's table (memlab_tools/table.py):
the rungs that read the host_memory axis, in ladder order. Reads memlab.results/1 files of the transfer lab
(other labs' records are left out); exit 2 on a file it cannot read, as the other tools do.
"""
import os
import sys

from . import cli, results, table

LAB = "transfer"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
PICTURES = ("gib", "sweep")  # transfer_gib.png, transfer_sweep.png


def directions() -> list[str]:
    return (table.axis(LAB, "direction") or {}).get("words", [])


def host_kinds() -> list[str]:
    return (table.axis(LAB, "host_memory") or {}).get("words", [])


def host_rungs() -> list[str]:
    """The lab's variants that move bytes between host and device: those reading the host_memory axis."""
    return [v["name"] for v in table.variants(LAB) if "host_memory" not in v.get("ignores", [])]


def colour(direction: str) -> str:
    words = directions()
    return PALETTE[words.index(direction) % len(PALETTE)] if direction in words else "#555555"


def _ok(records):
    return [r for r in records if r.get("lab") == LAB and r.get("status") == "ok" and r.get("gbps")]


def _roof_label(ways: int, value: float) -> str:
    return f"PCIe roof, {'one direction' if ways == 1 else 'both directions'} ({value:.1f} GB/s)"


def _ways(r) -> int:
    return max(1, sum(1 for d in (r.get("directions") or {}).values() if d.get("bytes")))


def panels(rows) -> dict[str, list[str]]:
    """Host memory kind -> the rungs measured with it, in ladder order: a panel holds no slot for a rung that was
    not measured there (sm and auto refuse pageable memory)."""
    kinds = [k for k in host_kinds() if any(r["params"].get("host_memory") == k for r in rows)]
    return {k: [v for v in host_rungs() if any(r["variant"] == v and r["params"].get("host_memory") == k for r in rows)]
            for k in kinds}


def gib_picture(records, out, device, skipped=()):
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    largest = max((r["params"]["n"] for r in records), default=0)
    rows = [r for r in records if r["params"]["n"] == largest and r["variant"] in host_rungs()]
    kinds = [k for k in host_kinds() if any(r["params"].get("host_memory") == k for r in rows)]
    if not kinds:
        return None
    rungs_of = panels(rows)
    fig, axes = plt.subplots(1, len(kinds), figsize=(min(1.45 * sum(len(v) for v in rungs_of.values()) + 2, 17), 5.2),
                             sharey=True, squeeze=False, width_ratios=[len(rungs_of[k]) for k in kinds],
                             layout="constrained")
    top = max([r["gbps"] for r in rows] + [r["roof"]["value"] for r in rows if r.get("roof")])
    width = 0.8 / len(directions())
    roofs = {}
    for ax, kind in zip(axes[0], kinds):
        for i, rung in enumerate(rungs_of[kind]):
            for j, d in enumerate(directions()):
                rec = [r for r in rows if r["variant"] == rung and r["params"].get("host_memory") == kind
                       and r["params"].get("direction") == d]
                if not rec:
                    continue
                x = i + (j - (len(directions()) - 1) / 2) * width
                g = rec[0]["gbps"]
                ax.bar(x, g, width * 0.95, color=colour(d))
                ax.text(x, g + 0.01 * top, f"{g:.1f}", ha="center", va="bottom", fontsize=8)
                roof = (rec[0].get("roof") or {}).get("value", 0)
                if roof:  # the roof of this bar's directions, over the bar
                    ways = _ways(rec[0])
                    ax.hlines(roof, x - width / 2, x + width / 2, color="black", lw=1.6, ls="-" if ways == 1 else "--")
                    roofs[ways] = roof
        ax.set_xticks(range(len(rungs_of[kind])), rungs_of[kind], fontsize=10)
        ax.set_xlim(-0.5, len(rungs_of[kind]) - 0.5)
        others = [v for v in host_rungs() if v not in rungs_of[kind]]
        why = [s for s in skipped if s["params"].get("host_memory") == kind and s["variant"] in others]
        ax.set_title(kind + (f"\n({', '.join(others)}: not in these files)" if others and not why else ""), fontsize=10)
        if why:
            ax.set_title(f"{kind}\n({', '.join(sorted({w['variant'] for w in why}))}: {why[0].get('note', '')[:50]})",
                         fontsize=9)
        ax.set_ylim(0, top * 1.15)
        ax.grid(axis="y", alpha=0.3)
        ax.tick_params(axis="y", labelsize=9)
    axes[0][0].set_ylabel("GB/s, cold median (bidir: both directions summed); axis from 0", fontsize=9)
    handles = [Line2D([], [], color=colour(d), lw=8, label=d) for d in directions()
               if any(r["params"].get("direction") == d for r in rows)]
    handles += [Line2D([], [], color="black", lw=1.6, ls="-" if w == 1 else "--", label=_roof_label(w, v))
                for w, v in sorted(roofs.items())]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=9, frameon=False)
    size = largest / 2**30
    # Files of several runs (another day, another machine of the model): the title says which panels came from which.
    runs = {}
    for kind in kinds:
        for r in rows:
            if r["params"].get("host_memory") == kind and r.get("_run"):
                runs.setdefault(r["_run"], []).append(kind)
    runs = {k: list(dict.fromkeys(v)) for k, v in runs.items()}
    which = ("\npanels measured on different days: "
             + "; ".join(f"{', '.join(v)} {k}" for k, v in sorted(runs.items(), reverse=True))
             + " (compare bars within a panel)") if len(runs) > 1 else ""
    return _finish(fig, out, "transfer_gib.png", f"Host <-> device at {size:g} GiB per direction on {device}\n"
                   "each bar under the PCIe roof of its own directions; axis from zero" + which)


def _finish(fig, out, name, title):
    """The figure's title, written as out/name (110 dpi), closed; returns the path."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=11)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_picture(records, out, device):
    """Per rung and host memory kind measured over three sizes or more, a row of two panels: GB/s against size
    (each point the cold median, its bar the fastest and slowest sample), each direction under its roof; and the
    time per copy against size, log-log, where the fixed cost of a small copy is the floor the curve flattens to."""
    import matplotlib.pyplot as plt

    panels = []
    for rung in host_rungs():
        for kind in host_kinds():
            rows = [r for r in records if r["variant"] == rung and r["params"].get("host_memory") == kind]
            if len({r["params"]["n"] for r in rows}) >= 3:
                panels.append((rung, kind, rows))
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 2, figsize=(15, 5.4 * len(panels)), squeeze=False, layout="constrained")
    for (gb, us), (rung, kind, rows) in zip(axes, panels):
        for d in directions():
            pts = sorted((r["params"]["n"], r) for r in rows if r["params"].get("direction") == d)
            if not pts:
                continue
            xs = [n for n, _ in pts]
            g = [r["gbps"] for _, r in pts]
            ms = [r["cold"]["median_ms"] for _, r in pts]
            # the bar: the bytes over the slowest and the fastest sample (GB/s scales as 1 / time)
            lo = [v - v * m / r["cold"].get("max_ms", m) for v, m, (_, r) in zip(g, ms, pts)]
            hi = [v * m / r["cold"].get("min_ms", m) - v for v, m, (_, r) in zip(g, ms, pts)]
            gb.errorbar(xs, g, yerr=[lo, hi], fmt="o-", color=colour(d), capsize=2, elinewidth=0.8,
                        label=f"{d}: cold median; bar: fastest to slowest sample")
            us.plot(xs, [1e3 * m for m in ms], "o-", color=colour(d), label=f"{d}, cold median")
        roofs = {_ways(r): r["roof"]["value"] for r in rows if (r.get("roof") or {}).get("value")}  # ways -> GB/s
        for ways, v in sorted(roofs.items()):
            used = [d for d in directions()
                    if any(r["params"].get("direction") == d and _ways(r) == ways for r in rows)]
            gb.axhline(v, color="black", lw=1, ls=":" if ways == 1 else "--",
                       label=f"{_roof_label(ways, v)}: {', '.join(used)}")
        gb.set_ylim(0, 1.1 * max([r["gbps"] * r["cold"]["median_ms"] / r["cold"].get("min_ms", r["cold"]["median_ms"])
                                  for r in rows] + list(roofs.values())))
        gb.set_ylabel("GB/s (bidir: both directions summed); axis from 0", fontsize=9)
        gb.set_title(f"{rung}, {kind} host memory: bandwidth", fontsize=10)
        gb.legend(loc="upper left", fontsize=8.5)
        us.set_yscale("log")
        us.set_ylabel("µs per copy, cold median (log scale)", fontsize=9)
        smallest = min(r["params"]["n"] for r in rows)
        floor = min(1e3 * r["cold"]["median_ms"] for r in rows if r["params"]["n"] == smallest and _ways(r) == 1)
        us.axhline(floor, color="grey", lw=0.8, ls=":",
                   label=f"the smallest copy's time, {floor:.1f} µs: a fixed cost whatever the bytes")
        us.set_title(f"{rung}, {kind} host memory: time per copy", fontsize=10)
        us.legend(loc="upper left", fontsize=8.5)
        for ax in (gb, us):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("bytes per direction (log scale)", fontsize=10)
            ax.grid(alpha=0.3, which="both")
    return _finish(fig, out, "transfer_sweep.png", f"Host <-> device copies against size on {device}")


def main(argv=None):
    prog = "memlab-plot-transfer"
    p = cli.Parser(prog=prog, description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--only", choices=PICTURES, help="draw this picture only")
    a = p.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        return cli.fail(prog, "matplotlib is not installed (pip install ./tools/python)", cli.MISSING_DEPENDENCY)
    records, skipped, device = [], [], ""
    for f in a.files:
        try:
            doc = results.load(f)
        except results.ResultsError as e:
            return cli.fail(prog, str(e))
        run = str(doc.get("created", ""))[:10]
        records += [dict(r, _run=run) for r in _ok(doc.get("results", []))]
        skipped += [r for r in doc.get("results", []) if r.get("lab") == LAB and r.get("status") == "skipped"]
        if not device and doc.get("device", {}).get("name"):
            device = f"{doc['device']['name']}, cc {doc['device'].get('cc', '?')}"
    # A case in several files (the 1 GiB pinned copies of a sweep and of the per-kind runs): the last file given wins.
    latest = {(r["variant"], tuple(sorted(r["params"].items()))): r for r in records}
    records = list(latest.values())
    os.makedirs(a.out, exist_ok=True)
    for name in [a.only] if a.only else PICTURES:
        path = gib_picture(records, a.out, device, skipped) if name == "gib" else sweep_picture(records, a.out, device)
        if path:
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
