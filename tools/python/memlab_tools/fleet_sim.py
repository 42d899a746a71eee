"""A fleet of `memlab check` files made from the committed ones by a stated, seeded transformation: what memlab-fleet
is tested on, and how its false-positive rate is measured.

  python3 -m memlab_tools.fleet_sim OUT [--seed 2026] [--nodes 64] [--weeks 4] [--clean] [--other-model N]
      writes OUT/<date>/<node>.json, one check file a node a week (as a weekly job of
      `memlab check --out DIR/$(date +%F)/$(hostname -s).json` would), and prints what was planted (--planted FILE: as
      JSON)
  python3 -m memlab_tools.fleet_sim --false-positives 100 [--noise gauss|t3] [--json FILE.json]
      judges clean fleets of seeds 1..100 and counts what memlab-fleet flags in them

The transformation, all of it:

- The committed checks (docs/results): a 4-GPU H100 node's two plain runs (h100x4/check/run1.json, run2.json) and a
  one-GPU machine's (h100/check/run1.json). Each metric's median m and robust spread s = 1.4826 x MAD / m over their
  values: per-GPU metrics over the 9 GPU checks, the peer copy over the 24 pairs, the all-reduce over the 2 nodes.
  The rows of run1.json, as `memlab check --replay` writes them in memlab.check/2 (h100x4/check/replayed/run1.json),
  are the template: their order, units, reference lines, commands, NVML readings. The files written are
  memlab.check/2, each flagged row with the fault code, action and what it points at of docs/check.md's table.
- Nodes node001..nodeNNN joined by NVSwitch; every third (node003, node006, ...) has 4 GPUs, the others 8. An 8-GPU
  node's pairs and all-reduce take the 4-GPU node's figures and lines (the committed runs hold no 8-GPU node).
- A figure = m x (1 + s/sqrt(2) x u + s/sqrt(2) x e): u ~ N(0, 1) is the GPU's own (its pair's, its node's), drawn
  once; e ~ N(0, 1) is drawn anew for every check. Half the committed variance between GPUs, half from check to
  check. (--noise t3: both from Student's t with 3 degrees of freedom scaled to the same MAD, heavier tails.)
- Weekly checks, weeks 0..W-1: 2026-11-02 + 7 x week, 03:00 UTC plus 15 s a node (a job array).
- Every row judged as memlab check judges it: fail beyond the row's failure line, warn beyond its warning line,
  sibling more than 5% worse than the median of the node's GPUs (pairs); the counts and exit status follow.
- Each GPU gets a serial and a UUID drawn from the seed.

Planted (not with --clean), on nodes and GPUs drawn from the seed:
1. two GPUs with a degraded HBM: hbm_copy and hbm_read x 0.92 on one, x 0.88 on the other, every week;
2. one pair with a slow link: the pair metric (the copy engine from one GPU into the other) x 0.70 both ways, every week (the node's all-reduce is left as drawn);
3. one GPU drifting 1% a week: hbm_copy and hbm_read x (1 - 0.01 x week);
and two changes that are not faults, which memlab-fleet must not flag:
4. from week 2 on, every GPU's h2d_pinned x 0.97 (a change of the whole fleet: a driver or firmware update);
5. one GPU swapped for another at week 2: a new serial, hbm_copy 3% under the old one's (a slot's history would
   show a drop; the GPU's history starts again).
"""

from __future__ import annotations

import argparse
import copy
import datetime as _dt
import json
import math
import os
import random
import statistics
import sys
import uuid as _uuid

