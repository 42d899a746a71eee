"""memlab-fleet DIR|FILE...: many nodes' `memlab check` files judged together: outliers across the fleet, drift in time.

  srun --nodes=64 --ntasks-per-node=1 bash -c 'memlab check --out checks/$(date +%F)/$(hostname -s).json'
  memlab-fleet checks/                         # the table; exit 1 when a GPU, pair or node is flagged
  memlab-fleet checks/ --html fleet.html --json fleet.json --prometheus /var/lib/node_exporter/memlab_fleet.prom

It reads every .json file under the folders given (and the files given), groups the newest file of each node by GPU
model, and finds:

- **outliers**: a GPU, a pair or a node whose figure is worse than its group's median by more than
  max(5%, 4 s), where s = 1.4826 x MAD / median is the group's robust relative spread. A group is a metric over every
  GPU of one model (per-GPU metrics), or over every pair, or every node, of one model, GPU count and link (a pair's and
  a node's figures depend on the topology). A group is judged with at least 8 values from at least 3 nodes.
- **drift**: with files of several dates, the history of each GPU (by its serial; a memlab.check/1 file records
  none, so there the history follows the slot: node and PCI bus id) for each per-GPU metric, taken relative to its
  model's median over the files within 3.5 days of each (a change of the whole fleet, a driver update, cancels). The
  change over the history is the Theil-Sen slope times its span, the least worse of it with any one check left out
  (one odd check makes no drift); it is a drift when it is worse by more than max(2%, 5 standard errors), the standard error from the check-to-check noise of the model's GPUs (the robust spread
  of every GPU's differences between consecutive checks) over the dates of this history. At least 3 checks over 7
  days or more.

docs/report.md says why these numbers. Outputs: the table (stdout), --json, --prometheus (node_exporter's textfile
collector: written to a temporary file and renamed; the node's metric names, memlab_check_*, for the newest rows, and
memlab_fleet_* for the fleet's judgement), --html (one self-contained page), --pictures DIR (the page's pictures as
PNG).

Exit codes: 0 judged, nothing flagged; 1 an outlier or a drift flagged; 2 usage error, or nothing to judge (no
check file in what was given: an empty folder, every file unreadable); 4 part of the input not judged (a file that
cannot be read, is cut short or is another document; a model with too few nodes to compare), one line each on
stderr, the rest judged and nothing flagged there (1 takes precedence: a flagged GPU is the more urgent news).
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
import os
import statistics
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from . import cli
from .checkfile import Check, CheckFileError, Row, load, reproduce

PROG = "memlab-fleet"
FLEET_SCHEMA = "memlab.fleet/1"
NOT_JUDGED = 4


@dataclass(frozen=True)
class Rule:
    """The fleet's rule, as numbers; `text` says it in words (the page, the JSON and --help print it)."""

    margin: float = 0.05         # an outlier is worse than the median by more than max(margin, spread_factor x s)
    spread_factor: float = 4.0
    min_values: int = 8          # a group is judged with at least this many values ...
    min_nodes: int = 3           # ... from at least this many nodes
    drift_margin: float = 0.02   # a drift: worse by more than max(drift_margin, drift_se x its standard error)
    drift_se: float = 5.0
    drift_min_checks: int = 3
    drift_min_days: float = 7.0
    window_days: float = 3.5     # the model's median at a date: its values within this many days of it

    @property
    def text(self) -> str:
        return (f"outlier: worse than the median of its group by more than max({self.margin:g}, "
                f"{self.spread_factor:g} s), s = 1.4826 x MAD / median of the group (every GPU of a model; every pair "
                f"or node of a model, GPU count and link), judged with {self.min_values} values or more from "
                f"{self.min_nodes} nodes or more, on each node's newest file; drift: a GPU's figure over its model's "
                f"median (within {self.window_days:g} days), changed by the Theil-Sen slope x span (the least worse "
                f"with any one check left out), worse by more "
                f"than max({self.drift_margin:g}, {self.drift_se:g} standard errors; the noise from the model's "
                f"check-to-check differences), over {self.drift_min_checks} checks or more spanning "
                f"{self.drift_min_days:g} days or more")


RULE = Rule()


# ---- reading -------------------------------------------------------------------------------------------------------

