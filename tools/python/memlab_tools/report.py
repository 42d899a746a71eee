"""memlab-report FILE... -o report.html: one self-contained HTML page for a person to look at.

  memlab-report check.json -o node.html                  a `memlab check` run (memlab.check/1 or /2)
  memlab-report copy_f16.json transpose_f32.json -o labs.html        lab results (memlab.results/1)
  memlab-report new.json --baseline old.json -o labs.html            ... and memlab-compare's verdicts, new against old

For a check: the node's verdict first, in words; a grid of the GPUs by metric and of the pairs, each cell coloured by
its verdict; each metric against its reference band (memlab-plot-check's picture); the rows that failed or warned with
their fault code, action and the command that measures them again; the machine. For lab results: each lab's ladder
(memlab-plot's picture) and its table with the roofs and the peers, the device, and with --baseline the verdicts of
memlab-compare side by side.

The page has no script and fetches nothing: its pictures are inline SVG drawn by the code that draws the PNGs, its
style inline; it opens from a file:// URL and prints on A4 landscape. A field a file does not record (a GPU serial
in a memlab.check/1 file) is said to be missing, never made up.

Exit codes: 0 written; 2 bad input (a file that cannot be read, is cut short, or is neither a check nor a results
file; check and results files mixed; --baseline with a check file; an -o that cannot be written), one line naming it;
3 matplotlib missing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter, defaultdict

from . import cli
from .checkfile import Check, CheckFileError, Row, load as load_check, reproduce
from .page import esc, figure, fmt, page, raw, svg_inline, table, tag

PROG = "memlab-report"
WORST_FIRST = ("interrupted", "fail", "busy", "warn", "sibling", "no_reference", "skip", "pass")


# ---- a check ------------------------------------------------------------------------------------------------------

def _names(gpus: list[int]) -> str:
    gs = [str(g) for g in sorted(gpus)]
    if len(gs) == 1:
        return f"GPU {gs[0]}"
    return "GPUs " + ", ".join(gs[:-1]) + " and " + gs[-1]


def _owner(r: Row) -> int | None:
    """The GPU a row is charged to: its own, or for a pair the GPU that drives the copy."""
    return r.gpu if r.scope in ("gpu", "pair") else None


def verdict_words(c: Check) -> tuple[str, str, list[str]]:
    """(css class, the headline, the sentences under it): the node's verdict in words, worst news first."""
    flagged = [r for r in c.rows if r.verdict not in ("pass", "skip", "no_reference")]
    by_gpu = defaultdict(list)
    for r in flagged:
        by_gpu[_owner(r)].append(r)
    fail_gpus = sorted(g for g, rs in by_gpu.items() if g is not None and any(r.verdict == "fail" for r in rs))
    warn_gpus = sorted(g for g, rs in by_gpu.items() if g is not None and g not in fail_gpus)
    node_rows = by_gpu.get(None, [])
    v = c.verdict
    lines = []
    busy = [g for g in c.gpus if g.processes]
    if busy:
        for g in busy:
            procs = "; ".join(f"pid {p.get('pid', '?')} {p.get('name', '?')}"
                              + (f" holding {p['used_mib']:.0f} MiB" if isinstance(p.get("used_mib"), (int, float))
                                 else "") + (f", {p['seen']} the check" if p.get("seen") else "")
                              for p in g.processes if isinstance(p, dict))
            lines.append(f"Another process was on GPU {g.ordinal} while it was checked ({procs}): the rows it could "
                         "move say busy; run the check again when the GPU is idle before blaming the hardware.")
    if v == "interrupted":
        head = f"INTERRUPTED: the check stopped before its end; {len(c.rows)} rows were measured and are judged below"
    elif v == "fail":
        parts = []
        if fail_gpus:
            parts.append(f"{_names(fail_gpus)} failed")
        node_fail = sorted({r.metric for r in node_rows if r.verdict == "fail"})
        if node_fail:
            parts.append(f"the node's {', '.join(node_fail)} failed")
        head = "FAIL: " + "; ".join(parts)
    elif v == "busy":
        head = "BUSY: another process was using " + _names([g.ordinal for g in busy]) + "; not judged as hardware"
    elif v == "warn":
        who = _names(warn_gpus) if warn_gpus else "the node"
        head = f"WARN: {who} below the warning line or slower than the node's other GPUs; nothing failed"
    elif v == "not judged":
        head = f"NOT JUDGED: no reference for the {c.model}; measured, not held to a floor"
    else:
        head = f"PASS: every GPU, pair and node metric at or better than the reference's warning line"
    for g in fail_gpus + warn_gpus:
        rs = sorted(by_gpu[g], key=lambda r: (WORST_FIRST.index(r.verdict) if r.verdict in WORST_FIRST else 9,
                                              r.scope, r.peer or 0))
        parts = []
        for verdict in dict.fromkeys(r.verdict for r in rs):
            these = [r for r in rs if r.verdict == verdict]
            items = []
            for metric in dict.fromkeys(r.metric for r in these):
                mr = [r for r in these if r.metric == metric]
                if mr[0].scope == "pair":
                    items.append(f"{metric} into GPU{'s' if len(mr) > 1 else ''} "
                                 + ", ".join(str(r.peer) for r in mr) + f" ({_range(mr)})")
                else:
                    items.append(f"{metric} {mr[0].shown}" + (f" against {fmt(mr[0].reference)}"
                                                              if mr[0].reference is not None else ""))
            parts.append(f"{verdict} on " + "; ".join(items))
        codes = list(dict.fromkeys(r.fault for r in rs if r.fault))
        acts = list(dict.fromkeys(r.action for r in rs if r.action))
        lines.append(f"GPU {g}: " + "; ".join(parts) + "."
                     + (f" Fault codes: {', '.join(codes)} ({', '.join(acts)})." if codes else ""))
    for r in node_rows:
        lines.append(f"The node: {r.verdict} on {r.metric} {r.shown}"
                     + (f" against {fmt(r.reference)}" if r.reference is not None else "")
                     + (f" ({r.note})" if r.note else "") + "."
                     + (f" Fault code: {r.fault} ({r.action})." if r.fault else ""))
    actions = Counter(r.action for r in flagged if r.action)
    if c.action:
        lines.insert(0, f"Action: {c.action} (the most urgent of the flagged rows' actions; their fault codes below).")
    elif actions:
        order = ("replace", "drain", "reset", "busy", "rerun", "monitor")
        first = sorted(actions, key=lambda a: order.index(a) if a in order else len(order))[0]
        lines.insert(0, f"Action: {first}" + (f" (and {', '.join(a for a in actions if a != first)} for other rows)"
                                              if len(actions) > 1 else "") + ", from the failing rows' fault codes below.")
    clean = sorted(g.ordinal for g in c.gpus if g.ordinal not in fail_gpus + warn_gpus)
    if clean and (fail_gpus or warn_gpus or node_rows):
        lines.append(f"{_names(clean)} passed every row of {'its' if len(clean) == 1 else 'their'} own.")
    return v.replace(" ", "_"), head, lines