from .checkfile import RULE_UNITS, Check, from_document

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "docs", "results"))
FOUR = ("h100x4/check/run1.json", "h100x4/check/run2.json")
ONE = ("h100/check/run1.json",)
TEMPLATE = "h100x4/check/replayed/run1.json"  # run1.json judged again as memlab.check/2 (memlab check --replay)
FAULTS = os.path.join(RESULTS, "..", "check.md")  # the fault-code table, held to src/check/faults.cpp by a test
URGENCY = ("replace", "drain", "reset", "rerun", "monitor")
SCHEMA = "memlab.fleet_sim/1"  # what was planted, and the false-positive counts (docs/fleet-sim.schema.json)
START = _dt.datetime(2026, 11, 2, 3, 0, 0, tzinfo=_dt.timezone.utc)
SIBLING = 0.05
DEGRADED = (0.92, 0.88)
SLOW_LINK = 0.70
DRIFT_A_WEEK = 0.01
FLEET_CHANGE = ("h2d_pinned", 2, 0.97)   # metric, from week, factor
SWAP = ("hbm_copy", 2, 0.97)             # metric, at week, the new GPU's figure against the old one's


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Committed:
    """What the fleet is made from: the template rows and each metric's median and spread."""

    def __init__(self, results: str = RESULTS):
        four = [_load(os.path.join(results, p)) for p in FOUR]
        one = [_load(os.path.join(results, p)) for p in ONE]
        # The template: run1 as memlab.check/2 where it is committed (each row's fault fields), else run1 itself.
        path = os.path.join(results, TEMPLATE)
        self.template = _load(path) if os.path.exists(path) else four[0]
        self.v2 = self.template.get("schema") == "memlab.check/2"
        self.faults = fault_table(os.path.join(results, "..", "check.md")) if self.v2 else {}
        values = {}
        for doc in four + one:
            for r in doc["rows"]:
                if r["value"] is None or r["unit"] in RULE_UNITS:
                    continue
                values.setdefault(r["metric"], []).append(r["value"])
        self.median, self.spread = {}, {}
        for metric, vs in values.items():
            m = statistics.median(vs)
            self.median[metric] = m
            self.spread[metric] = 1.4826 * statistics.median(abs(v - m) for v in vs) / m
        rows = self.template["rows"]
        self.gpu_rows = [r for r in rows if r["scope"] == "gpu" and r["gpu"] == 0]
        self.pair_rows = [next(r for r in rows if r["scope"] == "pair")] if any(r["scope"] == "pair" for r in rows) \
            else []
        self.node_rows = [r for r in rows if r["scope"] == "node"]
        # The metric of a pair (the committed runs have one): the slow link is planted on it.
        self.pair_metric = self.pair_rows[0]["metric"] if self.pair_rows else None
        self.sources = [os.path.join("docs", "results", p) for p in FOUR + ONE] + (
            [os.path.join("docs", "results", TEMPLATE), os.path.join("docs", "check.md")] if self.v2 else [])


def fault_table(page: str) -> dict:
    """metric -> (fault code, what it points at, the action on a failure), from docs/check.md's fault-code table."""
    import re

    with open(page, encoding="utf-8") as f:
        text = f.read()
    block = text[text.index("<!-- fault codes"):text.index("<!-- end of fault codes")]
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        code, raised, points, _, action = cells
        for metric in re.findall(r"[a-z0-9_]+", raised):
            out.setdefault(metric, (code.strip("`"), points, action.strip("`")))
    return out


def node_name(i: int) -> str:
    return f"node{i:03d}"


def gpus_of(i: int) -> int:
    """Every third node has 4 GPUs, the others 8."""
    return 4 if i % 3 == 0 else 8