def collect(paths: list[str]) -> tuple[list[str], list[str]]:
    """(the files to read, one line per path that gave none): every .json file under each folder (sorted), and each
    file given."""
    files, problems = [], []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".json"))
            if not found:
                problems.append(f"{p}: no .json files in this folder")
            files += found
        elif os.path.exists(p):
            files.append(p)
        else:
            problems.append(f"{p}: no such file or folder")
    return files, problems


def read(files: list[str]) -> tuple[list[Check], list[str]]:
    """Every check file that could be read, and one line for each that could not."""
    checks, problems = [], []
    for f in files:
        try:
            checks.append(load(f))
        except CheckFileError as e:
            problems.append(str(e))
    return checks, problems


# ---- judging -------------------------------------------------------------------------------------------------------

def measured(r: Row) -> bool:
    """A row the fleet compares: a figure measured (not an NVML rule's count, not skipped or interrupted)."""
    return r.value is not None and not r.judged_by_rule and r.verdict not in ("skip", "interrupted") and r.value > 0


def group_key(c: Check, r: Row) -> tuple:
    """What a row is compared with: per-GPU metrics over the model; pairs and nodes over the model, GPU count, link."""
    if r.scope == "gpu":
        return (c.model, "gpu", r.metric, 0, "")
    return (c.model, r.scope, r.metric, len(c.gpus), c.link)


def robust(values: list[float]) -> tuple[float, float]:
    """(median, s): s = 1.4826 x MAD / median, a relative standard deviation that a few odd values cannot inflate."""
    m = statistics.median(values)
    mad = statistics.median(abs(v - m) for v in values)
    return m, (1.4826 * mad / abs(m) if m else 0.0)


def worse_by(value: float, median: float, higher_is_better: bool) -> float:
    """How much worse than the median, as a fraction of it (negative: better)."""
    return (median - value) / median if higher_is_better else (value - median) / median


@dataclass
class Group:
    model: str
    scope: str
    metric: str
    gpus: int          # GPUs a node (pairs and nodes); 0 for per-GPU metrics
    link: str
    unit: str
    higher_is_better: bool
    values: int
    nodes: int
    median: float
    spread: float
    threshold: float   # as a fraction of the median
    judged: bool
    why_not: str = ""

    @property
    def name(self) -> str:
        where = "every GPU" if self.scope == "gpu" else f"every {self.scope} of {self.gpus}-GPU {self.link} nodes"
        return f"{self.model} {self.metric} ({where})"


@dataclass
class Finding:
    kind: str            # outlier, drift
    scope: str           # gpu, pair, node
    model: str
    metric: str
    node: str
    gpu: int | None
    peer: int | None
    serial: str | None
    uuid: str | None
    unit: str
    value: float         # outlier: the figure; drift: the newest figure
    median: float        # outlier: the group's median; drift: the model's median at the newest date
    worse_by: float      # outlier: than the median; drift: the change over the history (worse positive)
    threshold: float
    node_verdict: str    # what the node's own check said of this row (its newest)
    fault: str | None
    command: str
    file: str
    measured: str        # when its (newest) check measured it
    history: list = field(default_factory=list)  # drift: [(date, value, model median)]
    model_moved: float = 0.0                      # drift: the model's median over the same span, m_last / m_first - 1
    days: float = 0.0
    identity: str = ""                            # drift: serial, or "slot node/bus id" for memlab.check/1
    higher_is_better: bool = True

    @property
    def where(self) -> str:
        if self.scope == "pair":
            return f"{self.node} GPU {self.gpu} > {self.peer}"
        if self.scope == "node":
            return f"{self.node}"
        return f"{self.node} GPU {self.gpu}"

    @property
    def key(self) -> tuple:
        return (self.kind, self.node, self.gpu, self.peer, self.metric)