def _range(rows: list[Row]) -> str:
    vals = sorted(r.value for r in rows if r.value is not None)
    unit = rows[0].unit
    ref = rows[0].reference
    if not vals:
        return "not measured"
    text = f"{fmt(vals[0])} {unit}" if vals[0] == vals[-1] or len(vals) == 1 else f"{fmt(vals[0])}-{fmt(vals[-1])} {unit}"
    return text + (f" against {fmt(ref)}" if ref is not None else "")


def _cell(r: Row | None, unit_in_header: bool = False) -> tuple:
    if r is None:
        return raw("", "v-none")
    tip = [f"{r.metric}: {r.shown}"]
    if r.reference is not None:
        tip.append(f"reference {fmt(r.reference)} {r.unit}, warn {'below' if r.higher_is_better else 'above'} "
                   f"{fmt(r.warn_at)}, fail {'below' if r.higher_is_better else 'above'} {fmt(r.fail_at)}")
    if r.ratio is not None:
        tip.append(f"ratio {r.ratio:.3f}")
    tip.append(r.verdict)
    if r.note:
        tip.append(r.note)
    if r.fault:
        tip.append(f"fault {r.fault}")
    shown = fmt(r.value) if unit_in_header and r.value is not None and not r.judged_by_rule else r.shown
    return raw(f"<span title=\"{esc('; '.join(tip))}\">{esc(shown)}</span>{tag(r.verdict)}", f"v-{r.verdict}")


