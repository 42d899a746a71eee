"""A picture of a `memlab check`: per-GPU bars of every metric judged against a reference, with the
reference's band (its median, the warning band and the failure zone), coloured by verdict; the pairs'
peer copies and the node's all-reduce in panels of their own.

  memlab-plot-check CHECK.json [-o check.png]

CHECK.json is what `memlab check --out FILE.json` (or `--format json`) writes (schema memlab.check/2 or /1,
docs/check.schema.json). Exit 2 on a file it cannot read (one line naming it).
"""
from __future__ import annotations

import argparse
import json
import math
import sys

COLOURS = {"pass": "#4c9a2a", "warn": "#e0a020", "fail": "#c0392b", "sibling": "#8e44ad",
           "no_reference": "#7f8c8d", "skip": "#d0d0d0", "busy": "#2980b9", "interrupted": "#d0d0d0"}


class CheckError(Exception):
    pass


def load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckError(f"{path}: {e}") from e
    if not isinstance(j, dict) or j.get("schema") not in ("memlab.check/1", "memlab.check/2"):
        raise CheckError(f"{path}: not a memlab.check/1 or /2 file")
    return j


def panels(check: dict) -> list[tuple[str, list[dict]]]:
    """The metrics with a number, in the check's order: (metric, its rows). NVML's counts (ECC, PCIe, clock
    events) are judged by rules, not bands: they stay in the table."""
    order, rows = [], {}
    for r in check["rows"]:
        if r["unit"] in ("errors", "reasons", "gen", "lanes"):
            continue
        if r["metric"] not in rows:
            order.append(r["metric"])
            rows[r["metric"]] = []
        rows[r["metric"]].append(r)
    return [(m, rows[m]) for m in order]


def label(r: dict) -> str:
    if r["scope"] == "pair":
        return f"{r['gpu']}>{r['peer']}" if r["gpu"] is not None else "pairs"
    if r["scope"] == "node":
        return "node"
    return f"GPU {r['gpu']}"


def draw(check: dict, out: str, note: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = panels(check)
    cols = 4
    rows_n = max(1, math.ceil(len(ps) / cols))
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.2 * rows_n), squeeze=False)
    for ax in axes.flat[len(ps):]:
        ax.axis("off")
    for ax, (metric, rs) in zip(axes.flat, ps):
        better = "higher is better" if rs[0]["higher_is_better"] else "lower is better"
        ax.set_title(f"{metric} ({rs[0]['unit']}, {better})", fontsize=9)
        if all(r["value"] is None for r in rs):
            # Nothing measured (skipped, interrupted, busy without a figure): say why, draw no point at zero.
            why = rs[0].get("measured_note") or rs[0].get("note") or ""
            ax.text(0.5, 0.5, f"{rs[0]['verdict']}" + (f":\n{why}" if why else ""), ha="center", va="center",
                    fontsize=8, wrap=True, transform=ax.transAxes, color="#555555")
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        xs = list(range(len(rs)))
        values = [r["value"] if r["value"] is not None else 0.0 for r in rs]
        # Points, not bars: the axis is zoomed to the reference's bands, and a bar on a cut axis would make a
        # spread of a few percent look large.
        ax.scatter(xs, values, c=[COLOURS.get(r["verdict"], "#999999") for r in rs], s=46, zorder=3,
                   edgecolors="black", linewidths=0.5)
        ax.set_xlim(-0.6, len(rs) - 0.4)
        ref = next((r for r in rs if r["reference"] is not None), None)
        if ref is not None:
            m, warn, fail = ref["reference"], ref["warn_at"], ref["fail_at"]
            ax.axhline(m, color="black", lw=1, label="reference median")
            ax.axhspan(min(warn, fail), max(warn, fail), color=COLOURS["warn"], alpha=0.18, lw=0)
            edge = 0 if ref["higher_is_better"] else max(values + [fail]) * 1.2
            ax.axhspan(min(edge, fail), max(edge, fail), color=COLOURS["fail"], alpha=0.10, lw=0)
        known = [v for v in values if v > 0]
        if known:
            lo = min(known + ([ref["fail_at"]] if ref else []))
            hi = max(known + ([ref["reference"], ref["fail_at"]] if ref else []))
            ax.set_ylim(max(0.0, lo - 0.25 * (hi - lo) - 0.05 * hi), hi + 0.1 * (hi - lo) + 0.02 * hi)
        ax.set_xticks(xs)
        ax.set_xticklabels([label(r) for r in rs], fontsize=7 if len(rs) > 6 else 9,
                           rotation=90 if len(rs) > 6 else 0)
        ax.tick_params(axis="y", labelsize=8)
    gpus = check.get("gpus") or [{}]
    name = gpus[0].get("name", "?")
    ref = check.get("reference")
    # The reference by its model and date: the host name it was written on says nothing to a reader.
    where = f"judged by the reference for {ref['model']} ({ref['date']})" if ref else "no reference"
    counts = ", ".join(f"{n} {v}" for v, n in check.get("counts", {}).items())
    link = check.get("link", "?")
    machine = (f"1 x {name} ({link})" if len(gpus) == 1 else f"{len(gpus)} x {name}, joined by {link}")
    fig.suptitle(f"memlab check on {machine}, {check['created'][:10]}; "
                 f"{where}{'; ' + note if note else ''}\n{counts}; points coloured by verdict (green pass, yellow warn, "
                 "red fail, purple sibling, blue busy, grey no reference or skipped); black line: the reference's median; "
                 "yellow band: warning zone, red: failure zone (axes zoomed, not from zero)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memlab-plot-check", description=__doc__.split("\n\n")[0])
    ap.add_argument("check", help="a memlab.check/2 (or /1) file")
    ap.add_argument("-o", "--out", default="check.png", help="the picture (PNG)")
    ap.add_argument("--note", default="", help="a line for the title (what the run was, e.g. a fault it was given)")
    a = ap.parse_args(argv)
    try:
        check = load(a.check)
    except CheckError as e:
        print(f"memlab-plot-check: {e}", file=sys.stderr)
        return 2
    draw(check, a.out, a.note)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