@dataclass
class Fleet:
    files: int
    checks: list[Check]
    latest: dict                 # node -> its newest Check
    problems: list[str]          # one line per input not judged (unreadable files, groups too small)
    groups: list[Group]
    findings: list[Finding]
    noise: dict                  # (model, metric) -> check-to-check noise (relative standard deviation)
    histories: int = 0           # GPU x metric histories long enough to judge drift
    dates: list = field(default_factory=list)
    rule: Rule = RULE

    @property
    def outliers(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "outlier"]

    @property
    def drifts(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "drift"]

    @property
    def exit_status(self) -> int:
        if self.findings:
            return cli.VERDICT
        if not self.latest:
            return cli.BAD_INPUT
        return NOT_JUDGED if self.problems else cli.OK

    @property
    def judged_models(self) -> set:
        """The models with a group judged (others had too few nodes)."""
        return {g.model for g in self.groups if g.judged}

    @property
    def gpus(self) -> int:
        return sum(len(c.gpus) for c in self.latest.values())

    @property
    def judgements(self) -> int:
        """Values held to the outlier rule (the denominator of a false-positive rate)."""
        return sum(g.values for g in self.groups if g.judged)


def newest(checks: list[Check]) -> dict:
    """node -> its newest check (a later file wins a tie)."""
    out = {}
    for c in checks:
        if c.node not in out or c.measured >= out[c.node].measured:
            out[c.node] = c
    return out


def outliers(latest: dict, rule: Rule = RULE) -> tuple[list[Group], list[Finding], list[str]]:
    members = defaultdict(list)
    for c in latest.values():
        for r in c.rows:
            if measured(r):
                members[group_key(c, r)].append((c, r))
    groups, found, problems = [], [], []
    for key in sorted(members, key=lambda k: (k[0], ("gpu", "pair", "node").index(k[1]), k[3], k[4])):
        rows = members[key]
        model, scope, metric, gpus, link = key
        values = [r.value for _, r in rows]
        nodes = len({c.node for c, _ in rows})
        m, s = robust(values)
        threshold = max(rule.margin, rule.spread_factor * s)
        judged = len(values) >= rule.min_values and nodes >= rule.min_nodes
        g = Group(model, scope, metric, gpus, link, rows[0][1].unit, rows[0][1].higher_is_better, len(values), nodes,
                  m, s, threshold, judged)
        if not judged:
            g.why_not = (f"{len(values)} value(s) from {nodes} node(s): the rule needs {rule.min_values} from "
                         f"{rule.min_nodes} nodes")
        groups.append(g)
        if not judged:
            continue
        for c, r in rows:
            w = worse_by(r.value, m, r.higher_is_better)
            if w > threshold:
                gpu = c.gpu(r.gpu) if r.gpu is not None else None
                found.append(Finding("outlier", scope, model, metric, c.node, r.gpu, r.peer,
                                     gpu.serial if gpu else None, gpu.uuid if gpu else None, r.unit, r.value, m, w,
                                     threshold, r.verdict, r.fault, reproduce(r, c), c.path, _iso(c.measured),
                                     higher_is_better=r.higher_is_better))
    # A model whose every group is too small is named once: its nodes are not compared at all.
    for model in sorted({g.model for g in groups}):
        gs = [g for g in groups if g.model == model]
        if not any(g.judged for g in gs):
            nodes = sorted({c.node for c in latest.values() if c.model == model})
            problems.append(f"{model}: {len(nodes)} node(s) ({', '.join(nodes[:4])}{' ...' if len(nodes) > 4 else ''})"
                            f" too few to compare (the rule needs {rule.min_values} values from {rule.min_nodes} "
                            "nodes): not judged by the fleet; memlab check's own floors judge each")
    return groups, found, problems


def _iso(t: _dt.datetime) -> str:
    return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def theil_sen(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(slope, intercept): the median of the pairwise slopes, and the median of y - slope x."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i in range(len(xs)) for j in range(i + 1, len(xs))
              if xs[j] != xs[i]]
    b = statistics.median(slopes) if slopes else 0.0
    return b, statistics.median(y - b * x for x, y in zip(xs, ys))


def identity(c: Check, ordinal: int) -> tuple[str, str]:
    """(the key of a GPU's history, how the page names it): its serial; where a file records none (memlab.check/1),
    the slot: node and PCI bus id."""
    g = c.gpu(ordinal)
    if g is not None and g.serial:
        return f"serial {g.serial}", f"serial {g.serial}"
    bus = g.bus_id if g is not None and g.bus_id else f"GPU {ordinal}"
    return f"slot {c.node} {bus}", f"slot {c.node} {bus} (no serial in a {c.schema} file)"