def _metric_header(metric: str, rows: list[Row]) -> str:
    unit = next((r.unit for r in rows if r.metric == metric), "")
    rule = any(r.judged_by_rule for r in rows if r.metric == metric)
    return raw(f"<code>{esc(metric)}</code>" + ("" if rule else f"<br><span class=\"sub\">{esc(unit)}</span>"))


def _worst(rows) -> str:
    vs = [WORST_FIRST.index(r.verdict) for r in rows if r.verdict in WORST_FIRST]
    return WORST_FIRST[min(vs)] if vs else "pass"


def _rules_cell(rows: list[Row]) -> tuple:
    """NVML's readings of a GPU in one cell (ECC counts, the PCIe link, clock events), coloured by the worst."""
    if not rows:
        return raw("", "v-none")
    worst = _worst(rows)
    by = {r.metric: r for r in rows}
    parts = []
    ecc = [by[m] for m in ("ecc_volatile", "ecc_aggregate") if m in by]
    if ecc:
        parts.append("ECC " + "/".join(r.shown.split(" ")[0] for r in ecc))
    link = [by[m].shown for m in ("pcie_gen", "pcie_width") if m in by]
    if link:
        parts.append(" ".join(link))
    if "clock_events" in by:
        parts.append("clocks " + by["clock_events"].shown)
    parts += [r.shown for r in rows if r.metric not in ("ecc_volatile", "ecc_aggregate", "pcie_gen", "pcie_width",
                                                        "clock_events")]
    tip = "; ".join(f"{r.metric}: {r.shown}, {r.verdict}" + (f" ({r.note})" if r.note else "") for r in rows)
    return raw(f"<span title=\"{esc(tip)}\">{esc(' · '.join(parts))}</span>{tag(worst)}", f"v-{worst}")


