"""memlab-plot RESULTS.json... -o DIR: pictures of memlab runs and peers, merged.

  ladder_<lab>_<dtype>.png      every lab: each rung (memlab's, in ladder order) and each peer (hatched) as a
                                bar with its value, at the lab's headline points (those most variants
                                measured; the largest size), axis from zero, the lab's roof marked
  size_<lab>_<dtype>_<...>.png  labs measured over sizes: GB/s against size (axis from zero) above the time
                                per case (log-log, so the launch-bound sizes are readable); rungs and peers
                                in separate panels when they are more than 8 (1D and 3D apart)
  sweep_<lab>_<axis>_<...>.png  one axis of a lab swept at a fixed point (stride, offsets, table bytes,
                                stages); where the lab models the bytes the hardware moves (smem's
                                wavefronts, the sector models), the model and the hardware GB/s beside it
  roofline.png                  results that count flops under the roofs they are bound by (TF32 as well
                                when a TF32 result is drawn); each bandwidth lab's best rung and best peer
                                under its own roof
  times_<lab>_<dtype>.md        time per size per implementation (the reference study's table)
  index.md                      every picture with one sentence, and what was not drawn, with why

Every number comes from the files: GB/s from the declared bytes over the cold median. A lab the plotter
does not know (a new one) gets the same pictures from its records: its ladder in GB/s, GFLOP/s where
it counts flops, or its time per case where it counts neither.

Style: each variant keeps its colour and marker in every picture (its place in the lab's table, style_order;
variants not in it get one from a hash of their name); memlab's rungs solid with filled markers, peers dashed with open ones;
roofs thin black lines named on the plot, never in the series' colours.

Files from several runs may hold the same case: the last file given that holds it is drawn, and
index.md says how many cases that concerned. Runs made with --profile (times under a profiler) and
results a run skipped or failed are not drawn; index.md lists them with the reason, and so does
stderr, once per reason.

A mixed set of files (`memlab-plot docs/results/h100/*/*.json`, which holds check runs and check references
beside the results) is drawn whole: every memlab results file given is drawn, and each other file (not a
memlab.results/1 file, not JSON, unreadable) is skipped with one line on stderr naming it and why; index.md
lists them too. Exit codes: 0 something was drawn (files may have been skipped); 2 nothing could be drawn
(every file skipped, or no result in them that a picture can show), or bad input (a flag, an --out folder
that cannot be written); 3 matplotlib or numpy missing.
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys
import zlib
from collections import defaultdict

from . import cli, table
from .results import Record, ResultsError, is_memlab_library, records
from .results import is_peer as _is_peer_record

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    MISSING = ""
except ImportError as e:  # memlab-plot says so and exits 3; the rest of the package works without it
    MISSING = e.name or "matplotlib"

SIZE = "n"
DPI = 110
MAX_SERIES = 8   # per panel: more are split into panels (1D / 3D, rungs / peers)
MAX_POINTS = 6   # ladder panels per figure


# ---- the style map ---------------------------------------------------------------------------------------------

# Rungs: filled markers, solid lines. Peers: open markers, dashed lines, their own darker colours. No grey or
# black: those are the roofs'.
RUNG_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"]
PEER_COLOURS = ["#000080", "#008b8b", "#daa520", "#c71585", "#556b2f", "#6a5acd", "#800000", "#ff4500"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p"]

@functools.lru_cache(maxsize=None)
def style_order(lab: str) -> tuple[list[str], list[str]]:
    """The lab's rungs in ladder order and its peers (the lab's own, then memlab-peers', then memlab's library from
    Python), from the lab's table: a variant's place here is its colour and marker, the same in every picture. A
    stencil's 1d_/3d_ prefix is dropped first, so a technique keeps its colour in both."""
    from .peers import PEERS

    def families(names):
        return list(dict.fromkeys(_family(n)[1] for n in names))

    return families(table.rungs(lab)), families(table.peers(lab) + [p.variant for p in PEERS if p.lab == lab])


def is_peer(rec: Record) -> bool:
    return _is_peer_record(rec.data)


def _family(variant: str) -> tuple[str, str]:
    """('1d', 'ldg') for a stencil rung named 1d_<technique>; ('', name) for a variant without a dimension prefix."""
    m = re.match(r"^(\d+d)_(.+)$", variant)
    return (m.group(1), m.group(2)) if m else ("", variant)


def style(lab: str, variant: str, peer: bool) -> dict:
    """The variant's colour, marker and line: from its place in the lab's table (style_order), else from its name's
    hash."""
    key = _family(table.variant_now(lab, variant))[1]
    rungs, peers = style_order(lab)
    order = peers if peer else rungs
    i = order.index(key) if key in order else zlib.crc32(f"{lab}/{key}".encode())
    colours = PEER_COLOURS if peer else RUNG_COLOURS
    return {"color": colours[i % len(colours)], "marker": MARKERS[i % len(MARKERS)], "ls": "--" if peer else "-",
            "mfc": "white" if peer else colours[i % len(colours)]}


def panel_styles(series: list[tuple[str, str, bool]]) -> dict:
    """{series: style} for one panel's (lab, variant, peer) series, no two alike: a colour already taken (a
    hashed name, or two labs' rungs on one roofline) moves to the next free one of its palette."""
    out, taken = {}, set()
    for s in series:
        st = dict(style(*s))
        colours = PEER_COLOURS if s[2] else RUNG_COLOURS
        if st["color"] in taken:
            free = [c for c in colours + (RUNG_COLOURS if s[2] else PEER_COLOURS) if c not in taken]
            if free:
                st["color"] = free[0]
                st["mfc"] = "white" if s[2] else free[0]
        taken.add(st["color"])
        out[s] = st
    return out


# ---- what a lab is measured by ------------------------------------------------------------------------------------

def lab_roof(rows: list[Record]) -> str:
    """The roof the lab declares (its file's header, else its table; "dram" for files that predate roofs)."""
    r = rows[0]
    return (r.run.get("labs", {}).get(r.lab, {}).get("roof") or table.roof_of(r.lab)
            or (r.data.get("roof") or {}).get("name") or ("dram" if r.data["bytes"] > 0 else ""))


def roof_name(rec: Record) -> str:
    """The roof a record is bound by: its rung's own where the lab's table (or memlab-peers' record of a peer) names
    one -- files written before the TF32 roof existed hold "fp32" for cuBLAS's TF32 GEMM --, else the record's
    (a lab spanning levels gives each case its own), else its lab's."""
    from .peers import PEERS

    declared = table.variant(rec.lab, rec.variant) or {}
    peer = next((p for p in PEERS if p.lab == rec.lab and p.variant == rec.variant), None)
    return (declared.get("roof") or (peer.roof if peer else None) or (rec.data.get("roof") or {}).get("name")
            or table.roof_of(rec.lab))


def is_tf32(rec: Record) -> bool:
    """A result on TF32 tensor cores (cuBLAS or PyTorch with TF32 allowed): under the TF32 roof, not FP32's."""
    return roof_name(rec) == "tf32"


def measure(rows: list[Record]) -> str:
    """'gflops' for a lab under the FP32 roof, 'gbps' for one that counts bytes, else 'time' (a latency lab:
    its time per case, lower is better)."""
    if lab_roof(rows) == "fp32" and any(r.data.get("flops", 0) > 0 for r in rows):
        return "gflops"
    return "gbps" if any(r.data["bytes"] > 0 for r in rows) else "time"


def value(rec: Record, how: str) -> float:
    """The rate a picture shows, as the harness derived it (GB/s, GFLOP/s from the cold median), or the time per
    case in µs."""
    if how == "gflops":
        return rec.data.get("gflops", 0.0)
    if how == "gbps":
        return rec.data["gbps"]
    return rec.data["cold"]["median_ms"] * 1e3


UNITS = {"gflops": table.unit("gflops"), "gbps": table.unit("gbps"), "time": "µs"}
AXIS = {"gflops": f"{UNITS['gflops']} (flops / cold median)", "gbps": f"{UNITS['gbps']} (bytes read + written / cold median)",
        "time": "µs per case (cold median; lower is better)"}


