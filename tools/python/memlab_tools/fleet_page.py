"""memlab-fleet's HTML page (--html) and its pictures as PNG (--pictures): one self-contained file, as memlab-report's.

The fleet's verdict first, in words; the findings, each with what the node's own check said and the command that
measures it again; every GPU, pair and node against its group's median (plot_fleet.spread); the drifting GPUs'
histories (plot_fleet.drift); the rule and why; the groups with their medians, spreads and thresholds; the nodes; what
was not judged.
"""

from __future__ import annotations

import os
from collections import Counter

from . import plot_fleet
from .page import esc, figure, fmt, page, pct, raw, svg_of, table


def _figures(f) -> list[tuple[str, str, object]]:
    """(file name, caption, figure) of every picture the page shows."""
    out = []
    for model in sorted({c.model for c in f.latest.values()}):
        fig = plot_fleet.spread(f, model)
        if fig is not None:
            out.append((f"fleet_{plot_fleet.slug(model)}.png",
                        f"{model}: each GPU, pair and node of the newest checks against its group's median (worse "
                        "down), coloured by its node's own verdict; the red dashed line is the fleet's rule; ringed "
                        "points are the outliers.", fig))
    fig = plot_fleet.drift(f)
    if fig is not None:
        out.append(("fleet_drift.png", "Each drifting GPU: its figure over its model's median at every check (red), "
                                       "and the model's median against its first date (black, dashed).", fig))
    return out


def write_pictures(f, folder: str) -> list[str]:
    import matplotlib.pyplot as plt

    names = []
    for name, _, fig in _figures(f):
        fig.savefig(os.path.join(folder, name), dpi=plot_fleet.DPI)
        plt.close(fig)
        names.append(name)
    return names


RULE_WHY = [
    "A healthy GPU's figures repeat within a fraction of a percent from GPU to GPU and check to check (the committed "
    "H100 checks: 0.04-0.7% robust spread), so the fixed 5% margin decides for most metrics and the spread term only "
    "widens the line of the noisier ones. It is memlab check's sibling rule, max(5%, 4 s), held against the fleet "
    "instead of the node: the node compares a GPU with 3 to 7 others, the fleet with hundreds, and sees what a node "
    "cannot: a node whose GPUs are all slow, a slow pair or all-reduce among the fleet's.",
    "The median and the MAD, not the mean and the standard deviation: a few broken GPUs move neither (the MAD ignores "
    "up to half the values), so a fleet with faults still has an honest line. 1.4826 x MAD is a standard deviation "
    "for normal noise. 8 values from 3 nodes at least: below that, the median is the node's own and memlab check's "
    "sibling rule already says it.",
    "Drift is measured against the model's median at each date, not against the GPU's own first value: a change of "
    "the whole fleet (a driver, firmware, a cooling change) moves every GPU and cancels, and what remains is the GPU's "
    "own. The Theil-Sen slope (the median of the slopes between every two checks) is not moved by one odd check. The "
    "line is 2% (beyond what a healthy GPU moves from week to week by far) or 5 standard errors of the change, "
    "whichever is larger, the noise measured from the model's GPUs' check-to-check differences.",
]


def _by_metric(xs) -> str:
    """'hbm_copy 8.2%, hbm_read 8.0%'; a pair both ways: 'METRIC 30.0% and 29.9%'."""
    metrics = {}
    for y in xs:
        metrics.setdefault(y.metric, []).append(pct(y.worse_by, False))
    return ", ".join(f"{m} {' and '.join(v)}" for m, v in metrics.items())