def grid(c: Check) -> str:
    """The GPUs by metric, then each pair metric as a from-by-to matrix, then the node's rows."""
    out = []
    gpu_metrics = list(dict.fromkeys(r.metric for r in c.rows if r.scope == "gpu" and not r.judged_by_rule))
    rule_metrics = list(dict.fromkeys(r.metric for r in c.rows if r.scope == "gpu" and r.judged_by_rule))
    at = {(r.metric, r.gpu): r for r in c.rows if r.scope == "gpu"}
    ordinals = [g.ordinal for g in c.gpus]
    rows, attrs = [], []
    for g in ordinals:
        worst = _worst(r for r in c.rows if _owner(r) == g)
        rows.append([raw(f"<b>GPU {g}</b>{tag(worst)}", f"v-{worst}")]
                    + [_cell(at.get((m, g)), True) for m in gpu_metrics]
                    + ([_rules_cell([at[(m, g)] for m in rule_metrics if (m, g) in at])] if rule_metrics else []))
        attrs.append(f"class=\"gpu-row\" data-gpu=\"{g}\" data-verdict=\"{worst}\"")
    header = (["GPU"] + [_metric_header(m, c.rows) for m in gpu_metrics]
              + ([raw("NVML's readings<br><span class=\"sub\">ECC errors, PCIe link, clock events</span>")]
                 if rule_metrics else []))
    out.append("<div class=\"scroll\">" + table(header, rows, cls="grid", row_attrs=attrs) + "</div>")
    for metric in dict.fromkeys(r.metric for r in c.rows if r.scope == "pair"):
        rs = [r for r in c.rows if r.metric == metric and r.scope == "pair"]
        if all(r.gpu is None for r in rs):
            out.append(f"<p><code>{esc(metric)}</code> (each ordered pair): {esc(rs[0].verdict)}"
                       + (f", {esc(rs[0].note)}" if rs[0].note else "") + "</p>")
            continue
        pair = {(r.gpu, r.peer): r for r in rs}
        body = [[raw(f"<b>from GPU {a}</b>")] + [raw("&mdash;", "v-none") if a == b else _cell(pair.get((a, b)))
                                                 for b in ordinals] for a in ordinals]
        out.append(f"<h3><code>{esc(metric)}</code>: each ordered pair, from the row's GPU into the column's "
                   f"({esc(rs[0].unit)})</h3>")
        out.append("<div class=\"scroll\">" + table([""] + [f"into GPU {b}" for b in ordinals], body, cls="grid pairs")
                   + "</div>")
    node = [r for r in c.rows if r.scope == "node"]
    if node:
        out.append("<h3>The node</h3>")
        out.append(table(["metric", "value", "reference", "verdict", "note"],
                         [[raw(f"<code>{esc(r.metric)}</code>"), _cell(r), fmt(r.reference), r.verdict, r.note]
                          for r in node], num={2}))
    return "".join(out)


def failing(c: Check) -> str:
    rs = [r for r in c.rows if r.verdict not in ("pass", "skip", "no_reference")]
    if not rs:
        skipped = [r for r in c.rows if r.verdict in ("skip", "no_reference")]
        return ("<p>No row failed or warned.</p>" + (
            f"<p>{len(skipped)} row(s) not judged: "
            + "; ".join(esc(f"{r.where} {r.metric}: {r.verdict} ({r.note})") for r in skipped[:8])
            + ("&hellip;" if len(skipped) > 8 else "") + "</p>" if skipped else ""))
    rs.sort(key=lambda r: (WORST_FIRST.index(r.verdict) if r.verdict in WORST_FIRST else 9, _owner(r) is None,
                           _owner(r) or 0, r.scope, r.peer or 0))
    v1 = c.version == 1
    rows = []
    for r in rs:
        band = "-" if r.reference is None else (f"{fmt(r.reference)} (warn {'<' if r.higher_is_better else '>'} "
                                                f"{fmt(r.warn_at)}, fail {'<' if r.higher_is_better else '>'} "
                                                f"{fmt(r.fail_at)})")
        fault = r.fault or ("not recorded (memlab.check/1)" if v1 else "-")
        action = r.action or ("not recorded" if v1 else "-")
        why = r.note or r.reason  # the reason repeats the other columns (it is the one line a scheduler gets)
        rows.append([r.where, raw(f"<code>{esc(r.metric)}</code>"), raw(esc(r.shown), f"v-{r.verdict}"), band,
                     "-" if r.ratio is None else f"{r.ratio:.3f}", raw(f"<b>{esc(r.verdict)}</b>", f"v-{r.verdict}"),
                     raw(f"<code>{esc(fault)}</code>" if r.fault else esc(fault)), action, r.points_at or r.level, why,
                     raw(f"<code>{esc(reproduce(r, c))}</code>")])
    return table(["where", "metric", "value", "reference (lines)", "ratio", "verdict", "fault code", "action",
                  "what it points at", "why", "measure it again"], rows, num={4}, cls="failing")


