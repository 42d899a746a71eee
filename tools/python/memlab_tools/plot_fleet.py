"""Pictures of a fleet judged by memlab-fleet (memlab_tools.fleet): the same figures become the page's inline SVG and,
with `memlab-fleet --pictures DIR`, PNGs. The verdict colours are memlab-plot-check's.

- spread: a panel per group (a metric over every GPU of a model; over every pair or node of a model, GPU count and
  link): each GPU (pair, node) as a point at how far its figure is from the group's median, worse downward, coloured by
  what the node's own check said of it; the fleet's threshold as a red line; outliers ringed and named.
- drift: a panel per drifting GPU and metric: its figure over its model's median at each check, and the model's median
  against its first date (a change of the whole fleet shows there, and cancels in the GPU's line).
"""

from __future__ import annotations

import datetime as _dt
import math

from .fleet import signed
from .plot_check import COLOURS

DPI = 110
COLS = 4


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def spread(fleet, model: str):
    """The spread figure of one model's groups (judged ones), or None when it has none."""
    from .fleet import measured, worse_by, group_key

    plt = _plt()
    groups = [g for g in fleet.groups if g.model == model and g.judged]
    if not groups:
        return None
    flagged = {(x.node, x.gpu, x.peer, x.metric) for x in fleet.outliers}
    members = {}
    for c in fleet.latest.values():
        if c.model != model:
            continue
        for r in c.rows:
            if measured(r):
                members.setdefault(group_key(c, r), []).append((c, r))
    rows_n = math.ceil(len(groups) / COLS)
    fig, axes = plt.subplots(rows_n, COLS, figsize=(4.3 * COLS, 3.0 * rows_n + 0.9), squeeze=False)
    _margins(fig, rows_n, 0.9)
    for ax in axes.flat[len(groups):]:
        ax.axis("off")
    for ax, g in zip(axes.flat, groups):
        pts = sorted(members[(g.model, g.scope, g.metric, g.gpus, g.link)],
                     key=lambda cr: (cr[0].node, cr[1].gpu if cr[1].gpu is not None else -1, cr[1].peer or 0))
        ys = [-100 * worse_by(r.value, g.median, r.higher_is_better) for _, r in pts]
        colours = [COLOURS.get(r.verdict, "#999999") for _, r in pts]
        xs = list(range(len(pts)))
        ax.scatter(xs, ys, c=colours, s=10 if len(pts) > 100 else 22, lw=0, zorder=2, rasterized=len(pts) > 200)
        ax.axhline(0, color="black", lw=1)
        ax.axhline(-100 * g.threshold, color=COLOURS["fail"], lw=1.2, ls="--")
        out = [(x, y, c, r) for x, y, (c, r) in zip(xs, ys, pts) if (c.node, r.gpu, r.peer, r.metric) in flagged]
        named = set()
        for x, y, c, r in out:
            ax.scatter([x], [y], s=70, facecolors="none", edgecolors="black", lw=1.2, zorder=3)
            # A pair slow both ways is two points in one place: named once.
            who = (c.node, frozenset((r.gpu, r.peer))) if r.peer is not None else (c.node, r.gpu)
            if who in named:
                continue
            named.add(who)
            where = (c.node if r.gpu is None else f"{c.node}/{r.gpu}" if r.peer is None else
                     f"{c.node}/{r.gpu}>{r.peer}" if (c.node, r.peer, r.gpu, r.metric) not in flagged else
                     f"{c.node}/{min(r.gpu, r.peer)}<>{max(r.gpu, r.peer)}")
            ax.annotate(where, (x, y), textcoords="offset points", xytext=(5, -10), fontsize=7)
        low = min(ys + [-100 * g.threshold])
        high = max(ys + [0.0])
        pad = 0.12 * (high - low) + 0.2
        ax.set_ylim(low - pad, high + pad)
        ax.set_xticks([])
        what = {"gpu": "GPUs", "pair": f"pairs of {g.gpus}-GPU nodes", "node": f"{g.gpus}-GPU nodes"}[g.scope]
        ax.set_title(f"{g.metric}: {g.values} {what}\nmedian {g.median:.4g} {g.unit}, spread {100 * g.spread:.2f}%, "
                     f"rule {100 * g.threshold:.1f}%", fontsize=8.5)
        ax.set_ylabel("% from the median (worse down)", fontsize=7.5)
        ax.tick_params(axis="y", labelsize=7.5)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"memlab fleet: {model}, {sum(1 for c in fleet.latest.values() if c.model == model)} nodes' newest "
                 "checks, each figure against its group's median\npoints coloured by the node's own verdict (green "
                 "pass, yellow warn, red fail, purple sibling); red dashed line: the fleet's rule; ringed: outliers",
                 fontsize=9.5)
    return fig


def _margins(fig, rows_n: int, head_in: float) -> None:
    """Fixed margins (tight_layout costs a second a figure here): the title's inches on top, two-line panel titles."""
    h, w = fig.get_figheight(), fig.get_figwidth()
    fig.subplots_adjust(left=0.8 / w, right=1 - 0.15 / w, bottom=0.06 * 3.0 / h * rows_n / max(rows_n, 1) + 0.02,
                        top=1 - (head_in + 0.1) / h, wspace=0.3, hspace=0.55)


def _day(iso: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))


def drift(fleet):
    """A panel per drift finding, or None when there is none."""
    plt = _plt()
    ds = fleet.drifts
    if not ds:
        return None
    cols = min(COLS, len(ds))
    rows_n = math.ceil(len(ds) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.3 * cols, 3.1 * rows_n + 0.8), squeeze=False)
    _margins(fig, rows_n, 0.5)
    for ax in axes.flat[len(ds):]:
        ax.axis("off")
    for ax, x in zip(axes.flat, ds):
        ts = [_day(t) for t, _, _ in x.history]
        t0 = ts[0]
        days = [(t - t0).total_seconds() / 86400 for t in ts]
        rel = [100 * (v / m - 1) for _, v, m in x.history]
        model = [100 * (m / x.history[0][2] - 1) for _, _, m in x.history]
        ax.plot(days, rel, marker="o", color=COLOURS["fail"], lw=1.5, label="this GPU against the model's median")
        ax.plot(days, model, marker="s", color="black", lw=1, ls="--", mfc="white",
                label="the model's median, against its first date")
        ax.axhline(0, color="#999999", lw=0.8)
        ax.set_xlabel(f"days since {t0:%Y-%m-%d}", fontsize=7.5)
        ax.set_ylabel("% (worse down)" if x.higher_is_better else "% (worse up)", fontsize=7.5)
        ax.tick_params(labelsize=7.5)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{x.where} {x.metric}\n{100 * x.worse_by:.1f}% worse over {x.days:.0f} days (rule "
                     f"{100 * x.threshold:.1f}%); model's median {signed(x.model_moved)}", fontsize=8.5)
    axes.flat[0].legend(fontsize=7, loc="lower left")
    fig.suptitle("memlab fleet: drift, each GPU's figure over its model's median at each check (its serial's "
                 "history)", fontsize=9.5)
    return fig


def slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