def drift(checks: list[Check], latest: dict, rule: Rule = RULE) -> tuple[list[Finding], dict, int]:
    """Drift findings, the model's check-to-check noise per metric, and how many histories were long enough."""
    # The model's values of each per-GPU metric by the time of their file (for its median near a date).
    by_model = defaultdict(list)  # (model, metric) -> [(t, value)]
    series = defaultdict(list)    # (identity, metric) -> [(t, value, check, row)]
    names = {}
    for c in checks:
        t = c.measured.timestamp() / 86400.0
        for r in c.rows:
            if r.scope != "gpu" or not measured(r):
                continue
            by_model[(c.model, r.metric)].append((t, r.value))
            key, name = identity(c, r.gpu)
            series[(key, r.metric)].append((t, r.value, c, r))
            names[key] = name
    times = {}
    for k, v in by_model.items():
        v.sort(key=lambda x: x[0])
        times[k] = [x[0] for x in v]
    median_cache = {}

    def model_median(model, metric, t):
        k = (model, metric, t)
        if k not in median_cache:
            vs, ts = by_model[(model, metric)], times[(model, metric)]
            lo = bisect.bisect_left(ts, t - rule.window_days)
            hi = bisect.bisect_right(ts, t + rule.window_days)
            median_cache[k] = statistics.median(x[1] for x in vs[lo:hi])
        return median_cache[k]

    # Each history relative to its model's median, in time order.
    rel = {}
    for (key, metric), pts in series.items():
        pts.sort(key=lambda p: p[0])
        rel[(key, metric)] = [(t, v / model_median(c.model, metric, t), v, c, r) for t, v, c, r in pts]
    # The noise of one check: the robust spread of every GPU's change from one check to the next, relative to the
    # model's median, pooled over the model's GPUs; sqrt(2) because a difference holds two checks' noise.
    diffs = defaultdict(list)
    for (key, metric), pts in rel.items():
        model = pts[0][3].model
        diffs[(model, metric)] += [pts[i + 1][1] - pts[i][1] for i in range(len(pts) - 1)]
    noise = {}
    for k, d in diffs.items():
        if len(d) >= rule.min_values:
            md = statistics.median(d)
            noise[k] = 1.4826 * statistics.median(abs(x - md) for x in d) / math.sqrt(2)
    found, judged = [], 0
    for (key, metric), pts in rel.items():
        if len(pts) < rule.drift_min_checks or pts[-1][0] - pts[0][0] < rule.drift_min_days:
            continue
        c_last, r_last = pts[-1][3], pts[-1][4]
        model = c_last.model
        sigma = noise.get((model, metric))
        if sigma is None:
            continue
        judged += 1
        ts = [p[0] - pts[0][0] for p in pts]
        ys = [p[1] for p in pts]
        span = ts[-1]
        # The change is the Theil-Sen slope times the span; the least worse of it over the history with any one check
        # left out, so that one odd check (a busy GPU, a hot day) makes no drift on its own.
        worst = []
        for skip in range(len(ts)):
            b, a = theil_sen(ts[:skip] + ts[skip + 1:], ys[:skip] + ys[skip + 1:])
            change = b * span / a if a else 0.0
            worst.append(-change if r_last.higher_is_better else change)
        w = min(worst)
        tbar = statistics.fmean(ts)
        sxx = sum((t - tbar) ** 2 for t in ts)
        se = sigma * span / math.sqrt(sxx) if sxx > 0 else math.inf
        threshold = max(rule.drift_margin, rule.drift_se * se)
        if w > threshold:
            m0 = model_median(model, metric, pts[0][0])
            m1 = model_median(model, metric, pts[-1][0])
            g = c_last.gpu(r_last.gpu)
            f = Finding("drift", "gpu", model, metric, c_last.node, r_last.gpu, None, g.serial if g else None,
                        g.uuid if g else None, r_last.unit, r_last.value, m1, w, threshold, r_last.verdict,
                        r_last.fault, reproduce(r_last, c_last), c_last.path, _iso(c_last.measured),
                        history=[(_iso(p[3].measured), p[2], model_median(model, metric, p[0])) for p in pts],
                        model_moved=m1 / m0 - 1, days=span, identity=names[key],
                        higher_is_better=r_last.higher_is_better)
            found.append(f)
    return found, noise, judged