def bands(c: Check) -> str:
    """Each metric against its band: memlab-plot-check's picture as SVG, and the band's numbers."""
    from . import plot_check

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "check.svg")
        plot_check.draw(c.raw, path)
        with open(path, encoding="utf-8") as f:
            svg = svg_inline(f.read())
    out.append(figure(svg, "Each metric with a number: a point per GPU (or pair) coloured by its verdict; black line: "
                           "the reference's median; yellow band: between the warning and the failure line; red: the "
                           "failure zone. Axes are zoomed to the band, not from zero.", "bands"))
    rows = []
    for metric in dict.fromkeys(r.metric for r in c.rows):
        rs = [r for r in c.rows if r.metric == metric]
        vals = sorted((r for r in rs if r.value is not None), key=lambda r: r.value)
        lo, hi = ((vals[0].shown, vals[-1].shown) if rs[0].judged_by_rule else (fmt(vals[0].value), fmt(vals[-1].value))
                  ) if vals else ("-", "-")
        ref = next((r for r in rs if r.reference is not None), None)
        counts = Counter(r.verdict for r in rs)
        rows.append([raw(f"<code>{esc(metric)}</code>"), rs[0].unit,
                     "rule" if rs[0].judged_by_rule else ("higher" if rs[0].higher_is_better else "lower"),
                     fmt(ref.reference) if ref else "-", fmt(ref.warn_at) if ref else "-",
                     fmt(ref.fail_at) if ref else "-", lo, hi, ", ".join(f"{n} {v}" for v, n in counts.most_common()),
                     rs[0].level])
    out.append(table(["metric", "unit", "better", "reference", "warn at", "fail at", "lowest", "highest", "rows",
                      "a failure points at"], rows, num={3, 4, 5, 6, 7}))
    return "".join(out)


def machine(c: Check) -> str:
    def nvml(metric, g):
        r = next((r for r in c.rows if r.metric == metric and r.gpu == g), None)
        return r.shown if r else "-"

    missing = "not recorded (memlab.check/1)" if c.version == 1 else "not known"
    rows = []
    for g in c.gpus:
        procs = ("not recorded" if g.processes is None else
                 "none" if not g.processes else "; ".join(f"pid {p.get('pid', '?')} {p.get('name', '?')}"
                                                         for p in g.processes if isinstance(p, dict)))
        rows.append([g.ordinal, g.name, fmt(g.memory_gib), g.sm_count if g.sm_count is not None else "-", g.bus_id,
                     g.link, g.serial or missing, g.uuid or missing, nvml("sm_clock", g.ordinal),
                     f"{nvml('pcie_gen', g.ordinal)} {nvml('pcie_width', g.ordinal)}", procs])
    drivers = sorted({g.driver_version for g in c.gpus if g.driver_version})
    driver = ", ".join(f"{d // 1000}.{d % 1000 // 10}" for d in drivers) or "-"
    facts = [("host", c.node), ("GPUs", f"{len(c.gpus)} × {c.model}"), ("joined by", c.link or "-"),
             ("CUDA driver API", driver), ("check took", f"{c.seconds:.1f} s"),
             ("memlab", f"{c.memlab_version} ({c.git_sha})"), ("command", c.command),
             ("reference", c.reference_note or "none"), ("file", f"{os.path.basename(c.path)} ({c.schema})")]
    out = ["<table class=\"facts\"><tbody>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts)
           + "</tbody></table>"]
    out.append(table(["GPU", "name", "memory (GiB)", "SMs", "bus id", "link", "serial", "UUID", "SM clock under load",
                      "PCIe trained", "other processes"], rows, num={2, 3}))
    if c.replay:
        out.append(f"<p class=\"note\" id=\"replay\">Judged again by <code>memlab check --replay</code> on "
                   f"{esc(c.created.strftime('%Y-%m-%d'))} from {esc(c.replay.get('path', '?'))} "
                   f"({esc(c.replay.get('schema', '?'))}, written {esc(c.replay.get('created', '?'))} by memlab "
                   f"{esc(c.replay.get('git_sha', '?'))}): the measurement is that file's, the verdicts, fault codes "
                   "and actions today's.</p>")
    if c.missing:
        why = ("a memlab.check/1 file does not record them" if c.version == 1 else
               "NVML did not give them, or the file replays one that did not record them")
        out.append(f"<p class=\"note\" id=\"missing\">Not in this file ({esc(c.schema)}): "
                   f"{esc(', '.join(c.missing))}: {esc(why)}. The page leaves them out rather than guess.</p>")
    return "".join(out)