def _median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def roof_lines(rows: list[Record], how: str) -> list[tuple[float, str, str]]:
    """(value, label, line style) of the roofs that bound `rows` in the unit of `how`: for a DRAM lab the
    theoretical peak and the measured cudaMemcpy ceiling; for another, its roof from the SM clock measured
    during each case (the median over the rows, with their range when it varies)."""
    if how == "time" or not rows:
        return []
    roof = "fp32" if how == "gflops" else lab_roof(rows)
    if roof == "dram":
        devices = {r.source: r.run.get("device", {}) for r in rows}.values()
        peak = _median([d["peak_gbps"] for d in devices if d.get("peak_gbps")])
        ceiling = _median([d["measured_peak_gbps"] for d in devices if d.get("measured_peak_gbps")])
        return [(v, label, ls) for v, label, ls in (
            (peak, f"DRAM theoretical {peak:.0f} GB/s", "-"),
            (ceiling, f"measured ceiling {ceiling:.0f} GB/s (cudaMemcpy)", ":")) if v]
    values = [(r.data.get("roof") or {}).get("value") for r in rows if not is_tf32(r)]
    values = sorted(v for v in values if v)
    if not values:
        return []
    unit = UNITS[how]
    mid = _median(values)
    spread = f", {values[0]:.0f}-{values[-1]:.0f} over the cases" if values[-1] > 1.01 * values[0] else ""
    clocked = "per_sm_clock" in (table.roof(roof) or {})  # counted per SM and clock: the clock measured in the run
    how_found = "; ".join(x for x in ("SM clock of the run" if clocked else "", spread.lstrip(", ")) if x)
    return [(mid, f"{table.roof_label(roof)} roof {mid:.0f} {unit}" + (f" ({how_found})" if how_found else ""), "-")]


def tf32_roof(rows: list[Record]) -> tuple[float, str]:
    """(GFLOP/s, label) of the TF32 tensor-core roof of the TF32 results: the value their records carry, else (files
    that predate the roof) the table's FLOP per SM per clock for the device x SMs x the SM clock of the results;
    (0, why not) where neither is known."""
    tf = [r for r in rows if is_tf32(r)]
    if not tf:
        return 0.0, ""
    carried = [(r.data.get("roof") or {}).get("value") for r in tf if (r.data.get("roof") or {}).get("name") == "tf32"]
    carried = [v for v in carried if v]
    if carried:
        v = _median(carried)
        return v, f"TF32 roof {v:.0f} GFLOP/s (tensor cores, at the SM clock of the run)"
    device = tf[0].run.get("device", {})
    per = (table.roof("tf32") or {}).get("per_sm_clock", {}).get(str(device.get("cc", "")))
    clocks = [r.data.get("sm_clock_mhz") or 0 for r in tf]
    clock_mhz = _median([c for c in clocks if c]) or device.get("sm_default_clock_khz", 0) / 1e3
    if not per or not clock_mhz or not device.get("sm_count"):
        return 0.0, f"no TF32 roof: its FLOP per clock is not known here for cc {device.get('cc', '?')}"
    v = device["sm_count"] * per * clock_mhz / 1e3
    return v, f"TF32 roof {v:.0f} GFLOP/s ({device['sm_count']} SMs x {per:.0f} FLOP/clock x {clock_mhz:.0f} MHz)"


# ---- labels ------------------------------------------------------------------------------------------------------

