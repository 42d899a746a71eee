#!/usr/bin/env python3
"""tools/gpu/compare_transfer_one_gpu.py (the one-GPU check's comparison) on committed runs and on copies changed
here: a file against itself moves nothing; a case whose policy, bytes or status moved, or that ran unverified,
makes the exit status 1; a figure 10% off is marked beyond the tolerance but is no failure; older files' "-" and
newer files' null for an unused axis match. No GPU."""
import copy
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOOL = os.path.join(ROOT, "tools", "gpu", "compare_transfer_one_gpu.py")
RUNS = os.path.join(ROOT, "docs", "results", "h100", "transfer")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def compare(new, old):
    return subprocess.run([sys.executable, TOOL, new, old], capture_output=True, text=True)


with open(os.path.join(RUNS, "defaults.json")) as f:
    base = json.load(f)
ran = [i for i, r in enumerate(base["results"]) if r["status"] == "ok" and r["policy"]["threads"] > 0]
check(len(ran) > 0, "defaults.json has kernel rungs that ran")

for name in ("defaults.json", "gib_pinned.json", "nccl_one_rank.json", "sweep_ce_pinned.json"):
    p = os.path.join(RUNS, name)
    o = compare(p, p)
    check(o.returncode == 0, f"{name} against itself: exit {o.returncode}\n{o.stdout}{o.stderr}")
    check(" 0 beyond" in o.stdout and " 0 moved" in o.stdout, f"{name} against itself:\n{o.stdout}")


def changed(edit):
    doc = copy.deepcopy(base)
    edit(doc["results"])
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(doc, f)
    f.close()
    o = compare(f.name, os.path.join(RUNS, "defaults.json"))
    os.unlink(f.name)
    return o


def policy(rs):
    rs[ran[0]]["policy"]["grid"] += 1


def unverified(rs):
    rs[ran[0]]["verified"] = False


def refused(rs):
    rs[ran[0]]["status"] = "skip: no"


def slower(rs):
    rs[ran[0]]["gbps"] *= 0.9


def nulls(rs):
    for r in rs:
        r["params"] = {k: (None if v == "-" else v) for k, v in r["params"].items()}


for edit, want, text in ((policy, 1, "MOVED"), (unverified, 1, "not verified"), (refused, 1, "status"),
                         (slower, 0, "0.900  beyond"), (nulls, 0, " 0 moved")):
    o = changed(edit)
    check(o.returncode == want, f"{edit.__name__}: exit {o.returncode}, wanted {want}\n{o.stdout}")
    check(text in o.stdout, f"{edit.__name__}: no {text!r} in\n{o.stdout}")

# A run with the placement axis against the committed file that predates it: matched as out of place only
# with --committed-axis, and only for the collectives (the host rungs have no placement).
with open(os.path.join(RUNS, "nccl_one_rank.json")) as f:
    later = json.load(f)
for r in later["results"]:
    r["params"]["placement"] = "out_of_place"
later["results"] += [dict(r, params=dict(r["params"], placement="in_place")) for r in later["results"]]
f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
json.dump(later, f)
f.close()
cases = len(later["results"]) // 2
o = compare(f.name, os.path.join(RUNS, "nccl_one_rank.json"))
check(f"{cases} committed cases not in the new run" in o.stdout, f"placement, no --committed-axis:\n{o.stdout}")
o = subprocess.run([sys.executable, TOOL, f.name, os.path.join(RUNS, "nccl_one_rank.json"),
                    "--committed-axis", "placement=out_of_place"], capture_output=True, text=True)
check(o.returncode == 0 and " 0 committed cases not in the new run" in o.stdout and " 0 moved" in o.stdout,
      f"placement with --committed-axis: exit {o.returncode}\n{o.stdout}{o.stderr}")
o = subprocess.run([sys.executable, TOOL, os.path.join(RUNS, "defaults.json"), os.path.join(RUNS, "defaults.json"),
                    "--committed-axis", "placement=out_of_place"], capture_output=True, text=True)
check(o.returncode == 0 and " 0 committed cases not in the new run" in o.stdout,
      f"--committed-axis leaves the host rungs alone: exit {o.returncode}\n{o.stdout}")
o = subprocess.run([sys.executable, TOOL, f.name, f.name, "--committed-axis", "placement"], capture_output=True,
                   text=True)
check(o.returncode == 2 and "--committed-axis" in o.stderr and "Traceback" not in o.stderr,
      f"--committed-axis without a value: exit 2 naming the flag: {o.returncode} {o.stderr}")
os.unlink(f.name)

o = compare(os.path.join(RUNS, "no_such_file.json"), os.path.join(RUNS, "defaults.json"))
check(o.returncode == 2 and o.stdout == "" and "compare_transfer_one_gpu:" in o.stderr and "Traceback" not in o.stderr,
      f"a missing file: one line, exit 2: {o.returncode} {o.stderr}")

for f in failures:
    print("FAIL:", f)
print(f"test_compare_transfer_one_gpu: {'FAILED' if failures else 'ok'}")
sys.exit(1 if failures else 0)