def judge(checks: list[Check], problems: list[str] | None = None, files: int | None = None,
          rule: Rule = RULE) -> Fleet:
    problems = list(problems or [])
    latest = newest(checks)
    groups, found, small = outliers(latest, rule)
    drifts, noise, histories = drift(checks, latest, rule)
    order = {"outlier": 0, "drift": 1}
    findings = sorted(found + drifts, key=lambda f: (order[f.kind], f.node, f.gpu if f.gpu is not None else -1,
                                                     f.peer if f.peer is not None else -1, f.metric))
    dates = sorted({c.measured.date().isoformat() for c in checks})
    return Fleet(files if files is not None else len(checks), checks, latest, problems + small, groups, findings,
                 noise, histories, dates, rule)


# ---- outputs -------------------------------------------------------------------------------------------------------

def headline(f: Fleet) -> str:
    """The fleet's verdict in one sentence."""
    if not f.latest:
        return "NOTHING TO JUDGE: no readable check file"
    if not f.judged_models:
        return (f"NOT JUDGED: {len(f.latest)} node{'s' if len(f.latest) > 1 else ''}, too few of a model to compare "
                f"(the rule needs {f.rule.min_values} values from {f.rule.min_nodes} nodes)")
    gpus = sorted({(x.node, x.gpu) for x in f.outliers if x.scope == "gpu"})
    pairs = sorted({(x.node, tuple(sorted((x.gpu, x.peer)))) for x in f.outliers if x.scope == "pair"})
    nodes = sorted({x.node for x in f.outliers if x.scope == "node"})
    drifting = sorted({(x.node, x.gpu) for x in f.drifts})
    judged = f.judged_models
    nodes_in = [c for c in f.latest.values() if c.model in judged]
    scope = f"{sum(len(c.gpus) for c in nodes_in)} GPUs of {len(nodes_in)} nodes ({', '.join(sorted(judged)) or 'none'})"
    left = len(f.latest) - len(nodes_in)
    if left:
        scope += f"; {left} node{'s' if left > 1 else ''} of another model not judged"
    if not f.findings:
        return f"NO OUTLIER, NO DRIFT among {scope}"
    parts = []
    for n, what in ((len(gpus), "GPU"), (len(pairs), "pair"), (len(nodes), "node")):
        if n:
            parts.append(f"{n} {what}{'s' if n > 1 else ''}")
    text = ("OUTLIERS: " + ", ".join(parts)) if parts else ""
    if drifting:
        text += ("; " if text else "") + f"DRIFT: {len(drifting)} GPU{'s' if len(drifting) > 1 else ''}"
    return f"{text} among {scope}"


def signed(x: float) -> str:
    """+1.2%, -0.3%, and 0.0% for a change that rounds to none (never -0.0%)."""
    t = f"{100 * x:+.1f}%"
    return "0.0%" if t in ("+0.0%", "-0.0%") else t


def finding_text(x: Finding) -> str:
    if x.kind == "outlier":
        return (f"outlier {x.where:<24} {x.metric:<12} {x.value:10.4g} {x.unit:<5} median {x.median:.4g}: "
                f"{100 * x.worse_by:.1f}% worse (rule {100 * x.threshold:.1f}%); node's check: {x.node_verdict}"
                + (f" ({x.fault})" if x.fault else ""))
    return (f"drift   {x.where:<24} {x.metric:<12} {x.value:10.4g} {x.unit:<5} {100 * x.worse_by:.1f}% worse over "
            f"{x.days:.0f} days (rule {100 * x.threshold:.1f}%), model's median {signed(x.model_moved)}; "
            f"{x.identity}")


def table_text(f: Fleet) -> str:
    lines = [headline(f)]
    for x in f.findings:
        lines.append("  " + finding_text(x))
    judged = [g for g in f.groups if g.judged]
    lines.append(f"{len(f.latest)} nodes' newest files of {f.files} read ({len(f.dates)} date"
                 f"{'s' if len(f.dates) != 1 else ''}); {len(judged)} groups judged, {f.judgements} values; "
                 f"{f.histories} GPU histories long enough for drift")
    if f.problems:
        lines.append(f"{len(f.problems)} input(s) not judged (stderr and the JSON's not_judged name each)")
    return "\n".join(lines) + "\n"