def fmt_value(v: float) -> str:
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def fmt_number(v) -> str:
    """A param's number as a title shows it: 2^k for a power of two of six digits or more (2^28 elements), else
    the number as the command line writes it (4096, 16384)."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1 << 17 and v & (v - 1) == 0:
        return f"2^{v.bit_length() - 1}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def fmt_bytes(v: int) -> str:
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if v >= 1 << shift and v % (1 << shift) == 0:
            return f"{v >> shift} {unit}"
    return f"{v} B"


def value_meaning(lab: str, param: str, v) -> str:
    """What the lab's axis says the value `v` of `param` stands for ("0 = one per tile of the whole matrix",
    "0 = the same as n (the size)"): the words after "v = " up to the next ';' or the next ", N =", without a
    closing parenthesis ("the same as n"); "" where the meaning gives the value none."""
    if not _is_number(v):
        return ""
    meaning = (table.axis_of_param(lab, param) or {}).get("meaning", "")
    m = re.search(rf"(?:^|[;:,(] ?){re.escape(f'{v:g}')} = (.+?)(?=;|, \d+ =|$)", meaning)
    return re.sub(r" [(][^)]*[)]$", "", m.group(1).strip()) if m else ""


def _per_one(unit: str) -> str:
    """The unit of a count of one: "1 CTA", "1 access", "1 tile row" (a unit of alternatives stays as it is)."""
    if " or " in unit or not unit.endswith("s"):
        return unit
    return unit[:-2] if unit.endswith("sses") else unit[:-1]


def _shown_name(lab: str, param: str) -> str:
    """A param's name as a title shows it: today's (an axis renamed since shows its new name), words apart
    ("src offset"), a bytes axis without its "_bytes" ("table 8 MiB")."""
    name = table.param_now(lab, param) if lab else param
    if name.endswith("_bytes") and table.param_unit(lab, param) == "bytes":
        name = name[: -len("_bytes")]
    return name.replace("_", " ")


def point_parts(point, lab: str = "") -> list[tuple[tuple, str]]:
    """A point of a lab (its params) as a reader reads it, one part per thing it says: (the params the part
    covers, its text). From the lab's table (memlab list --format json): a shape's extents together ("tile 128 x
    256"); a value the axis gives a meaning shown as that meaning ("CTAs: one per tile of the whole matrix"); one
    that means "the same as" another param joined to it ("n = m = k = 4096"); a count with its unit ("1 CTA",
    "src offset 16 B", "lane stride 4 accesses"); the size as n=2^28. Without `lab` (or for a lab the table does
    not know): k=v."""
    pt = dict(point)
    if not lab or table.lab(lab) is None:
        return [((k,), f"{k}=n/a" if v is None else f"{k}={fmt_number(v)}") for k, v in pt.items()]
    same = {}  # param -> the param its value stands for ("0 = the same as n")
    for k, v in pt.items():
        m = re.fullmatch(r"the same as (\w+)", value_meaning(lab, k, v))
        if m and m.group(1) in pt and m.group(1) != k:
            same[k] = m.group(1)
    parts, done = [], set()
    for k, v in pt.items():
        if k in done:
            continue
        a = table.axis_of_param(lab, k)
        unit = a["unit"] if a else ""
        target = same.get(k, k)
        group = [x for x in pt if x == target or same.get(x) == target]
        if len(group) > 1:
            done.update(group)
            parts.append((tuple(group), " = ".join(_shown_name(lab, x) for x in group) + " = "
                          + fmt_number(pt[target])))
            continue
        extents = [e for e in (a or {}).get("extents", []) if e]
        if len(extents) > 1 and all(e in pt and _is_number(pt[e]) for e in extents):
            done.update(extents)
            parts.append((tuple(extents), f"{_shown_name(lab, a['name'])} "
                          + " \u00d7 ".join(fmt_number(pt[e]) for e in extents)))
            continue
        done.add(k)
        name = _shown_name(lab, k)
        said = value_meaning(lab, k, v)
        if v is None:
            text = f"{name} n/a"  # the rung does not read this axis
        elif k == "dtype":
            text = str(v)
        elif said:
            text = f"{unit if unit.lower() == name.lower() else name}: {said}"
        elif not _is_number(v):
            text = f"{name} {v}"
        elif unit == "bytes":
            text = f"{name} {fmt_bytes(int(v))}"
        elif unit and unit.lower() == name.lower():
            text = f"{fmt_number(v)} {_per_one(unit) if v == 1 else unit}"  # 1 CTA, 4 stages
        elif unit and len(name) > 2 and not set(name.lower().split()) & set(unit.lower().split()):
            text = f"{name} {fmt_number(v)} {_per_one(unit) if v == 1 else unit}"  # not "m 1024 elements"
        else:
            text = f"{name}={fmt_number(v)}"
        parts.append(((k,), text))
    return parts


def _axis_value(lab: str, param: str, v) -> str:
    """A value of a swept axis in its unit's words: 8 MiB for bytes, else the number."""
    return fmt_bytes(int(v)) if _is_number(v) and table.param_unit(lab, param) == "bytes" else fmt_number(v)


def fmt_param(k: str, v, lab: str = "") -> str:
    """One param as a title shows it (point_parts of it alone)."""
    return point_parts([(k, v)], lab)[0][1]


def fmt_point(pt, lab: str = "") -> str:
    """A point as a title shows it: its parts (point_parts), comma-separated."""
    return ", ".join(text for _, text in point_parts(pt, lab))


def split_points(points, lab: str) -> tuple[str, list[str]]:
    """(what every point says alike, what each says of its own): the parts shared by all points go once into the
    figure's title, the rest into each panel's."""
    parts = [point_parts(pt, lab) for pt in points]
    shared = [p for p in parts[0] if all(p in q for q in parts)] if parts else []
    return ", ".join(t for _, t in shared), [", ".join(t for c, t in q if (c, t) not in shared) for q in parts]


def label(rec: Record, fixed) -> str:
    """The variant, the params of its own that the figure does not fix (a Triton block), and whose it is."""
    extra = [f"{k}={v}" for k, v in rec.params.items() if k not in fixed and k not in ("dtype", SIZE)]
    name = table.variant_now(rec.lab, rec.variant) + (f" ({', '.join(extra)})" if extra else "")
    if is_memlab_library(rec.data):
        return f"{name} [memlab's library]"
    if rec.data.get("library"):
        return f"{name} [{(rec.data['library'].split() or ['peer'])[0]}]"
    return name + (" [peer]" if is_peer(rec) else "")


def renamed(rows: list[Record]) -> str:
    """What a picture of old files must say: the rungs and axes it shows by today's name that the files call by
    an earlier one ("<today's name> (<earlier name> in the file)"); "" when none."""
    pairs = {(table.variant_now(r.lab, r.variant), r.variant) for r in rows}
    pairs |= {(table.param_now(r.lab, k), k) for r in rows for k in r.params}
    moved = sorted(f"{now} ({was} in the file)" for now, was in pairs if now != was)
    return ("today's names: " + ", ".join(moved)) if moved else ""


def hatched(rec: Record) -> bool:
    """Peers are hatched; memlab's own library, timed as a peer from Python, is memlab's: solid."""
    return is_peer(rec) and not is_memlab_library(rec.data)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")


def device_line(rows: list[Record]) -> str:
    names = sorted({f"{r.run.get('device', {}).get('name', '?')}, cc {r.run.get('device', {}).get('cc', '?')}"
                    for r in rows})
    return names[0] if len(names) == 1 else " and ".join(names) + " (mixed devices)"


def _sortable(v):
    """A sort key for param values of any type (a param one record lacks is None)."""
    return (2, 0, "") if v is None else (1, 0, v) if isinstance(v, str) else (0, v, "")


def _point_key(pt):
    return tuple((k, _sortable(v)) for k, v in pt)


# ---- the records a picture draws --------------------------------------------------------------------------------

class Plotter:
    """The records of one memlab-plot call, the pictures made from them and what was not drawn."""

    def __init__(self, recs: list[Record], out: str, percent_of: str = ""):
        self.out = out
        self.percent_of = percent_of  # the ladder's (%): of this variant at each point, where it was measured
        self.made: list[dict] = []
        self.notes: list[str] = []        # what was not drawn, one line per reason
        self.drawn: set[int] = set()      # id() of every record some picture shows
        profiled = sorted({r.source for r in recs if str((r.run.get("options") or {}).get("--profile", "")).lower()
                           == "true"})
        for src in profiled:
            self.notes.append(f"{src}: a --profile run (each case timed once under the profiler, not as memlab "
                              "times it): not drawn")
        latest: dict[tuple, Record] = {}
        repeated = 0
        skipped = defaultdict(list)
        for r in recs:
            if r.source in profiled:
                continue
            if not r.ok:
                skipped[(r.lab, r.variant, r.data.get("status", "ok"))].append(r.why_not())
                continue
            if "gbps" not in r.data:  # the rates are the harness's, never recomputed here
                skipped[(r.lab, r.variant, "no rates")].append("no 'gbps': not a record as memlab derives it")
                continue
            device = r.run.get("device", {}).get("name", "")
            key = r.key() + (device,)
            if key in latest:
                repeated += 1
            latest[key] = r  # the last file given wins; the first one's place keeps the ladder's order
        for (lab, variant, _), whys in sorted(skipped.items()):
            others = len(set(whys)) - 1
            self.notes.append(f"{lab} {variant}: {len(whys)} case(s) not measured in their run ({whys[0]}"
                              + (f"; and {others} other reason(s) like it" if others else "") + ")")
        if repeated:
            self.notes.append(f"{repeated} case(s) were in more than one file: each is drawn from the last file "
                              "given that holds it")
        self.recs = list(latest.values())

    def save(self, fig, name: str, kind: str, lab: str, series, sentence: str, rows: list[Record], **facts):
        """Writes the figure and lists it: its series, its panels' series (`panels`) and other `facts`."""
        fig.savefig(os.path.join(self.out, name), dpi=DPI)
        plt.close(fig)
        self.drawn.update(id(r) for r in rows)
        self.made.append({"file": name, "kind": kind, "lab": lab, "series": list(series), "sentence": sentence,
                          **facts})

    def by_lab_dtype(self):
        groups = defaultdict(list)
        for r in self.recs:
            groups[(r.lab, str(r.params.get("dtype", "")))].append(r)
        return sorted(groups.items())


def own_rows(rows: list[Record]) -> list[Record]:
    """memlab's own rows (not a framework peer's), which define a lab's points; where none are (a memlab-peers
    file alone), memlab's library's rows in it (memlab_copy_: the lab's params, no Triton block); else all rows."""
    return ([r for r in rows if not r.data.get("library")] or [r for r in rows if is_memlab_library(r.data)]
            or rows)


def lab_keys(rows: list[Record], without=("dtype",)) -> list[str]:
    """The lab's own params (memlab's rows define them; a peer's extras, a Triton block, are not)."""
    keys = []
    for r in own_rows(rows):
        keys += [k for k in r.params if k not in keys and k not in without]
    return keys


def matches(rec: Record, point: dict) -> bool:
    """A record belongs to a point when it agrees on every param it has: a peer without one of the lab's
    params (a transpose peer has no band) joins each point that agrees on the rest."""
    return all(rec.params[k] == v for k, v in point.items() if k in rec.params)


def ladder_rank(rows: list[Record]):
    """A sort key for records in the lab's order: rungs, then peers; 1D before 3D; each in the lab's table's order
    (style_order), then, for a variant it does not know, the order the runs wrote them."""
    first = {}
    for r in rows:
        first.setdefault((is_peer(r), r.variant), len(first))

    def rank(r):
        dim, key = _family(table.variant_now(r.lab, r.variant))
        known = style_order(r.lab)[1 if is_peer(r) else 0]
        return (is_peer(r), dim, known.index(key) if key in known else len(known),
                first.get((is_peer(r), r.variant), len(first)))
    return rank


def has_size_axis(rows: list[Record]) -> bool:
    sizes = {r.params[SIZE] for r in own_rows(rows) if isinstance(r.params.get(SIZE), (int, float))}
    return len(sizes) >= 3 and min(sizes) > 0 and max(sizes) >= 4 * min(sizes)


# ---- ladder: every lab ---------------------------------------------------------------------------------------

def swept_axes(rows: list[Record]) -> set:
    """The params (not the size) that take three values or more while the others stay fixed: a sweep figure
    draws each of them."""
    out = set()
    for k in {k for r in rows for k, v in r.params.items() if k not in ("dtype", SIZE) and _is_number(v)}:
        groups = defaultdict(set)
        for r in rows:
            if k in r.params:
                groups[tuple(sorted(((kk, str(v)) for kk, v in r.params.items() if kk != k)))].add(r.params[k])
        if any(len(v) >= 3 for v in groups.values()):
            out.add(k)
    return out


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ladder_points(rows: list[Record], keys: list[str]) -> tuple[list[tuple], int]:
    """The points a lab's ladder shows, and how many points there were: per configuration of its params
    other than the size, the largest size most variants measured (every size, when the lab was not swept over
    sizes); then those configurations holding at least half the most variants; at most MAX_POINTS (the
    extremes of each axis first)."""
    sized = has_size_axis(rows) and SIZE in keys
    own = own_rows(rows)
    points = sorted({tuple((k, r.params.get(k)) for k in keys) for r in own}, key=_point_key)
    count = {pt: len({(r.variant, label(r, dict(pt))) for r in rows if matches(r, dict(pt))}) for pt in points}
    if sized:
        best = {}
        for pt in points:
            config = tuple((k, v) for k, v in pt if k != SIZE)
            n = dict(pt)[SIZE]
            if config not in best or (count[pt], n) > (count[best[config]], dict(best[config])[SIZE]):
                best[config] = pt
        chosen = list(best.values())
    else:
        chosen = list(points)
    most = max(count[pt] for pt in chosen)
    chosen = [pt for pt in chosen if 2 * count[pt] >= most]
    # An axis a sweep figure shows (three values or more, the rest fixed): the ladder keeps its two ends.
    for k in swept_axes(own):
        values = {dict(pt).get(k) for pt in chosen} - {None}
        if len(values) >= 3 and all(_is_number(v) for v in values):
            chosen = [pt for pt in chosen if dict(pt).get(k) in (None, min(values), max(values))]
    if len(chosen) > MAX_POINTS:
        varying = [k for k in keys if len({dict(pt)[k] for pt in chosen}) > 1]
        ends = {k: {min((dict(pt)[k] for pt in chosen), key=_sortable), max((dict(pt)[k] for pt in chosen),
                                                                              key=_sortable)} for k in varying}
        extreme = [pt for pt in chosen if all(dict(pt)[k] in ends[k] for k in varying)]
        chosen = (extreme or chosen)[:MAX_POINTS]
    return sorted(chosen, key=lambda pt: _point_key([kv for kv in pt if kv[0] != SIZE] + [kv for kv in pt
                                                                                      if kv[0] == SIZE])), len(points)


def ladder_plots(p: Plotter):
    for (lab, dtype), rows in p.by_lab_dtype():
        keys = lab_keys(rows)
        how = measure(rows)
        points, total = ladder_points(rows, keys)
        fixed = {k: v for k, v in points[0] if all(dict(pt)[k] == v for pt in points)}
        shared, own = split_points(points, lab)  # what the title says once, what each panel says
        cells = []  # per point: [(label, record)] in ladder order
        rank = ladder_rank(rows)
        for pt in points:
            here = {}
            for r in rows:
                if matches(r, dict(pt)):
                    here.setdefault(label(r, dict(pt)), r)
            cells.append(sorted(here.items(), key=lambda kv: (rank(kv[1]), kv[0])))
        roofs = roof_lines(rows, how)
        tf32, tf32_label = tf32_roof(rows) if how == "gflops" else (0.0, "")
        ncols = 1 if len(points) == 1 else 2
        nrows = math.ceil(len(points) / ncols)
        bars = max(len(c) for c in cells)
        fig, axes = plt.subplots(nrows, ncols, figsize=(max(7.5 * ncols, 10.5), nrows * (0.32 * bars + 1.4) + 1.3),
                                 squeeze=False, layout="constrained")
        drawn = []
        for i, (pt, cell) in enumerate(zip(points, cells)):
            ax = axes[i // ncols][i % ncols]
            names = [name for name, _ in cell]
            vals = [value(r, how) for _, r in cell]
            # Each panel's own scale: a roof far above its bars (one CTA's 20 GB/s under 3352) is named, not
            # drawn; rows under another roof (TF32) may run far past the lab's: they are cut and say so.
            main = [v for v, (_, r) in zip(vals, cell) if not is_tf32(r)] or vals
            reach = [rf for rf in roofs if rf[0] <= 10 * max(main)]
            limit = 1.2 * max(main + [v for v, _, _ in reach])
            unique = panel_styles([(lab, r.variant, hatched(r)) for _, r in cell])  # no two bars alike
            styles = [unique[(lab, r.variant, hatched(r))] for _, r in cell]
            ys = list(range(len(cell)))[::-1]
            shown = [min(v, limit) for v in vals]
            ax.barh(ys, shown, color=[s["color"] for s in styles], alpha=0.9, height=0.7,
                    hatch=["//" if hatched(r) else None for _, r in cell], edgecolor="white", linewidth=0)
            top_roof = roofs[0][0] if roofs else 0
            base = next((value(r, how) for _, r in cell if r.variant == p.percent_of), 0) if p.percent_of else 0
            for y, v, (_, r) in zip(ys, vals, cell):
                text = fmt_value(v)
                if base and not is_tf32(r):
                    text += f"  ({100 * v / base:.1f}%)"
                elif top_roof and not is_tf32(r) and not p.percent_of and top_roof <= 10 * max(main):
                    text += f"  ({100 * v / top_roof:.0f}%)"  # a roof far off the panel's scale: no %
                if is_tf32(r) and tf32:
                    text += f"  ({100 * v / tf32:.0f}% of TF32 roof)"
                box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
                if v > limit:
                    ax.text(limit * 0.99, y, f"{text}, off scale (TF32 tensor cores) \u2192", va="center", ha="right",
                            fontsize=7.5, bbox=box)
                elif v > 0.35 * limit:
                    ax.text(v * 0.985, y, text, va="center", ha="right", fontsize=7.5, bbox=box)
                else:
                    ax.text(v + limit * 0.01, y, text, va="center", ha="left", fontsize=7.5)
            for v, lab_text, ls in reach:
                ax.axvline(v, color="black", lw=1, ls=ls)
            ax.set_yticks(ys)
            ax.set_yticklabels(names, fontsize=8)
            ax.set_xlim(0, limit * 1.12)
            ax.set_xlabel(AXIS[how] + ", axis from 0", fontsize=8)
            far = [text.split(" (")[0] for v, text, _ in roofs if (v, text, _) not in reach]
            ax.set_title(own[i] + (f"\n(off this scale: {'; '.join(far)})" if far else ""), fontsize=9)
            ax.grid(True, axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=8)
            drawn += [r for _, r in cell]
        for j in range(len(points), nrows * ncols):
            axes[j // ncols][j % ncols].axis("off")
        handles = []
        if any(not is_peer(r) for c in cells for _, r in c):
            handles.append(Patch(facecolor="#888888", label="memlab's rungs, in ladder order"))
        if any(is_memlab_library(r.data) for c in cells for _, r in c):
            handles.append(Patch(facecolor="#888888", label="memlab's library from Python (import memlab)"))
        if any(hatched(r) for c in cells for _, r in c):
            handles.append(Patch(facecolor="#888888", hatch="//", edgecolor="white",
                                 label="peers: libraries, frameworks"))
        handles += [Line2D([], [], color="black", lw=1, ls=ls, label=text) for _, text, ls in roofs]
        if tf32_label:
            handles.append(Line2D([], [], ls="none", label=tf32_label))
        if renamed(drawn):
            handles.append(Line2D([], [], ls="none", label=renamed(drawn)))
        fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
        what = {"gflops": "GFLOP/s", "gbps": "GB/s", "time": "time per case"}[how]
        fig.suptitle(f"{lab} {dtype} ladder on {device_line(rows)}" + (f" ({shared})" if shared else "")
                     + f"\n{what} of every rung and peer, cold median"
                     + (f"; (%) of {p.percent_of} at the same point" if p.percent_of else
                        f"; (%) of the {roofs[0][1].split(' (')[0]}" if roofs else "")
                     + ("; bytes = reads + writes; L2 flushed before every sample" if how == "gbps" else ""),
                     fontsize=10)
        name = slug(f"ladder_{lab}_{dtype}" if dtype else f"ladder_{lab}") + ".png"
        best = {}
        for c in cells:
            for nm, r in c:
                k = "memlab library" if is_memlab_library(r.data) else "peer" if is_peer(r) else "rung"
                if not is_tf32(r) and (k not in best or (value(r, how) > value(best[k][1], how)) != (how == "time")):
                    best[k] = (nm, r)
        facts = "; ".join(f"best {k} {nm} {fmt_value(value(r, how))} {UNITS[how]}" for k, (nm, r) in
                          sorted(best.items(), reverse=True))
        where = "; ".join(fmt_point(pt, lab) for pt in points)
        variants = {(is_peer(r), r.variant) for c in cells for _, r in c}
        sentence = (f"{lab} {dtype}: {len(variants)} variants and peers as bars with their values at "
                    f"{len(points)} of its {total} points ({where}), axis from zero"
                    + (f", under the {roofs[0][1]}" if roofs else "") + (f"; {facts}" if facts else "") + ".")
        p.save(fig, name, "ladder", lab, sorted({nm for c in cells for nm, _ in c}), sentence, drawn,
               points=[dict(pt) for pt in points], measure=how, title=shared, panel_titles=own,
               renamed=renamed(drawn))


# ---- size: labs measured over sizes ----------------------------------------------------------------------------

def split_series(series: dict, rows_of: dict) -> list[tuple[str, list[str]]]:
    """The panels a figure's series go to, (title, labels): 1D and 3D apart; else, above MAX_SERIES, memlab's
    rungs and (with the best rung, for reference) the peers apart; then chunks of MAX_SERIES."""
    labels = list(series)
    families = defaultdict(list)
    for s in labels:
        families[_family(rows_of[s].variant)[0]].append(s)
    if len(families) > 1 and all(families.values()):
        groups = [(f"{fam.upper()} variants" if fam else "others", ls) for fam, ls in sorted(families.items())]
    elif len(labels) > MAX_SERIES:
        rungs = [s for s in labels if not is_peer(rows_of[s])]
        peers = [s for s in labels if is_peer(rows_of[s])]
        ref = sorted(rungs, key=lambda s: -max(pt[1] for pt in series[s]))[:1]
        groups = [("memlab's rungs", rungs), (f"{ref[0]} and the peers" if ref else "peers", ref + peers)]
    else:
        groups = [("", labels)]
    out = []
    for title, ls in groups:
        for i in range(0, len(ls), MAX_SERIES):
            out.append((title + (f" ({i // MAX_SERIES + 1})" if len(ls) > MAX_SERIES else ""), ls[i:i + MAX_SERIES]))
    return [g for g in out if g[1]]


def marker_turns(curves: dict) -> dict:
    """{series: indices of its points that show a marker}. Where several series lie on one another (within
    1.5% at one x), they take turns: at the k-th such x only the (k mod count)-th of them shows its marker,
    so each stays visible along a shared line; everywhere else every point shows its marker."""
    names = list(curves)
    shown = {s: [] for s in names}
    xs = sorted({x for c in curves.values() for x in c}, key=float)
    for i, x in enumerate(xs):
        here = [s for s in names if x in curves[s]]
        clusters = []
        for s in here:
            for c in clusters:
                ref = curves[c[0]][x]
                if abs(curves[s][x] - ref) <= 0.015 * max(abs(ref), 1e-12):
                    c.append(s)
                    break
            else:
                clusters.append([s])
        for c in clusters:
            for j, s in enumerate(c):
                if len(c) == 1 or j == i % len(c):
                    shown[s].append(sorted(curves[s], key=float).index(x))
    return shown


def _draw_series(ax, lab, pts_by_label, rows_of, labels, x_of=lambda pts: [p[0] for p in pts],
                 y_of=lambda pts: [p[1] for p in pts]):
    """Lines with the style map's colours and markers. Series lying on one another take turns showing
    their markers (the first at x0, x0+k, ..., the second at x1, x1+k, ...), so each stays visible."""
    styles = panel_styles([(lab, rows_of[s].variant, hatched(rows_of[s])) for s in labels])
    curves = {s: dict(zip(x_of(pts_by_label[s]), y_of(pts_by_label[s]))) for s in labels}
    turns = marker_turns(curves)
    for i, s in enumerate(labels):
        st = styles[(lab, rows_of[s].variant, hatched(rows_of[s]))]
        pts = pts_by_label[s]
        ax.plot(x_of(pts), y_of(pts), color=st["color"], marker=st["marker"], mfc=st["mfc"], ls=st["ls"],
                ms=6, lw=1.4, label=s, zorder=3 + 0.1 * (len(labels) - i), markevery=turns[s])


def _label_log_axis(axis):
    """Ticks at 1, 2, 5 x 10^k, written as plain numbers: 3.7 and 4.4 us read apart."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(LogLocator(base=10, subs=(3.0, 4.0, 6.0, 7.0, 8.0, 9.0)))
    axis.set_minor_formatter(NullFormatter())


def _roofs_on(ax, roofs, legend=True):
    """The roofs as thin black lines without markers (no series looks like one), named in the legend."""
    for v, text, ls in roofs:
        ax.axhline(v, color="black", lw=1, ls=ls, zorder=1, label=text if legend else None)


def size_plots(p: Plotter):
    for (lab, dtype), rows in p.by_lab_dtype():
        if not has_size_axis(rows):
            continue
        how = measure(rows)
        rows = [r for r in rows if SIZE in r.params]
        keys = [k for k in lab_keys(rows) if k != SIZE]
        combos = sorted({tuple((k, r.params.get(k)) for k in keys) for r in own_rows(rows)}, key=_point_key)
        size_meaning = rows[0].run.get("labs", {}).get(lab, {}).get("size_meaning", "elements")
        for combo in combos:
            fixed = dict(combo)
            series, rows_of, members = defaultdict(list), {}, []
            for r in rows:
                if matches(r, fixed):
                    s = label(r, fixed)
                    series[s].append((r.params[SIZE], value(r, how), r.data["cold"]["median_ms"] * 1e3))
                    rows_of.setdefault(s, r)
                    members.append(r)
            sizes = {pt[0] for pts in series.values() for pt in pts}
            if len(sizes) < 3:
                continue  # a few sizes of this configuration: the ladder shows them
            for pts in series.values():
                pts.sort()
            rank = ladder_rank(members)
            labels = sorted(series, key=lambda s: (rank(rows_of[s]), s))
            series = {s: series[s] for s in labels}
            groups = split_series(series, rows_of)
            roofs = roof_lines(members, how)
            two = how != "time"
            fig, axes = plt.subplots(2 if two else 1, len(groups), figsize=(max(6.2 * len(groups) + 0.6, 9.5),
                                                                             9.5 if two else 5.5),
                                     squeeze=False, sharex=True, layout="constrained")
            for c, (title, ls) in enumerate(groups):
                top, bottom = axes[0][c], axes[-1][c]
                if two:
                    _draw_series(top, lab, series, rows_of, ls)
                    _roofs_on(top, roofs)
                    top.set_ylim(0, 1.08 * max([v for v, _, _ in roofs] + [pt[1] for s in ls for pt in series[s]]))
                    top.set_ylabel(AXIS[how] + ", axis from 0", fontsize=8)
                    top.set_title(title, fontsize=10)
                _draw_series(bottom, lab, series, rows_of, ls, y_of=lambda pts: [pt[2] for pt in pts])
                bottom.set_yscale("log")
                _label_log_axis(bottom.yaxis)
                bottom.set_ylabel("µs per case, cold median (log scale)", fontsize=8)
                if not two:
                    bottom.set_title(title, fontsize=10)
                for ax in (top, bottom):
                    ax.set_xscale("log", base=2)
                    ax.grid(True, which="both", alpha=0.25)
                    ax.tick_params(labelsize=8)
                bottom.set_xlabel(f"size n ({size_meaning}, {dtype}; log scale)", fontsize=8)
                handles = bottom.get_legend_handles_labels()[0]
                if c == len(groups) - 1:  # the roofs once, under the last panel
                    handles += [h for h in top.get_legend_handles_labels()[0] if h.get_label() not in ls]
                bottom.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8,
                              frameon=False)
            title_fixed = fmt_point(fixed.items(), lab)
            fig.suptitle(f"{lab} {dtype}{' (' + title_fixed + ')' if title_fixed else ''} on {device_line(members)}\n"
                         + ("bandwidth (top) and time (bottom) against size; " if two else "time against size; ")
                         + "bytes = reads + writes; L2 flushed before every sample"
                         + (f"\n{renamed(members)}" if renamed(members) else ""), fontsize=10)
            in_name = "_".join(f"{k}={v}" for k, v in sorted(fixed.items()))  # the name sorts the params
            name = slug(f"size_{lab}_{dtype}" + (f"_{in_name}" if in_name else "")) + ".png"
            big = max(sizes)
            at_big = {s: pts[-1][1] for s, pts in series.items() if pts[-1][0] == big}
            best = max(at_big, key=at_big.get) if at_big and how != "time" else ""
            p.save(fig, name, "size", lab, labels,
                   f"{lab} ({dtype}{', ' + title_fixed if title_fixed else ''}): "
                   + (f"{UNITS[how]} (axis from zero) and time per case (log-log)" if two
                      else "time per case (log-log)")
                   + f" against size for {len(labels)} variants and peers in {len(groups)} panel(s)"
                   + (f"; at n={big} the best is {best}, {fmt_value(at_big[best])} {UNITS[how]}" if best else "")
                   + ".", members, panels=[ls for _, ls in groups])


# ---- sweep: one axis at a fixed point --------------------------------------------------------------------------

def amplification(rec: Record) -> float | None:
    """The lab's model: bytes the access pattern moves per useful byte (shared-memory wavefronts per request,
    32-byte sectors moved per sector needed); None where the lab models none."""
    hw, b = rec.data.get("hardware_bytes") or 0, rec.data["bytes"]
    return hw / b if hw > 0 and b > 0 else None


# What the lab's model counts, by the lab's roof: the panel of the model, and the panel of time x model, which for
# a DRAM lab is not what DRAM moved: the model counts the 32-byte sectors each warp requests, and a sector two warps
# share (a misaligned row) is requested twice but fetched from DRAM once, the second time served by the L2.
MODEL_AXIS = {"smem": "wavefronts per warp request (model)",
              "dram": "sectors requested / sectors needed (model)"}
WARP_LANES = 32  # the lanes of a warp, whose accesses make one shared-memory request


def model_of(rows: list[Record]):
    """(the function giving a record's model value, the axis label) of the model panel: for a lab under the
    shared-memory roof, wavefronts per warp request -- the model's bytes over the useful bytes, times a request's
    bytes (32 lanes x the rung's access width, its policy's vec_bytes) over a wavefront's (the bytes the banks
    serve per SM per clock, the roof's per_sm_clock: 32 banks x 4 B), so 8- and 16-byte accesses read 2 and 4 at
    the least; for a DRAM lab, sectors requested per sector needed; else the model's bytes per useful byte."""
    roof = lab_roof(rows)
    modelled = [r for r in rows if amplification(r) is not None]
    if roof == "smem" and modelled and all((r.data.get("policy") or {}).get("vec_bytes") for r in modelled):
        per_clock = (table.roof("smem") or {}).get("per_sm_clock", {})

        def wavefronts(r: Record):
            wavefront = per_clock.get(str(r.run.get("device", {}).get("cc", "")), per_clock.get("*"))
            a = amplification(r)
            return a * WARP_LANES * r.data["policy"]["vec_bytes"] / wavefront if a is not None and wavefront else None
        if all(wavefronts(r) for r in modelled):
            return wavefronts, MODEL_AXIS["smem"]
    return amplification, ("bytes the banks serve / useful bytes (model)" if roof == "smem" else
                           MODEL_AXIS.get(roof, "hardware bytes / useful bytes"))
MODEL_RATE = {"smem": ("wavefront bytes / cold median, GB/s", "time x model: what the banks served"),
              "dram": ("sector requests, GB/s (32 B x sectors / cold median)",
                       "time x model: sectors the warps requested, not DRAM traffic\n"
                       "(a sector two warps share counts twice; DRAM moves it once)")}


def sweep_plots(p: Plotter):
    for (lab, dtype), rows in p.by_lab_dtype():
        how = measure(rows)
        own = own_rows(rows)
        axes_ = sorted({k for r in own for k, v in r.params.items() if k not in ("dtype", SIZE)
                        and isinstance(v, (int, float)) and not isinstance(v, bool)})
        for axis in axes_:
            groups = defaultdict(list)
            for r in own:
                if axis in r.params:
                    groups[tuple(sorted(((k, v) for k, v in r.params.items() if k != axis),
                                        key=lambda kv: kv[0]))].append(r)
            for fig_key, members in sorted(groups.items(), key=lambda kv: _point_key(kv[0])):
                fixed = dict(fig_key)
                series, rows_of = defaultdict(list), {}
                for r in rows:  # memlab's rows and peers that have the axis, at this point
                    if axis in r.params and matches(r, fixed):
                        s = label(r, {**fixed, axis: None})
                        series[s].append(r)
                        rows_of.setdefault(s, r)
                values = {r.params[axis] for rs in series.values() for r in rs}
                swept = {s: rs for s, rs in series.items() if len({r.params[axis] for r in rs}) >= 2}
                if len(values) < 3 or not swept:
                    continue  # not a sweep: the ladder shows these points
                # Peers without the axis (a transpose peer has no band): a level line at their value.
                levels = {}
                for r in rows:
                    if axis not in r.params and matches(r, fixed):
                        levels.setdefault(label(r, fixed), r)
                _sweep_figure(p, lab, dtype, axis, fixed, swept, levels, how, values)


def _sweep_figure(p: Plotter, lab, dtype, axis, fixed, swept, levels, how, values):
    rank = ladder_rank([r for rs in swept.values() for r in rs])
    labels = sorted(swept, key=lambda s: (rank(swept[s][0]), s))
    for s in labels:
        swept[s].sort(key=lambda r: r.params[axis])
    rows_of = {s: swept[s][0] for s in labels}
    members = [r for s in labels for r in swept[s]] + list(levels.values())
    amps = [amplification(r) for r in members if amplification(r) is not None]
    # A model worth a panel moves more than the job needs (sectors, wavefronts), or differs along the sweep; a
    # stencil's constant 5% of halo does not.
    modelled = how == "gbps" and bool(amps) and (max(amps) > 1.1 or max(amps) - min(amps) > 0.05)
    chunks = [labels[i:i + MAX_SERIES] for i in range(0, len(labels), MAX_SERIES)]
    ncols = 3 if modelled else 1
    fig, axs = plt.subplots(len(chunks), ncols, figsize=(max(4.6 * ncols + 2.6, 9.5), 4.6 * len(chunks)),
                            squeeze=False, layout="constrained")
    roofs = roof_lines(members, how)
    pts = {s: [(r.params[axis], value(r, how), amplification(r), r) for r in swept[s]] for s in labels}
    model_facts = {}
    for row, chunk in enumerate(chunks):
        ax = axs[row][0]
        _draw_series(ax, lab, pts, rows_of, chunk)
        for i, (name, r) in enumerate(sorted(levels.items())):
            st = style(lab, r.variant, True)
            ax.axhline(value(r, how), color=st["color"], ls="--", lw=1.2, label=f"{name} (no {axis} axis)")
        _roofs_on(ax, roofs)
        ys = [v for s in chunk for _, v, _, _ in pts[s]] + [v for v, _, _ in roofs] + \
            [value(r, how) for r in levels.values()]
        ax.set_ylim(0, 1.08 * max(ys))
        ax.set_ylabel(("useful " if modelled else "") + AXIS[how], fontsize=8)
        ax.set_title("measured" + (": the useful bytes" if modelled else ""), fontsize=9)
        if modelled:
            mx, hx = axs[row][1], axs[row][2]
            with_model = [s for s in chunk if any(a is not None for _, _, a, _ in pts[s])]
            model, model_label = model_of(members)
            shown = {s: [(x, model(r)) for x, _, a, r in pts[s] if a is not None] for s in with_model}
            _draw_series(mx, lab, shown, rows_of, with_model)
            mx.set_ylim(0, 1.1 * max(m for s in with_model for _, m in shown[s]))
            mx.set_ylabel(model_label, fontsize=8)
            model_facts = {"model_label": model_label, "model": {**model_facts.get("model", {}), **shown}}
            mx.set_title("the lab's model: computed, not measured", fontsize=9)
            hw = {s: [(x, v * a) for x, v, a, _ in pts[s] if a is not None] for s in with_model}
            _draw_series(hx, lab, hw, rows_of, with_model)
            roof = lab_roof(members)
            ylabel, title = MODEL_RATE.get(roof, ("hardware GB/s (model's bytes / cold median)",
                                                  "time x model: what the lab's model says was moved"))
            # A DRAM lab's requests are held to the measured copy ceiling for scale only: above it, the L2 served them.
            ref = [rf for rf in roofs if rf[2] == ":"] if roof == "dram" else roofs
            for v, text, ls in ref:
                hx.axhline(v, color="black", lw=1, ls=ls, zorder=1)
            if roof == "dram" and ref:
                title += "\ndotted: the measured copy ceiling; requests above it were L2 hits"
            hx.set_ylim(0, 1.12 * max([v for s in with_model for _, v in hw[s]] + [v for v, _, _ in ref]))
            hx.set_ylabel(ylabel, fontsize=8)
            hx.set_title(title, fontsize=9)
        for a in axs[row]:
            powers = all(isinstance(v, int) and v > 0 and v & (v - 1) == 0 for v in values)
            if min(values) > 0 and (max(values) >= 16 * min(values) or (powers and max(values) >= 4 * min(values))):
                a.set_xscale("log", base=2)
            elif len(values) <= 12:
                a.set_xticks(sorted(values))
            device = members[0].run.get("device", {})
            if axis.endswith("_bytes") and device.get("l2_bytes") and \
                    min(values) / 4 <= device["l2_bytes"] <= 4 * max(values):
                a.axvline(device["l2_bytes"], color="black", lw=1, ls="-.", zorder=1)
                a.annotate(f"L2 {device['l2_bytes'] / 2**20:.0f} MiB", (device["l2_bytes"], 0.02),
                           xycoords=("data", "axes fraction"), fontsize=7, rotation=90, ha="right", va="bottom")
            unit = table.param_unit(lab, axis)
            a.set_xlabel(_shown_name(lab, axis) + (f" ({unit})" if unit else "")
                         + ("; log scale" if a.get_xscale() == "log" else ""), fontsize=8)
            a.grid(True, alpha=0.25)
            a.tick_params(labelsize=8)
        axs[row][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                            handles=axs[row][0].get_legend_handles_labels()[0])
    title_fixed = fmt_point([(k, v) for k, v in fixed.items() if k != "dtype"], lab)
    moved = renamed(members)
    fig.suptitle(f"{lab} {dtype}: {_shown_name(lab, axis)} swept on {device_line(members)}\n({title_fixed})\n"
                 + ("useful bytes = reads + writes; the hardware's bytes from the lab's model; axes from 0" if modelled else
                    "flops as the lab declares them" if how == "gflops" else
                    "bytes = reads + writes; L2 flushed before every sample")
                 + (f"\n{moved}" if moved else ""), fontsize=10)
    name = slug(f"sweep_{lab}_{axis}_{', '.join(f'{k}={v}' for k, v in sorted(fixed.items()))}") + ".png"
    p.save(fig, name, "sweep", lab, labels,
           f"{lab}: {_shown_name(lab, axis)} from {_axis_value(lab, axis, min(values))} to "
           f"{_axis_value(lab, axis, max(values))} at {title_fixed} ({dtype}): {UNITS[how]} of "
           f"{len(labels)} variant(s)" + (f" and {len(levels)} peer(s) as level lines" if levels else "")
           + ((", beside the lab's model (sectors the warps request per sector needed) and the sector requests per "
               "second it implies (L2 hits included: not DRAM traffic)" if lab_roof(members) == "dram" else
               f", beside the lab's model ({model_of(members)[1].replace(' (model)', '')}) and the hardware GB/s it "
               "implies")
              if modelled else "") + ", axes from zero.", members, panels=chunks, modelled=modelled,
           axis=_shown_name(lab, axis), **model_facts)


# ---- roofline -------------------------------------------------------------------------------------------------

def _kind(r: Record) -> str:
    return "memlab's library" if is_memlab_library(r.data) else "peer" if is_peer(r) else "rung"


def _spread_labels(ys: list[float], lo: float, hi: float, gap: float) -> list[float]:
    """Label heights (log10) for points at heights `ys` (log10): each at least `gap` from the next and within
    [lo, hi], as near its point as that allows (pushed up from below, then down from the top)."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [0.0] * len(ys)
    below = -math.inf
    for i in order:
        placed[i] = below = max(ys[i], below + gap, lo)
    above = math.inf
    for i in order[::-1]:
        placed[i] = above = min(placed[i], above - gap, hi)
    return placed


def roofline(p: Plotter):
    """Above: one roofline of the results that count flops: per lab (1D and 3D apart) and per roof its best rung
    and best peer, each named beside its point. Below: each bandwidth lab's best rung and best peer as a bar, as %
    of the roof the lab is bound by, so DRAM- and shared-memory-bound labs read on one axis."""
    ok = p.recs
    if not ok:
        return
    device = ok[0].run.get("device", {})
    flops = [r for r in ok if r.data.get("flops", 0) > 0 and r.data["bytes"] > 0 and value(r, "gflops") > 0]
    bw = [r for r in ok if lab_roof([r]) not in ("fp32", "") and measure([r]) == "gbps"
          and not is_memlab_library(r.data)]  # memlab's own library from Python: neither a rung nor a peer to beat
    if not flops and not bw:
        return
    top = {}  # (lab, family, roof, kind) -> the best record
    for r in flops:
        k = (r.lab, _family(r.variant)[0], roof_name(r) if is_tf32(r) else "fp32", _kind(r))
        if k not in top or value(r, "gflops") > value(top[k], "gflops"):
            top[k] = r
    best = {}  # (lab, kind) -> the best record
    for r in bw:
        k = (r.lab, "peer" if is_peer(r) else "rung")
        if k not in best or value(r, "gbps") / roof_value(r) > value(best[k], "gbps") / roof_value(best[k]):
            best[k] = r
    bar_height = 0.42 * len(best) + 1.6 if best else 0
    fig = plt.figure(figsize=(13, (7.2 if top else 0) + bar_height + 0.8), layout="constrained")
    subs = fig.subfigures(int(bool(top)) + int(bool(best)), 1, squeeze=False,
                          height_ratios=[h for h in (7.2 if top else 0, bar_height) if h])[:, 0]
    series, named = [], []
    if top:
        ax = subs[0].subplots(1, 1)
        intensity = {k: r.data["flops"] / (r.data.get("hardware_bytes") or r.data["bytes"]) for k, r in top.items()}
        ys = {k: value(r, "gflops") for k, r in top.items()}
        fp32 = _median([r.data["roof"]["value"] for r in ok if (r.data.get("roof") or {}).get("name") == "fp32"
                        and r.data["roof"].get("value")])
        if not fp32:
            per = (table.roof("fp32") or {}).get("per_sm_clock", {}).get("*", 0)
            fp32 = device.get("sm_count", 0) * per * device.get("sm_default_clock_khz", 0) / 1e6
        tf32, tf32_text = tf32_roof(list(top.values()))
        dram, ceiling, l2 = (device.get(k, 0) for k in ("peak_gbps", "measured_peak_gbps", "measured_l2_gbps"))
        lo = min(intensity.values()) / 10
        hi = max(10.0, max(intensity.values()) * 200)
        ceil_flops = max(fp32, tf32)
        ai = np.logspace(math.log10(lo), math.log10(hi), 300)
        for v, text, ls in ((dram, "DRAM theoretical", "-"), (ceiling, "DRAM measured (cudaMemcpy)", ":"),
                            (l2, "L2 measured", "-.")):
            if v:
                ax.plot(ai, np.minimum(v * ai, ceil_flops), ls=ls, color="black", lw=1.1, label=f"{text} {v:.0f} GB/s")
                named.append(text)
        for v, text in ((fp32, f"FP32 {fp32:.0f} GFLOP/s"), (tf32, tf32_text.split(" (")[0])):
            if v:
                ax.axhline(v, color="black", lw=1.2)
                ax.annotate(text, (0.01, v), xycoords=("axes fraction", "data"), ha="left", va="bottom", fontsize=10,
                            xytext=(0, 2), textcoords="offset points")
                named.append(text.split(" ")[0])
        y_lo = min(list(ys.values()) + [dram * lo if dram else min(ys.values())]) / 3
        y_hi = max(list(ys.values()) + [ceil_flops]) * 3
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(y_lo, y_hi)
        keys = sorted(top, key=lambda k: (k[0], k[1], k[2], k[3]))
        styles = panel_styles([(k[0], top[k].variant, hatched(top[k])) for k in keys])
        span = math.log10(y_hi) - math.log10(y_lo)
        heights = _spread_labels([math.log10(ys[k]) for k in keys], math.log10(y_lo), math.log10(y_hi) - 0.03 * span,
                                 0.045 * span)
        for k, h in zip(keys, heights):
            r = top[k]
            st = styles[(k[0], r.variant, hatched(r))]
            ax.scatter([intensity[k]], [ys[k]], s=70, marker=st["marker"], color=st["color"],
                       facecolors=st["mfc"], edgecolors=st["color"], linewidths=1.5, zorder=3)
            where = f"{k[0]}{' ' + k[1].upper() if k[1] else ''}"
            text = f"{where}: {label(r, r.params)}, {fmt_value(ys[k])} GFLOP/s"
            ax.annotate(text, (intensity[k], ys[k]), xytext=(intensity[k] * 2.2, 10 ** h), fontsize=9.5,
                        va="center", arrowprops={"arrowstyle": "-", "color": "#777777", "lw": 0.7})
            series.append(f"{k[0]}/{r.variant}")
        ax.grid(True, which="both", alpha=0.25)
        ax.tick_params(labelsize=10)
        ax.set_xlabel("FLOP per DRAM byte (the lab's modelled bytes, else the declared); log scale", fontsize=10)
        ax.set_ylabel("GFLOP/s, cold median (log scale)", fontsize=10)
        ax.legend(loc="lower right", fontsize=9.5, frameon=True)
        subs[0].suptitle("results that count flops: per lab and roof, the best rung and the best peer (open marker)",
                         fontsize=11)
    if best:
        ax = subs[-1].subplots(1, 1)
        ks = sorted(best, key=lambda k: (lab_roof([best[k]]) != "dram", lab_roof([best[k]]), k[0], k[1] == "peer"))
        ks = ks[::-1]
        pct = [100 * value(best[k], "gbps") / roof_value(best[k]) for k in ks]
        sts = [style(k[0], best[k].variant, k[1] == "peer") for k in ks]
        ax.barh(range(len(ks)), pct, color=[s["color"] for s in sts], height=0.7,
                hatch=["//" if k[1] == "peer" else None for k in ks], edgecolor="white", linewidth=0)
        box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.9}
        for i, k in enumerate(ks):
            r = best[k]
            inside = pct[i] >= 45  # the text inside a long bar, after a short one
            ax.text(pct[i] + (-0.8 if inside else 0.8), i, f"{fmt_value(value(r, 'gbps'))} GB/s, {pct[i]:.0f}% of "
                    f"{table.roof_label(roof_name(r))} {roof_value(r):.0f} GB/s", va="center",
                    ha="right" if inside else "left", fontsize=9, bbox=box)
        ceilings = [100 * device["measured_peak_gbps"] / device["peak_gbps"]] \
            if device.get("measured_peak_gbps") and device.get("peak_gbps") else []
        for c in ceilings:
            ax.axvline(c, color="black", lw=1, ls=":")
            ax.annotate("DRAM measured (cudaMemcpy)", (c, 1.0), xycoords=("data", "axes fraction"), fontsize=9,
                        ha="right", va="bottom", rotation=0, xytext=(-2, 2), textcoords="offset points")
            named.append("DRAM measured (cudaMemcpy)")
        ax.axvline(100, color="black", lw=1.2)
        ax.set_yticks(range(len(ks)))
        ax.set_yticklabels([f"{k[0]}: {label(best[k], best[k].params)}" for k in ks], fontsize=10)
        ax.set_xlim(0, 108)
        ax.set_xlabel("% of the roof the lab is bound by (cold GB/s over it), axis from 0", fontsize=10)
        ax.tick_params(axis="x", labelsize=10)
        ax.grid(True, axis="x", alpha=0.25)
        subs[-1].suptitle("labs bound by bandwidth: each one's best rung and best peer (hatched)", fontsize=11)
        named += sorted({table.roof_label(lab_roof([best[k]])) for k in ks})
        series += [f"{k[0]}/{best[k].variant}" for k in ks]
    fig.suptitle(f"roofline on {device_line(ok)}; bytes = the fewest the job must move, reads + writes",
                 fontsize=12)
    drawn = list(top.values()) + bw
    roofs_named = list(dict.fromkeys(named))
    p.save(fig, "roofline.png", "roofline", "*", series,
           f"{len(top)} best results with flops (per lab and roof, the best rung and peer) placed by arithmetic "
           f"intensity under the roofs they reach ({', '.join(roofs_named)}); each bandwidth lab's best rung and best "
           "peer as % of its roof, axes from zero.", drawn, roofs=roofs_named)


def roof_value(r: Record) -> float:
    """The value of the roof a bandwidth record is held to, GB/s: DRAM's theoretical peak from the run's device
    (files that predate roofs per record), else the record's roof."""
    if lab_roof([r]) == "dram":
        return r.run.get("device", {}).get("peak_gbps") or (r.data.get("roof") or {}).get("value") or 1.0
    return (r.data.get("roof") or {}).get("value") or 1.0


# ---- time tables -------------------------------------------------------------------------------------------

def time_tables(p: Plotter):
    """Time per size per implementation (cold median, ms): the reference study's table."""
    groups = defaultdict(dict)
    peers_of = defaultdict(dict)
    for r in p.recs:
        if SIZE in r.params and all(v == 0 for k, v in r.params.items() if k.endswith("_offset")):
            fixed = {k: v for k, v in r.params.items() if k.endswith("_offset")}
            groups[(r.lab, r.params.get("dtype", ""))][(r.params[SIZE], label(r, fixed))] = r.data["cold"]["median_ms"]
            peers_of[(r.lab, r.params.get("dtype", ""))][label(r, fixed)] = is_peer(r)
    for (lab, dtype), cells in sorted(groups.items()):
        sizes = sorted({n for n, _ in cells})
        impls = sorted({v for _, v in cells}, key=lambda v: (peers_of[(lab, dtype)][v], v))
        if len(sizes) < 3:
            continue
        lines = [f"Time per case, cold median (ms), {dtype}: memlab's variants and the peers, in one table as "
                 f"the reference study's.", "",
                 "| N | " + " | ".join(impls) + " |", "| ---: |" + " ---: |" * len(impls)]
        for n in sizes:
            lines.append(f"| {n} | " + " | ".join(f"{cells[(n, v)]:.6f}" if (n, v) in cells else "-" for v in impls)
                         + " |")
        name = f"times_{lab}_{dtype}.md"
        with open(os.path.join(p.out, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        p.made.append({"file": name, "kind": "table", "lab": lab, "series": impls,
                       "sentence": f"{lab} {dtype}: time per size per implementation, cold median (ms)."})


KINDS = ("ladder", "size", "sweep", "roofline", "table")
DRAW = {"ladder": ladder_plots, "size": size_plots, "sweep": sweep_plots, "roofline": roofline, "table": time_tables}


def draw(recs: list[Record], out: str, kinds=KINDS, percent_of: str = "") -> Plotter:
    """Every picture of `kinds` from `recs` into `out`; the Plotter holds what was made and what was not."""
    p = Plotter(recs, out, percent_of)
    for kind in KINDS:
        if kind in kinds:
            DRAW[kind](p)
    left = [r for r in p.recs if id(r) not in p.drawn]
    if left and set(kinds) >= {"ladder", "size", "sweep"}:
        by_lab = defaultdict(list)
        for r in left:
            by_lab[r.lab].append(r)
        for lab, rs in sorted(by_lab.items()):
            pts = sorted({fmt_point(sorted(r.params.items()), lab) for r in rs})
            p.notes.append(f"{lab}: {len(rs)} result(s) on no picture (points the ladder leaves out and no size or "
                           f"sweep covers): " + "; ".join(pts[:4]) + (" ..." if len(pts) > 4 else ""))
    elif left:
        p.notes.append(f"{len(left)} result(s) on no picture: --only {','.join(k for k in KINDS if k in kinds)}")
    return p


def plot_files(paths: list[str], out: str, kinds=KINDS, labs=None) -> Plotter:
    """memlab-plot without its command line: draws `paths` (only the results of `labs`, when given) into the
    folder `out` (which exists), writes index.md, returns what was made and what was not. ResultsError for a
    bad file, OSError for a bad `out`."""
    recs = records(paths)
    p = draw([r for r in recs if not labs or r.lab in labs], out, kinds)
    write_index(p, paths)
    return p


def load_each(paths: list[str]) -> tuple[list[Record], list[str], list[str]]:
    """(records, the files they came from, one line per file skipped: "PATH: why"): every memlab results file of
    `paths` read, every other file passed over with the reason (ResultsError's line), in the order given."""
    recs, used, skipped = [], [], []
    for path in paths:
        try:
            recs += records([path])
            used.append(path)
        except ResultsError as e:
            skipped.append(str(e))
    return recs, used, skipped


def write_index(p: Plotter, paths: list[str], skipped: list[str] = ()):
    """index.md of `p.out`: the files drawn, every picture with its sentence, what was not drawn and the files
    skipped (`skipped`: lines "PATH: why", as load_each gives them)."""
    with open(os.path.join(p.out, "index.md"), "w") as f:
        f.write("# memlab plots\n\nFrom: " + ", ".join(f"`{os.path.basename(x)}`" for x in paths) + "\n\n")
        for m in p.made:
            if m["file"].endswith(".png"):
                f.write(f"## {m['file']}\n\n{m['sentence']}\n\n![{m['file']}]({m['file']})\n\n")
            else:
                f.write(f"## {m['file']}\n\n{m['sentence']} [{m['file']}]({m['file']})\n\n")
        if p.notes:
            f.write("## Not drawn\n\n" + "".join(f"- {n}\n" for n in p.notes))
        if skipped:
            f.write("## Files skipped\n\n" + "".join(f"- {s}\n" for s in skipped))


def parser() -> cli.Parser:
    ap = cli.Parser(prog="memlab-plot",
                    description="Pictures of memlab results files (memlab's and memlab-peers'), merged: every lab's "
                                "ladder, bandwidth and time against size, sweeps beside their models, a roofline.",
                    epilog="Files that are not memlab results files (a check run, a check reference, a log, JSON of "
                           "another schema) are skipped, each named on stderr with why in one line (and in "
                           "index.md); the rest are drawn. Exit codes: 0 something was drawn, whatever was skipped; "
                           "2 nothing could be drawn (every file skipped, or no result a picture can show), a bad "
                           "flag, or an -o folder that cannot be written, one line naming it; 3 matplotlib or numpy "
                           "missing.")
    ap.add_argument("results", nargs="+", help="memlab.results/1 files (others are skipped, each named)")
    ap.add_argument("-o", "--out", required=True, help="folder for the PNGs, tables and index.md")
    ap.add_argument("--only", help=f"draw only these kinds, comma-separated: {', '.join(KINDS)} (default: all)")
    ap.add_argument("--lab", help="draw only the results of these labs, comma-separated (default: every lab in the "
                                  "files)")
    ap.add_argument("--percent-of", default="", metavar="VARIANT",
                    help="the ladder's percentages: of this variant at the same point (the transpose lab's copy: "
                         "%% of a copy of the same bytes) instead of the lab's roof")
    return ap


def _main(argv=None) -> int:
    args = parser().parse_args(argv)
    prog = "memlab-plot"
    kinds = {"ladder" if k == "points" else k for k in args.only.split(",")} if args.only else set(KINDS)
    if kinds - set(KINDS):
        return cli.fail(prog, f"--only: {sorted(kinds - set(KINDS))[0]!r} is not one of {', '.join(KINDS)}")
    if MISSING:
        return cli.fail(prog, f"{MISSING} is not installed (pip install ./tools/python)", cli.MISSING_DEPENDENCY)
    labs = set(args.lab.split(",")) if args.lab else None
    recs, used, skipped = load_each(args.results)  # every file read before the folder is made
    for line in skipped:
        print(f"{prog}: skipped {line}", file=sys.stderr)
    if not used:
        return cli.fail(prog, f"nothing to draw: none of the {len(args.results)} file(s) given is a memlab results "
                              "file")
    if args.percent_of and args.percent_of not in {r.variant for r in recs}:
        return cli.fail(prog, f"--percent-of: no results of {args.percent_of!r} in these files")
    if labs and labs - {r.lab for r in recs}:
        return cli.fail(prog, f"--lab: no results of {', '.join(sorted(labs - {r.lab for r in recs}))} in these "
                              f"files (they hold {', '.join(sorted({r.lab for r in recs})) or 'none'})")
    try:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "index.md"), "a"):
            pass
        p = draw([r for r in recs if not labs or r.lab in labs], args.out, kinds, args.percent_of)
        write_index(p, used, skipped)
    except OSError as e:
        why = "a file, not a folder" if os.path.exists(args.out) and not os.path.isdir(args.out) else e.strerror or e
        return cli.fail(prog, f"-o {args.out}: cannot write there ({why})")
    for n in p.notes:
        print(f"{prog}: not drawn: {n}", file=sys.stderr)
    if not p.made:
        return cli.fail(prog, f"nothing drawn from the {len(used)} results file(s): no result a picture can show "
                              f"({len(p.notes)} reason(s) above; index.md in {args.out} lists them)")
    print(f"{prog}: {len(p.made)} files in {args.out} from {len(used)} results file(s) (index.md lists them"
          + (f", and {len(p.notes)} reason(s) something was not drawn" if p.notes else "")
          + (f"; {len(skipped)} file(s) skipped" if skipped else "") + ")", file=sys.stderr)
    return cli.OK


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
