#!/usr/bin/env python3
"""The transfer lab's one-GPU figures of a new run against the committed ones, case by case.

    compare_transfer_one_gpu.py NEW.json COMMITTED.json [--tolerance 0.05] [--committed-axis AXIS=VALUE ...]

Cases are matched by variant and parameters. What must not move, whatever the machine, is checked and makes
the exit status 1 when it moved: a case that ran (status ok) and was not verified, a case's status (ok,
or a refusal), its bytes, its launch policy (grid, threads, vector width) and its roof's name. The figures
(cold median GB/s, algbw for a collective) are printed as new / committed with the ratio and marked
`beyond` where the ratio leaves 1 +- tolerance: host <-> device copies move by several percent between
machines and within minutes on one (the host's memory serves them), so those lines are for reading, not
a verdict. Prints one line a case, then a summary line starting `compare NEW against COMMITTED:`.

`--committed-axis placement=out_of_place`: the committed file predates the axis, and its cases ran as that
value does now; a committed case of a variant that has the axis in the new run is matched as such.
"""
import argparse
import json
import sys


def records(path, added=None):
    """The file's transfer cases by (variant, its parameters). `added`: variant -> {axis: value} for the axes
    the file predates."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for r in doc.get("results", []):
        if r.get("lab") != "transfer":
            continue
        # An axis a rung does not use reads "-" in older files and null in newer ones: left out of the key.
        params = {k: v for k, v in r.get("params", {}).items() if v not in (None, "-")}
        for k, v in (added or {}).get(r["variant"], {}).items():
            params.setdefault(k, v)
        key = (r["variant"],) + tuple(sorted((k, str(v)) for k, v in params.items()))
        out[key] = r
    return doc, out


def label(key):
    params = " ".join(f"{k}={v}" for k, v in key[1:])
    return f"{key[0]} {params}"


def compare(new_path, old_path, tolerance, committed_axes=()):
    _, new = records(new_path)
    # The axes the committed file predates, for the variants that have them now.
    added = {}
    for key in new:
        for axis, value in committed_axes:
            if axis in dict(key[1:]):
                added.setdefault(key[0], {})[axis] = value
    _, old = records(old_path, added)
    broken, lines, ratios, beyond = [], [], [], []
    for key, r in new.items():
        status = r.get("status", "")
        if status == "ok" and not r.get("verified", False):
            broken.append(f"{label(key)}: ran but not verified")
        o = old.get(key)
        if o is None:
            lines.append(f"  {label(key)}: {status}; no committed case to compare")
            continue
        if (status == "ok") != (o.get("status") == "ok"):
            broken.append(f"{label(key)}: status {status!r}, committed {o.get('status')!r}")
            continue
        if status != "ok":
            continue
        for field in ("bytes",):
            if r.get(field) != o.get(field):
                broken.append(f"{label(key)}: {field} {r.get(field)} against {o.get(field)}")
        if r.get("policy") != o.get("policy"):
            broken.append(f"{label(key)}: policy {r.get('policy')} against {o.get('policy')}")
        if (r.get("roof") or {}).get("name") != (o.get("roof") or {}).get("name"):
            broken.append(f"{label(key)}: roof {r.get('roof')} against {o.get('roof')}")
        g, go = r.get("gbps") or 0.0, o.get("gbps") or 0.0
        if go <= 0:
            continue
        ratio = g / go
        ratios.append(ratio)
        mark = ""
        if abs(ratio - 1) > tolerance:
            mark = "  beyond"
            beyond.append(label(key))
        lines.append(f"  {label(key)}: {g:.2f} / {go:.2f} GB/s = {ratio:.3f}{mark}")
    missing = [label(k) for k in old if k not in new]
    print(f"{new_path} against {old_path}")
    for line in lines:
        print(line)
    for b in broken:
        print(f"  MOVED: {b}")
    ratios.sort()
    spread = f"ratios {ratios[0]:.3f}-{ratios[-1]:.3f}, median {ratios[len(ratios) // 2]:.3f}" if ratios else "no ratios"
    print(
        f"compare {new_path} against {old_path}: {len(ratios)} figures compared, {spread}, {len(beyond)} beyond +-{tolerance:.0%}"
        f" (noise between machines; see the lines), {len(broken)} moved that must not"
        f" (verified, status, bytes, policy, roof), {len(missing)} committed cases not in the new run"
    )
    return 1 if broken else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new")
    ap.add_argument("committed")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--committed-axis", action="append", default=[], metavar="AXIS=VALUE",
                    help="an axis the committed file predates, and the value its cases ran as")
    a = ap.parse_args()
    axes = []
    for text in a.committed_axis:
        axis, eq, value = text.partition("=")
        if not eq or not axis or not value:
            ap.error(f"--committed-axis: {text!r} is not AXIS=VALUE")
        axes.append((axis, value))
    try:
        return compare(a.new, a.committed, a.tolerance, axes)
    except (OSError, ValueError, KeyError) as e:
        print(f"compare_transfer_one_gpu: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