def drift_line(f: Fleet, sigma: float) -> float | None:
    """The drift rule's line for a GPU checked at every date of the fleet, with the check-to-check noise `sigma`."""
    days = [(_dt.date.fromisoformat(d) - _dt.date.fromisoformat(f.dates[0])).days for d in f.dates]
    if len(days) < f.rule.drift_min_checks or days[-1] < f.rule.drift_min_days:
        return None
    mean = statistics.fmean(days)
    sxx = sum((t - mean) ** 2 for t in days)
    return max(f.rule.drift_margin, f.rule.drift_se * sigma * days[-1] / math.sqrt(sxx))


def as_json(f: Fleet) -> dict:
    def finding(x: Finding) -> dict:
        d = asdict(x)
        d["where"] = x.where
        d["history"] = [{"measured": t, "value": v, "model_median": m} for t, v, m in x.history]
        return d

    return {"schema": FLEET_SCHEMA, "rule": {**asdict(f.rule), "text": f.rule.text}, "verdict": headline(f),
            "exit_status": f.exit_status, "files": f.files, "nodes": len(f.latest), "gpus": f.gpus,
            "dates": f.dates, "judgements": f.judgements, "histories": f.histories,
            "models": sorted({c.model for c in f.latest.values()}),
            "schemas": sorted({c.schema for c in f.checks}),
            "groups": [asdict(g) for g in f.groups],
            "noise": [{"model": k[0], "metric": k[1], "check_to_check": v, "drift_line": drift_line(f, v)}
                      for k, v in sorted(f.noise.items())],
            "findings": [finding(x) for x in f.findings], "not_judged": f.problems}


