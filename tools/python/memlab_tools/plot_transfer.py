"""The transfer lab's pictures: what host <-> device transfers deliver against the PCIe roof.

  python -m memlab_tools.plot_transfer FILES... -o DIR

  transfer_gib.png    GB/s per rung at the largest size, one panel per host memory kind, a bar per
                      direction (bidirectional: both directions summed, each direction's share marked),
                      the PCIe roof of one direction and of two.
  transfer_sweep.png  the copy engine's GB/s against the transfer size, pinned memory, per direction.

Reads memlab.results/1 files of the transfer lab (other labs' records are left out); exit 2 on a file
it cannot read, as the other tools do.
"""
import os
import sys

from . import cli, results

DIRECTIONS = ["h2d", "d2h", "bidir"]
COLOURS = {"h2d": "#1f77b4", "d2h": "#ff7f0e", "bidir": "#2ca02c"}


def _ok(records):
    return [r for r in records if r.get("lab") == "transfer" and r.get("status") == "ok" and r.get("gbps")]


def gib_picture(records, out, device):
    import matplotlib.pyplot as plt

    largest = max((r["params"]["n"] for r in records), default=0)
    rows = [r for r in records if r["params"]["n"] == largest]
    kinds = [k for k in ["pageable", "pinned", "registered", "write_combined"]
             if any(r["params"].get("host_memory") == k for r in rows)]
    if not kinds:
        return None
    rungs = [v for v in ["ce", "sm", "auto"] if any(r["variant"] == v for r in rows)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(3.6 * len(kinds) + 1, 4.2), sharey=True, squeeze=False)
    roof = max((r["roof"]["value"] for r in rows if r["params"].get("direction") != "bidir"), default=0)
    for ax, kind in zip(axes[0], kinds):
        width = 0.8 / len(DIRECTIONS)
        for i, rung in enumerate(rungs):
            for j, d in enumerate(DIRECTIONS):
                rec = [r for r in rows if r["variant"] == rung and r["params"].get("host_memory") == kind
                       and r["params"].get("direction") == d]
                x = i + (j - 1) * width
                if not rec:
                    continue
                g = rec[0]["gbps"]
                ax.bar(x, g, width, color=COLOURS[d], label=d if (ax is axes[0][0] and i == 0) else None)
                ax.text(x, g + 1, f"{g:.1f}", ha="center", va="bottom", fontsize=7, rotation=90)
        if roof:
            ax.axhline(roof, color="k", ls=":", lw=1)
            ax.axhline(2 * roof, color="k", ls="--", lw=0.8)
        ax.set_xticks(range(len(rungs)), rungs)
        ax.set_title(kind, fontsize=10)
        ax.set_ylim(0, max(2 * roof, 10) * 1.12)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("GB/s (bidir: both directions)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if roof:
        from matplotlib.lines import Line2D
        handles += [Line2D([], [], color="k", ls=":"), Line2D([], [], color="k", ls="--")]
        labels += [f"PCIe roof, one direction ({roof:.1f} GB/s)", "both directions"]
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    size = largest / 2**30
    fig.suptitle(f"Host <-> device at {size:g} GiB per direction: {device} (axis from zero)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    path = os.path.join(out, "transfer_gib.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_picture(records, out, device):
    import matplotlib.pyplot as plt

    rows = [r for r in records if r["variant"] == "ce" and r["params"].get("host_memory") == "pinned"]
    sizes = sorted({r["params"]["n"] for r in rows})
    if len(sizes) < 3:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for d in DIRECTIONS:
        pts = sorted((r["params"]["n"], r["gbps"]) for r in rows if r["params"].get("direction") == d)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLOURS[d], label=f"ce, pinned, {d}")
    roof = max((r["roof"]["value"] for r in rows if r["params"].get("direction") != "bidir"), default=0)
    if roof:
        ax.axhline(roof, color="k", ls=":", lw=1, label=f"PCIe roof, one direction ({roof:.1f} GB/s)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("bytes per direction")
    ax.set_ylabel("GB/s (cold median; axis from zero)")
    ax.set_title(f"Copy-engine transfers against size: {device}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "transfer_sweep.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    prog = "memlab-plot-transfer"
    p = cli.Parser(prog=prog, description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        return cli.fail(prog, "matplotlib is not installed (pip install ./tools/python)", cli.MISSING_DEPENDENCY)
    records, device = [], ""
    for f in a.files:
        try:
            doc = results.load(f)
        except results.ResultsError as e:
            return cli.fail(prog, str(e))
        records += _ok(doc.get("results", []))
        device = device or doc.get("device", {}).get("name", "")
    os.makedirs(a.out, exist_ok=True)
    for path in (gib_picture(records, a.out, device), sweep_picture(records, a.out, device)):
        if path:
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