class Fleet:
    """The fleet's fixed draws (its GPUs, their serials and own offsets, the faults' places), from the seed."""

    def __init__(self, committed: Committed, seed: int = 2026, nodes: int = 64, weeks: int = 4, clean: bool = False,
                 noise: str = "gauss", other_model: int = 0):
        self.c, self.seed, self.weeks, self.clean, self.noise = committed, seed, weeks, clean, noise
        self.rng = random.Random(seed)
        self.nodes = [(node_name(i), gpus_of(i), "NVIDIA H100 80GB HBM3") for i in range(1, nodes + 1)]
        self.nodes += [(f"h200-{i:02d}", 8, "NVIDIA H200") for i in range(1, other_model + 1)]
        self.own = {}     # (node, gpu, peer, metric) -> u
        self.serial = {}  # (node, gpu, era) -> (serial, uuid)
        for node, n, _ in self.nodes:
            for g in range(n):
                for era in (0, 1):
                    self.serial[(node, g, era)] = (f"1652{self.rng.randrange(10**9):09d}",
                                                   f"GPU-{_uuid.UUID(int=self.rng.getrandbits(128), version=4)}")
        h100 = [(node, n) for node, n, model in self.nodes if model.endswith("H100 80GB HBM3")]
        picks = self.rng.sample(h100, 5)
        self.degraded = [(picks[0][0], self.rng.randrange(picks[0][1]), DEGRADED[0]),
                         (picks[1][0], self.rng.randrange(picks[1][1]), DEGRADED[1])]
        a, b = sorted(self.rng.sample(range(picks[2][1]), 2))
        self.slow_pair = (picks[2][0], a, b)
        self.drifting = (picks[3][0], self.rng.randrange(picks[3][1]))
        self.swapped = (picks[4][0], self.rng.randrange(picks[4][1]))

    def draw(self) -> float:
        if self.noise == "t3":
            # Student's t, 3 degrees of freedom, scaled to a standard normal's MAD (0.6745; t3's is 0.7649).
            z = self.rng.gauss(0, 1)
            chi = sum(self.rng.gauss(0, 1) ** 2 for _ in range(3))
            return z / math.sqrt(chi / 3) * 0.6745 / 0.7649
        return self.rng.gauss(0, 1)

    def u(self, node, gpu, peer, metric, era=0) -> float:
        key = (node, gpu, peer, metric, era)
        if key not in self.own:
            self.own[key] = self.draw()
        return self.own[key]

    def planted(self) -> dict:
        """What memlab-fleet must find: the outliers and drifts planted, as (node, gpu, peer, metric)."""
        head = {"schema": SCHEMA, "kind": "planted", "seed": self.seed, "nodes": len(self.nodes),
                "weeks": self.weeks}
        if self.clean:
            return {**head, "outliers": [], "drifts": [], "faults": [], "not_faults": []}
        outl = [(node, g, None, m) for node, g, _ in self.degraded for m in ("hbm_copy", "hbm_read")]
        node, a, b = self.slow_pair
        outl += [(node, a, b, self.c.pair_metric), (node, b, a, self.c.pair_metric)]
        drifts = [(self.drifting[0], self.drifting[1], None, m) for m in ("hbm_copy", "hbm_read")]
        return {**head, "outliers": sorted(outl, key=str), "drifts": drifts, "faults": [
            f"{node} GPU {g}: HBM degraded, hbm_copy and hbm_read x {k}" for node, g, k in self.degraded] + [
            f"{self.slow_pair[0]} GPUs {a} and {b}: slow link, {self.c.pair_metric} x {SLOW_LINK} both ways",
            f"{self.drifting[0]} GPU {self.drifting[1]}: hbm_copy and hbm_read fall {100 * DRIFT_A_WEEK:g}% a week"],
            "not_faults": [f"every GPU from week {FLEET_CHANGE[1]}: {FLEET_CHANGE[0]} x {FLEET_CHANGE[2]}",
                           f"{self.swapped[0]} GPU {self.swapped[1]}: swapped at week {SWAP[1]} for a GPU with "
                           f"{SWAP[0]} x {SWAP[2]}"]}

    # -- one check file ----------------------------------------------------------------------------------------------
    def factor(self, node, gpu, peer, metric, week) -> float:
        """The planted faults' and changes' factor on a figure."""
        k = 1.0
        if metric == FLEET_CHANGE[0] and week >= FLEET_CHANGE[1] and peer is None and gpu is not None:
            k *= FLEET_CHANGE[2]
        if (node, gpu) == self.swapped and metric == SWAP[0] and week >= SWAP[1]:
            k *= SWAP[2]
        if self.clean:
            return k
        for n, g, d in self.degraded:
            if (node, gpu) == (n, g) and peer is None and metric in ("hbm_copy", "hbm_read"):
                k *= d
        n, a, b = self.slow_pair
        if node == n and metric == self.c.pair_metric and {gpu, peer} == {a, b}:
            k *= SLOW_LINK
        if (node, gpu) == self.drifting and peer is None and metric in ("hbm_copy", "hbm_read"):
            k *= 1 - DRIFT_A_WEEK * week
        return k

    def value(self, node, gpu, peer, metric, week, model) -> float:
        m, s = self.c.median[metric], self.c.spread[metric]
        era = 1 if (node, gpu) == self.swapped and week >= SWAP[1] else 0
        x = m * (1 + s / math.sqrt(2) * self.u(node, gpu, peer, metric, era) + s / math.sqrt(2) * self.draw())
        if not model.endswith("H100 80GB HBM3") and metric.startswith("hbm_") and metric != "hbm_latency":
            x *= 1.4  # another model: another figure (an H200's HBM3e)
        return x * self.factor(node, gpu, peer, metric, week)

    def document(self, i: int, week: int) -> dict:
        node, n, model = self.nodes[i]
        t = self.c.template
        created = START + _dt.timedelta(days=7 * week, seconds=15 * i)
        gpus = []
        for g in range(n):
            era = 1 if (node, g) == self.swapped and week >= SWAP[1] else 0
            serial, uid = self.serial[(node, g, era)]
            gpus.append({**t["gpus"][0], "ordinal": g, "name": model, "bus_id": f"0000:{0x18 + 0x10 * g:02x}:00.0",
                         "link": "NVSwitch", "serial": serial, "uuid": uid})
            if self.c.v2:
                gpus[-1].update(driver="580.95.05", runtime_version=13000, busy=False, processes=[])
        rows = []
        for g in range(n):
            for tr in self.c.gpu_rows:
                rows.append(self._row(tr, node, n, g, None, week, model))
        for a in range(n):
            for b in range(n):
                if a != b:
                    rows += [self._row(tr, node, n, a, b, week, model) for tr in self.c.pair_rows]
        rows += [self._row(tr, node, n, None, None, week, model) for tr in self.c.node_rows]
        judge(rows, self.c.faults if self.c.v2 else None)
        counts = {}
        for r in rows:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        status = 1 if "fail" in counts else 5 if ("warn" in counts or "sibling" in counts) else 0
        day = created.strftime("%Y-%m-%d")
        seconds = t["seconds"] * n / 4
        doc = {**t, "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": node,
               "command": f"memlab check --out checks/{day}/{node}.json", "seconds": seconds,
               "link": "NVSwitch", "gpus": gpus, "rows": rows, "counts": counts, "exit_status": status}
        if self.c.v2:
            actions = {r["action"] for r in rows if r.get("action")}
            doc.update(started=(created - _dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       replay=None, interrupted=False, interrupted_by=None, busy=False,
                       action=next((a for a in URGENCY if a in actions), None))
        return doc

    def _row(self, tr: dict, node, n, gpu, peer, week, model) -> dict:
        import re

        r = copy.copy(tr)
        r["gpu"], r["peer"] = gpu, peer
        # memlab.check/2 writes the whole command: this GPU's, this pair's, this node's
        cmd = r.get("measured_by") or ""
        if gpu is not None:
            cmd = re.sub(r"--device \d+", f"--device {gpu}", cmd)
        if peer is not None:
            cmd = re.sub(r"--peer \d+", f"--peer {peer}", cmd)
        r["measured_by"] = re.sub(r"--gpus \d+", f"--gpus {n}", cmd)
        if r["unit"] in RULE_UNITS or r["value"] is None:
            return r
        v = self.value(node, gpu, peer, r["metric"], week, model)
        r["value"] = v
        r["shown"] = f"{v:.1f} {r['unit']}"
        r["ratio"] = v / r["reference"] if r["reference"] else None
        if not model.endswith("H100 80GB HBM3"):
            r["reference"] = r["warn_at"] = r["fail_at"] = r["ratio"] = None
        return r

    def documents(self):
        """(path, document) of every check file: <date>/<node>.json."""
        for week in range(self.weeks):
            for i in range(len(self.nodes)):
                doc = self.document(i, week)
                yield f"{doc['created'][:10]}/{doc['machine']}.json", doc

    def checks(self) -> list[Check]:
        return [from_document(doc, path) for path, doc in self.documents()]


def judge(rows: list[dict], faults: dict | None = None) -> None:
    """Each row's verdict and note as memlab check gives them: the reference's lines, then the sibling margin; with
    `faults` (memlab.check/2), a flagged row's fault code, action, what it points at and reason."""
    groups = {}
    for r in rows:
        if r["value"] is not None and r["unit"] not in RULE_UNITS and r["scope"] != "node":
            groups.setdefault((r["metric"], r["scope"]), []).append(r["value"])
    medians = {k: statistics.median(v) for k, v in groups.items()}
    for r in rows:
        if r["value"] is None or r["unit"] in RULE_UNITS:
            continue
        v, hib = r["value"], r["higher_is_better"]
        beyond = (lambda line: v < line) if hib else (lambda line: v > line)
        word = "below" if hib else "above"
        if r["reference"] is None:
            r["verdict"], r["note"] = "no_reference", ""
        elif beyond(r["fail_at"]):
            r["verdict"], r["note"] = "fail", f"{word} the failure line, {r['fail_at']:.1f} {r['unit']}"
        elif beyond(r["warn_at"]):
            r["verdict"], r["note"] = "warn", f"{word} the warning line, {r['warn_at']:.1f} {r['unit']}"
        else:
            r["verdict"], r["note"] = "pass", ""
        med = medians.get((r["metric"], r["scope"]))
        if r["verdict"] in ("pass", "no_reference") and med and len(groups[(r["metric"], r["scope"])]) > 1:
            worse = (med - v) / med if hib else (v - med) / med
            if worse > SIBLING:
                r["verdict"] = "sibling"
                r["note"] = (f"{100 * worse:.1f}% {word} the node's median ({med:.1f} {r['unit']}), beyond the "
                             f"{100 * SIBLING:g}% sibling margin")
    if faults is None:
        return
    for r in rows:
        flagged = r["verdict"] in ("fail", "warn", "sibling")
        code, points, on_fail = faults.get(r["metric"], (None, None, None)) if flagged else (None, None, None)
        action = (on_fail if r["verdict"] == "fail" else "monitor") if code else None
        where = ("node" if r["scope"] == "node" else f"GPU {r['gpu']}->{r['peer']}" if r["scope"] == "pair"
                 else f"GPU {r['gpu']}")
        r.update(fault=code, action=action, points_at=points,
                 reason=f"{where} {r['metric']} {r['verdict']}: {r['shown']} {r['note']} ({points}): {action}"
                 if code else None)


def write(fleet: Fleet, out: str) -> int:
    n = 0
    for path, doc in fleet.documents():
        full = os.path.join(out, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
        n += 1
    return n


def false_positives(seeds: int, noise: str = "gauss", nodes: int = 64, weeks: int = 4,
                    results: str = RESULTS) -> dict:
    """Clean fleets of seeds 1..`seeds` judged by memlab-fleet: how many values and histories it judged, and what it
    flagged (every flag on a clean fleet is a false positive: the fleet-wide change and the swap are in them too)."""
    from . import fleet as fl

    committed = Committed(results)
    judged = histories = 0
    flagged = []
    for seed in range(1, seeds + 1):
        f = fl.judge(Fleet(committed, seed, nodes, weeks, clean=True, noise=noise).checks())
        judged += f.judgements
        histories += f.histories
        flagged += [{"seed": seed, "kind": x.kind, "where": x.where, "metric": x.metric,
                     "worse_by": round(x.worse_by, 5), "threshold": round(x.threshold, 5)} for x in f.findings]
    return {"schema": SCHEMA, "kind": "false_positives",
            "what": "memlab-fleet on clean fleets made by memlab_tools.fleet_sim", "noise": noise, "seeds": seeds,
            "nodes": nodes, "weeks": weeks, "values_judged": judged, "histories_judged": histories,
            "outliers_flagged": sum(x["kind"] == "outlier" for x in flagged),
            "drifts_flagged": sum(x["kind"] == "drift" for x in flagged), "flagged": flagged,
            "rule": fl.RULE.text, "spreads": committed.spread, "sources": committed.sources}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m memlab_tools.fleet_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="the folder to write the fleet's check files into")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--weeks", type=int, default=4)
    ap.add_argument("--clean", action="store_true", help="no fault planted")
    ap.add_argument("--other-model", type=int, default=0, metavar="N", help="N nodes of another GPU model as well")
    ap.add_argument("--noise", choices=("gauss", "t3"), default="gauss")
    ap.add_argument("--planted", metavar="FILE", help="what was planted, as JSON")
    ap.add_argument("--false-positives", type=int, metavar="SEEDS", help="judge clean fleets of seeds 1..SEEDS")
    ap.add_argument("--json", metavar="FILE", help="with --false-positives: the count as JSON")
    ap.add_argument("--results", metavar="DIR", default=RESULTS,
                    help="the repository's docs/results, where the committed checks are (default: the source tree's)")
    a = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(a.results, FOUR[0])):
        print(f"{ap.prog}: --results: {a.results} does not hold {FOUR[0]} (run it from a memlab checkout, or name "
              "its docs/results)", file=sys.stderr)
        return 2
    if a.false_positives:
        fp = false_positives(a.false_positives, a.noise, a.nodes, a.weeks, a.results)
        text = json.dumps(fp, indent=1) + "\n"
        if a.json:
            with open(a.json, "w", encoding="utf-8") as f:
                f.write(text)
        print(f"{fp['seeds']} clean fleets ({a.noise}): {fp['outliers_flagged']} outliers flagged among "
              f"{fp['values_judged']} values, {fp['drifts_flagged']} drifts among {fp['histories_judged']} histories")
        return 0
    if not a.out:
        ap.error("OUT is needed (or --false-positives)")
    fleet = Fleet(Committed(a.results), a.seed, a.nodes, a.weeks, a.clean, a.noise, a.other_model)
    n = write(fleet, a.out)
    planted = fleet.planted()
    if a.planted:
        with open(a.planted, "w", encoding="utf-8") as f:
            json.dump(planted, f, indent=1)
    print(f"wrote {n} check files of {len(fleet.nodes)} nodes over {a.weeks} weeks into {a.out} (seed {a.seed})")
    for line in planted.get("faults", []) + [f"not a fault: {x}" for x in planted.get("not_faults", [])]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