def check_page(c: Check) -> str:
    cls, head, lines = verdict_words(c)
    when = c.measured.strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<p class=\"sub\">memlab check &middot; node <b>{esc(c.node)}</b> &middot; {len(c.gpus)} &times; "
            f"{esc(c.model)} &middot; {esc(c.link)} &middot; {esc(when)}</p>",
            f"<section class=\"verdict {esc(cls)}\" id=\"verdict\" data-verdict=\"{esc(cls)}\">"
            f"<h1 id=\"verdict-text\">{esc(head)}</h1>"
            + "".join(f"<p>{esc(x)}</p>" for x in lines)
            + f"<p class=\"sub\">{esc(', '.join(f'{n} {v}' for v, n in Counter(r.verdict for r in c.rows).most_common()))}"
            f" of {len(c.rows)} rows; exit status {esc(c.exit_status)}.</p></section>",
            "<h2>Every GPU and pair, by metric</h2>",
            "<p class=\"sub\">A cell per measurement, coloured by its verdict (green pass, yellow warn, red fail, "
            "purple slower than the node's other GPUs, grey not judged); hover a cell for its reference and ratio.</p>",
            grid(c), "<h2 id=\"failing-rows\">Rows that failed or warned</h2>", failing(c),
            "<h2>Each metric against its reference band</h2>", bands(c), "<h2>The machine</h2>", machine(c),
            f"<footer>Made by memlab-report from {esc(os.path.basename(c.path))}. The rule of the bands: "
            f"{esc((c.reference or {}).get('rule', 'no reference'))}.</footer>"]
    return page(f"memlab check {c.node}: {cls.upper()}", "\n".join(body))


# ---- lab results ---------------------------------------------------------------------------------------------------

def _svg_plotter():
    """memlab-plot's Plotter, saving each picture as SVG in a scratch folder and keeping the records it drew."""
    from . import plot

    class SvgPlotter(plot.Plotter):
        def save(self, fig, name, kind, lab, series, sentence, rows, **facts):
            svg_name = name[:-4] + ".svg" if name.endswith(".png") else name + ".svg"
            super().save(fig, svg_name, kind, lab, series, sentence, rows, **facts)
            with open(os.path.join(self.out, svg_name), encoding="utf-8") as f:
                self.made[-1]["svg"] = svg_inline(f.read())
            self.made[-1]["records"] = list(rows)

    return SvgPlotter


def _ladder_table(made: dict) -> str:
    from . import plot

    recs = made["records"]
    how = made.get("measure", "gbps")
    roofs = plot.roof_lines(recs, how)
    top = roofs[0][0] if roofs else 0
    unit = plot.UNITS[how]
    rank = plot.ladder_rank(recs)
    points = made.get("points") or [{}]
    rows = []
    for pt in points:
        here = sorted((r for r in recs if plot.matches(r, pt)), key=lambda r: (rank(r), r.variant))
        for r in here:
            v = plot.value(r, how)
            kind = ("memlab's library" if plot.is_memlab_library(r.data) else "peer" if plot.is_peer(r)
                    else "rung")
            rows.append([plot.fmt_point(pt.items(), made["lab"]), raw(f"<code>{esc(r.variant)}</code>"), kind,
                         fmt(v), f"{100 * v / top:.0f}%" if top and how != "time" and not plot.is_tf32(r) else "-",
                         fmt(r.data["cold"]["median_ms"] * 1e3), "yes" if r.data.get("verified", True) else "NO"])
    roof_text = "; ".join(label for _, label, _ in roofs) or "none drawn (a latency lab: time per case)"
    return (f"<p><b>Roofs:</b> {esc(roof_text)}</p>"
            + table(["point", "variant", "kind", unit, "% of roof" if roofs else "", "cold median (µs)", "verified"],
                    rows, num={3, 4, 5}, cls="ladder"))