def page_of(f) -> str:
    from .fleet import headline, signed

    cls = "fail" if f.findings else "warn" if f.problems else "pass"
    dates = f"{f.dates[0]} to {f.dates[-1]}" if len(f.dates) > 1 else (f.dates[0] if f.dates else "-")
    models = Counter(c.model for c in f.latest.values())
    lines = []
    # One sentence a GPU (a pair both ways, a node) and kind: its metrics, how much worse, what its node's check said.
    by = {}
    for x in f.findings:
        who = (x.kind, x.node, frozenset((x.gpu, x.peer)) if x.scope == "pair" else x.gpu)
        by.setdefault(who, []).append(x)
    for (kind, node, _), xs in by.items():
        x = xs[0]
        if kind == "outlier":
            where = (f"{node} GPUs {min(x.gpu, x.peer)} and {max(x.gpu, x.peer)} (the pair"
                     + (", both ways)" if len(xs) > 1 else f", {x.gpu} > {x.peer})") if x.scope == "pair" else x.where)
            said = sorted({y.node_verdict for y in xs})
            lines.append(f"{where}: " + _by_metric(xs)
                         + f" worse than the fleet's median (rule {pct(x.threshold, False)}); memlab check on the node "
                         f"said {' and '.join(said)}.")
        else:
            lines.append(f"{x.where} ({x.identity}): " + _by_metric(xs)
                         + f" worse over {x.days:.0f} days against its model's median, which moved "
                         + " and ".join(dict.fromkeys(signed(y.model_moved) for y in xs)) + ".")
    for p in f.problems:
        lines.append(f"Not judged: {p}")
    body = [f"<p class=\"sub\">memlab fleet &middot; {f.files} files &middot; {len(f.latest)} nodes &middot; {f.gpus} "
            f"GPUs &middot; {len(f.dates)} date{'s' if len(f.dates) != 1 else ''} ({esc(dates)}) &middot; "
            + esc(", ".join(f"{n} nodes of {m}" for m, n in models.most_common())) + "</p>",
            f"<section class=\"verdict {cls}\" id=\"verdict\" data-verdict=\"{cls}\">"
            f"<h1 id=\"verdict-text\">{esc(headline(f))}</h1>" + "".join(f"<p>{esc(x)}</p>" for x in lines[:30])
            + (f"<p>&hellip; and {len(lines) - 30} more below.</p>" if len(lines) > 30 else "")
            + f"<p class=\"sub\">{f.judgements} values of the newest checks held to the outlier rule; {f.histories} GPU "
              f"histories long enough for the drift rule; exit status {f.exit_status}.</p></section>"]
    body.append("<h2 id=\"findings\">Findings</h2>")
    if f.findings:
        rows, attrs = [], []
        for x in f.findings:
            rows.append([x.kind, x.where, x.serial or "not recorded", raw(f"<code>{esc(x.metric)}</code>"),
                         f"{fmt(x.value)} {x.unit}", fmt(x.median), pct(x.worse_by, False),
                         pct(x.threshold, False),
                         raw(esc(x.node_verdict) + (f" <code>{esc(x.fault)}</code>" if x.fault else ""),
                             f"v-{x.node_verdict}"),
                         raw(f"<code>{esc(x.command)}</code> on {esc(x.node)}")])
            attrs.append(f"class=\"finding-row\" data-kind=\"{x.kind}\"")
        body.append(table(["kind", "where", "serial", "metric", "value (newest)", "median", "worse by", "rule",
                           "node's own verdict", "measure it again"], rows, num={4, 5, 6, 7}, row_attrs=attrs,
                          cls="findings"))
    else:
        body.append("<p>No GPU, pair or node is an outlier and no GPU drifts.</p>")
    for name, caption, fig in _figures(f):
        title = "Drift: the histories" if name == "fleet_drift.png" else "Every GPU, pair and node against its group"
        body += [f"<h2>{esc(title)}</h2>", figure(svg_of(fig), caption, name)]
    if f.drifts:
        rows = [[x.where, x.identity, raw(f"<code>{esc(x.metric)}</code>"),
                 " → ".join(fmt(v) for _, v, _ in x.history) + f" {x.unit}",
                 " → ".join(fmt(m) for _, _, m in x.history), pct(x.worse_by, False), signed(x.model_moved)]
                for x in f.drifts]
        body.append(table(["where", "history of", "metric", "its figure, check by check", "the model's median",
                           "worse by", "the model's median moved"], rows, num={5, 6}, cls="drifts"))
    body.append("<h2 id=\"rule\">The rule, and why</h2>")
    body.append(f"<p class=\"note\"><b>The rule.</b> {esc(f.rule.text)}.</p>")
    body += [f"<p>{esc(x)}</p>" for x in RULE_WHY]
    body.append("<h2>The groups</h2>")
    body.append(table(["model", "scope", "metric", "GPUs a node", "link", "values", "nodes", "median", "spread s",
                       "rule", "judged"],
                      [[g.model, g.scope, raw(f"<code>{esc(g.metric)}</code>"), g.gpus or "-", g.link or "-",
                        g.values, g.nodes, f"{fmt(g.median)} {g.unit}", f"{100 * g.spread:.2f}%",
                        pct(g.threshold, False), "yes" if g.judged else f"no: {g.why_not}"] for g in f.groups],
                      num={5, 6, 7, 8, 9}))
    if f.noise:
        body.append("<p>Check-to-check noise (for the drift rule): " + esc("; ".join(
            f"{metric} {100 * v:.2f}%" for (model, metric), v in sorted(f.noise.items()))) + ".</p>")
    body.append("<h2>The nodes</h2>")
    flagged = Counter(x.node for x in f.findings)
    rows, attrs = [], []
    for node, c in sorted(f.latest.items()):
        v = c.verdict
        rows.append([node, c.model, len(c.gpus), c.link, c.measured.strftime("%Y-%m-%d %H:%M"),
                     raw(esc(v), f"v-{v.replace(' ', '_')}"), flagged.get(node, 0) or "",
                     sum(1 for x in f.checks if x.node == node), os.path.basename(c.path)])
        attrs.append(f"class=\"node-row\" data-node=\"{esc(node)}\" data-gpus=\"{len(c.gpus)}\"")
    body.append(table(["node", "model", "GPUs", "link", "newest check", "its own verdict", "fleet findings",
                       "checks read", "newest file"], rows, num={2, 6, 7}, row_attrs=attrs, cls="nodes"))
    if f.problems:
        body.append("<h2>Not judged</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in f.problems) + "</ul>")
    schemas = sorted({c.schema for c in f.checks})
    note = ""
    if any(g.serial is None for c in f.checks for g in c.gpus):
        note = (" Some files record no GPU serial (memlab.check/1 files do not): the history of such a GPU follows its "
                "slot (node and PCI bus id), and a GPU swapped into that slot continues it.")
    body.append(f"<footer>Made by memlab-fleet from {f.files} files ({esc(', '.join(schemas))}).{esc(note)}</footer>")
    return page(f"memlab fleet: {headline(f)}", "\n".join(body))