def _labels(**kv) -> str:
    def val(v):
        return str("" if v is None else v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return "{" + ",".join(f'{k}="{val(v)}"' for k, v in kv.items()) + "}"


def _sample(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def prometheus(f: Fleet) -> str:
    """The fleet in Prometheus's text format. The newest row of every node under the node's own names and labels
    (memlab_check_gpu_info, memlab_check_value, memlab_check_verdict; docs/check.md) with a `machine` label (the node:
    a file for one node_exporter that serves the whole fleet), then the fleet's own judgement (memlab_fleet_*)."""
    fams = []

    def family(name, help_text, lines):
        if lines:
            fams.append(f"# HELP {name} {help_text}\n# TYPE {name} gauge\n" + "".join(f"{name}{l}\n" for l in lines))

    value, verdict, info = [], [], []
    for node, c in sorted(f.latest.items()):
        for g in c.gpus:
            cuda = f"{g.driver_version // 1000}.{g.driver_version % 1000 // 10}" if g.driver_version else ""
            info.append(_labels(machine=node, gpu=g.ordinal, uuid=g.uuid, serial=g.serial, model=g.name,
                                bus_id=g.bus_id, driver=g.driver, cuda=cuda) + " 1")
        for r in c.rows:
            g = c.gpu(r.gpu) if r.gpu is not None else None
            base = dict(machine=node, gpu="" if r.gpu is None else r.gpu, peer="" if r.peer is None else r.peer,
                        metric=r.metric, scope=r.scope, uuid=g.uuid if g else None, serial=g.serial if g else None,
                        model=g.name if g else c.model)
            if r.value is not None:
                value.append(_labels(**base, unit=r.unit) + f" {_sample(r.value)}")
            if r.verdict != "pass":  # the fleet's file stays small: a series for each row that did not pass
                verdict.append(_labels(**base, verdict=r.verdict) + " 1")
    family("memlab_check_gpu_info", "A GPU checked (value 1): its machine, identity, driver and CUDA.", info)
    family("memlab_check_value", "A row's measured value in the newest check of its node, in the unit of its unit "
                                 "label.", value)
    family("memlab_check_verdict", "The verdict of a row that did not pass in the newest check of its node (value 1: "
                                   "the row's); no series for a row that passed.", verdict)
    medians, thresholds, outl, drifts = [], [], [], []
    for g in f.groups:
        if not g.judged:
            continue
        labels = _labels(model=g.model, metric=g.metric, scope=g.scope, gpus=g.gpus or "", link=g.link, unit=g.unit)
        medians.append(labels + f" {_sample(g.median)}")
        thresholds.append(labels + f" {_sample(g.threshold)}")
    for x in f.findings:
        labels = dict(machine=x.node, gpu="" if x.gpu is None else x.gpu, peer="" if x.peer is None else x.peer,
                      metric=x.metric, scope=x.scope, uuid=x.uuid, serial=x.serial, model=x.model)
        (outl if x.kind == "outlier" else drifts).append(_labels(**labels) + f" {_sample(x.worse_by)}")
    family("memlab_fleet_median", "The median of a metric over its group (every GPU of a model; every pair or node of "
                                  "a model, GPU count and link), newest files.", medians)
    family("memlab_fleet_threshold", "How much worse than the median a figure may be before it is an outlier, as a "
                                     "fraction of the median: max(0.05, 4 x the group's robust spread).", thresholds)
    family("memlab_fleet_outlier", "A GPU, pair or node worse than its group's median beyond the threshold: how much "
                                   "worse, as a fraction of the median. No series for the others.", outl)
    family("memlab_fleet_drift", "A GPU whose figure, relative to its model's median, got worse over its history "
                                 "beyond the drift threshold: the change, as a fraction. No series for the others.",
           drifts)
    family("memlab_fleet_nodes", "Nodes judged (their newest file).", [f" {len(f.latest)}"])
    family("memlab_fleet_gpus", "GPUs judged.", [f" {f.gpus}"])
    family("memlab_fleet_files_not_judged", "Inputs not judged: unreadable files, models with too few nodes.",
           [f" {len(f.problems)}"])
    family("memlab_fleet_flagged", "Findings: outliers and drifts.", [_labels(kind="outlier") + f" {len(f.outliers)}",
                                                                      _labels(kind="drift") + f" {len(f.drifts)}"])
    return "".join(fams)


# ---- the command ---------------------------------------------------------------------------------------------------

def parser() -> cli.Parser:
    ap = cli.Parser(prog=PROG, description="Many nodes' memlab check files judged together: outliers per GPU model, "
                                           "drift per GPU serial.",
                    epilog="Exit codes: 0 nothing flagged; 1 an outlier or a drift; 2 usage error or nothing to "
                           "judge; 4 part of the input not judged (one line each), the rest judged, nothing flagged.")
    ap.add_argument("paths", nargs="+", help="folders (every .json file under them) and check files")
    ap.add_argument("--json", metavar="FILE", help="the fleet as JSON (memlab.fleet/1)")
    ap.add_argument("--prometheus", metavar="FILE", help="a textfile for node_exporter's textfile collector")
    ap.add_argument("--html", metavar="FILE", help="one self-contained page")
    ap.add_argument("--pictures", metavar="DIR", help="the page's pictures as PNG")
    ap.add_argument("--format", choices=("table", "json"), default="table", help="what stdout gets (default: table)")
    return ap


def _main(argv=None) -> int:
    import json

    a = parser().parse_args(argv)
    files, problems = collect(a.paths)
    checks, unreadable = read(files)
    problems += unreadable
    f = judge(checks, problems, len(files))
    for p in f.problems:
        print(f"{PROG}: {p}", file=sys.stderr)
    if not f.latest:
        return cli.fail(PROG, "nothing to judge: no readable memlab check file in " + ", ".join(a.paths))
    try:
        if a.json:
            cli.write_text(a.json, json.dumps(as_json(f), indent=1) + "\n")
        if a.prometheus:
            cli.write_text(a.prometheus, prometheus(f))
        if a.html or a.pictures:
            from . import fleet_page

            if a.pictures:
                os.makedirs(a.pictures, exist_ok=True)
                fleet_page.write_pictures(f, a.pictures)
            if a.html:
                cli.write_text(a.html, fleet_page.page_of(f))
    except OSError as e:
        return cli.fail(PROG, f"{e.filename or 'output'}: cannot write there ({e.strerror or e})")
    sys.stdout.write(json.dumps(as_json(f), indent=1) + "\n" if a.format == "json" else table_text(f))
    return f.exit_status


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