def _device(run: dict) -> list:
    d = run.get("device") or {}
    gib = d.get("global_mem_bytes")
    return [d.get("name", "?"), d.get("cc", "?"), d.get("sm_count", "-"), fmt(gib / 2**30) if gib else "-",
            fmt(d.get("peak_gbps")), fmt(d.get("measured_peak_gbps")), run.get("memlab_version", "-"),
            run.get("git_sha", "-"), run.get("created", "-")]


def compare_section(a_paths: list[str], b_paths: list[str], threshold: float = 0.05) -> str:
    from .compare import FLOOR_MS, compare
    from .results import records

    o = compare(records(a_paths), records(b_paths), threshold=threshold)
    rows = []
    for v in sorted(o.verdicts, key=lambda v: (not v.fails, v.verdict != "SLOWER", v.key[0], v.key[1])):
        cls = "v-fail" if v.fails else "v-warn" if v.verdict == "SLOWER" else "v-pass" if v.verdict == "FASTER" else ""
        rows.append([v.key[0], raw(f"<code>{esc(v.key[1])}</code>"), " ".join(f"{k}={x}" for k, x in v.key[2]),
                     fmt(v.a_ms * 1e3), fmt(v.b_ms * 1e3), f"{v.ratio:.3f}", f"{100 * v.noise:.1f}%",
                     raw(esc(v.verdict + (" (beyond the threshold)" if v.fails else "")), cls)])
    counts = Counter(v.verdict for v in o.verdicts)
    fails = sum(v.fails for v in o.verdicts)
    head = (f"<p id=\"compare-summary\">{len(o.verdicts)} cases in both runs: {counts['SAME']} same, "
            f"{counts['FASTER']} faster, {counts['SLOWER']} slower ({fails} beyond the {100 * threshold:g}% "
            f"threshold). B is {esc(', '.join(os.path.basename(p) for p in b_paths))}, A (the baseline) "
            f"{esc(', '.join(os.path.basename(p) for p in a_paths))}. A difference counts only beyond the noise: both "
            f"runs' interquartile ranges, at least {FLOOR_MS * 1e3:g} µs (memlab-compare's rule).</p>")
    extra = "".join(f"<p>{len(keys)} case(s) only in {side}.</p>" for side, keys in (("A", o.only_a), ("B", o.only_b))
                    if keys)
    return head + table(["lab", "variant", "params", "A cold (µs)", "B cold (µs)", "B/A", "noise", "verdict"], rows,
                        num={3, 4, 5, 6}, cls="compare") + extra


def labs_page(paths: list[str], baseline: list[str] | None = None) -> str:
    from .results import records

    recs = records(paths)
    Plotter = _svg_plotter()
    from . import plot

    with tempfile.TemporaryDirectory() as tmp:
        p = Plotter(recs, tmp)
        plot.ladder_plots(p)
    runs = {}
    for r in recs:
        runs.setdefault(r.source, r.run)
    devices = sorted({(r.get("device") or {}).get("name", "?") for r in runs.values()})
    labs = list(dict.fromkeys(m["lab"] for m in p.made))
    head = (f"<p class=\"sub\">memlab lab results &middot; {esc(', '.join(devices))} &middot; "
            f"{len(paths)} file{'s' if len(paths) > 1 else ''}</p>"
            f"<section class=\"verdict pass\" id=\"verdict\" data-verdict=\"results\"><h1 id=\"verdict-text\">"
            f"{esc(', '.join(labs) or 'no lab')}: {len(p.made)} ladder{'s' if len(p.made) != 1 else ''} on "
            f"{esc(' and '.join(devices))}</h1>"
            "<p>Each lab's rungs (memlab's kernels, in ladder order) and peers (libraries, hatched) at its headline "
            "points, under the roof the lab is bound by; GB/s are the bytes the job must move (reads + writes) over "
            "the cold median, L2 flushed before every sample.</p></section>")
    body = [head]
    if baseline:
        body += ["<h2 id=\"compare\">Against the baseline: memlab-compare's verdicts</h2>",
                 compare_section(baseline, paths)]
    for m in p.made:
        body += [f"<h2 data-lab=\"{esc(m['lab'])}\">{esc(m['file'][:-4].replace('_', ' '))}</h2>",
                 figure(m["svg"], m["sentence"], m["file"]), _ladder_table(m)]
    if p.notes:
        body.append("<h2>Not drawn</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in p.notes) + "</ul>")
    body.append("<h2>The device and the runs</h2>")
    body.append(table(["file", "device", "cc", "SMs", "memory (GiB)", "DRAM peak (GB/s)",
                       "measured ceiling (GB/s)", "memlab", "commit", "created"],
                      [[os.path.basename(src)] + _device(run) for src, run in runs.items()], num={3, 4, 5, 6}))
    body.append("<footer>Made by memlab-report. Commands: "
                + "; ".join(f"<code>{esc(run.get('command', '?'))}</code>" for run in runs.values()) + "</footer>")
    return page(f"memlab results: {', '.join(labs)}", "\n".join(body))


# ---- the command ---------------------------------------------------------------------------------------------------

def kind_of(path: str) -> str:
    """'check' or 'results' from the file's schema; CheckFileError (one line) for anything else."""
    from .checkfile import _text, parse

    doc = parse(_text(path), path)
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if isinstance(schema, str) and schema.startswith("memlab.check/"):
        return "check"
    if schema == "memlab.results/1":
        return "results"
    found = f"schema {schema!r}" if isinstance(doc, dict) and "schema" in doc else "no 'schema'"
    raise CheckFileError(f"{path}: neither a memlab check file nor a memlab results file ({found})")


def parser() -> cli.Parser:
    ap = cli.Parser(prog=PROG, description="One self-contained HTML page of a memlab check run or of lab results.",
                    epilog="Exit codes: 0 written; 2 bad input, one line naming it; 3 matplotlib missing.")
    ap.add_argument("files", nargs="+", help="one memlab.check file, or memlab.results/1 files")
    ap.add_argument("-o", "--out", required=True, help="the HTML page to write")
    ap.add_argument("--baseline", nargs="+", metavar="FILE",
                    help="results files to compare the others against (memlab-compare's verdicts)")
    return ap


def _main(argv=None) -> int:
    a = parser().parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return cli.fail(PROG, "matplotlib is not installed (pip install ./tools/python)", cli.MISSING_DEPENDENCY)
    from .results import ResultsError

    try:
        kinds = [kind_of(p) for p in a.files]
        if "check" in kinds:
            if len(a.files) > 1:
                return cli.fail(PROG, f"{a.files[kinds.index('check')]}: one check file a page (memlab-fleet reads many)")
            if a.baseline:
                return cli.fail(PROG, "--baseline: compares lab results, not a check file")
            text = check_page(load_check(a.files[0]))
        else:
            for b in a.baseline or []:
                if kind_of(b) != "results":
                    return cli.fail(PROG, f"--baseline: {b}: not a memlab results file")
            text = labs_page(a.files, a.baseline)
    except (CheckFileError, ResultsError) as e:
        return cli.fail(PROG, str(e))
    try:
        cli.write_text(a.out, text)
    except OSError as e:
        return cli.fail(PROG, f"-o {a.out}: cannot write there ({e.strerror or e})")
    print(f"{PROG}: wrote {a.out} ({len(text) // 1024} KiB)", file=sys.stderr)
    return cli.OK


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
