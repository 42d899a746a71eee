#!/usr/bin/env python3
"""Checks of the hierarchy lab's device run (tools/gpu/device_hierarchy.sh), from the memlab.results/1 files:

    hierarchy_checks.py plateaus RUN1.json RUN2.json     # every latency plateau within 3% in both runs
    hierarchy_checks.py babelstream WORK RES N...         # memlab's streams against BabelStream's (same n)
    hierarchy_checks.py figures FILE...                   # one line per record: status, GB/s, latency figures
    hierarchy_checks.py l1bw FILE...                      # dot / smem_dot in B/clk/SM: cold, batch, graph; best vs 120
    hierarchy_checks.py compare OLD.json NEW.json         # the same cases before and after a change: GB/s and ratio
"""
import csv
import io
import json
import sys


def latencies(path):
    out = {}
    for r in json.load(open(path))["results"]:
        m = r.get("measured", {})
        if r["status"] == "ok" and "cycles_per_load" in m:
            out[(r["variant"], r["params"]["n"])] = (m["cycles_per_load"]["value"], m["ns_per_load"]["value"])
    return out


def plateaus(run1, run2):
    a, b = latencies(run1), latencies(run2)
    worst, bad = 0.0, 0
    print(f"{'variant':16} {'bytes':>12} {'run1 cyc':>9} {'run2 cyc':>9} {'diff%':>6} {'run1 ns':>8} {'run2 ns':>8}")
    for k in sorted(a):
        if k not in b:
            continue
        (c1, n1), (c2, n2) = a[k], b[k]
        d = 100 * abs(c1 - c2) / max(c1, 1e-9)
        worst, bad = max(worst, d), bad + (d > 3)
        print(f"{k[0]:16} {4 * k[1]:>12} {c1:9.2f} {c2:9.2f} {d:6.2f} {n1:8.2f} {n2:8.2f}")
    print(f"worst difference {worst:.2f}% ({bad} over 3%)")
    return 1 if bad or not a else 0


def babelstream(work, res, sizes):
    bad = 0
    for n in sizes:
        text = open(f"{work}/babelstream_{n}.log").read()
        lines = [line for line in text.splitlines() if line.count(",") >= 4]
        table = list(csv.DictReader(io.StringIO("\n".join(lines))))
        col = [k for k in table[0] if k.startswith("max_") and k.endswith("_per_sec")][0]  # max_MB_per_sec
        scale = {"max_MB_per_sec": 1e-3, "max_GB_per_sec": 1.0}.get(col, 1e-3)
        bs = {r["function"]: float(r[col]) * scale for r in table}
        ml = {r["variant"]: r for r in json.load(open(f"{res}/hierarchy_streams_{n}.json"))["results"] if r["status"] == "ok"}
        for ours, theirs in (("dot", "Dot"), ("copy", "Copy"), ("add", "Add"), ("triad", "Triad")):
            r, b = ml.get(ours), bs.get(theirs, 0.0)
            a = r["gbps"] if r else 0.0
            best = r["bytes"] / (r["cold"]["min_ms"] * 1e6) if r and r["cold"]["min_ms"] > 0 else 0.0
            ok = a >= 0.99 * b
            bad += not ok
            print(f"n={n:>10} {ours:6} memlab median {a:8.1f} best {best:8.1f} GB/s | BabelStream {theirs:6} "
                  f"best {b:8.1f} GB/s | memlab median / BabelStream best {100 * a / max(b, 1e-9):6.1f}% "
                  f"{'ok' if ok else 'BELOW'}")
    return 1 if bad else 0


def figures(paths):
    for p in paths:
        try:
            d = json.load(open(p))
        except Exception as e:  # a step that failed leaves no file
            print(p, e)
            continue
        print("#", p.split("/")[-1])
        for r in d["results"]:
            m = r.get("measured", {})
            lat = " ".join(f"{k}={v['value']:.1f}{v['unit']}" for k, v in m.items()
                           if not k.startswith("hist_") and not (k.startswith("sm") and k[2].isdigit()))
            gbps = r.get("batch_gbps", 0) if r["roof"]["name"] in ("l2", "smem") else r["gbps"]
            print(f"{r['variant']:16} bytes={4 * r['params']['n']:>11} {r['status']:7} GB/s={gbps:9.1f} "
                  f"clock={r.get('sm_clock_mhz', 0):6.0f} roof={r['roof']['name']:5} {lat} {r['note'][:70]}")
    return 0


def per_sm_clock(r, gbps):
    """Bytes per clock per SM: GB/s over the SM clock read during the case and the SMs the plan kept busy."""
    clock, sms = r.get("sm_clock_mhz", 0), r.get("model", {}).get("sms_busy", 0)
    return gbps * 1e3 / (clock * sms) if clock and sms else 0.0


def l1bw(paths, goal=120.0):
    """The L1 (dot) and shared-memory (smem_dot) figures the lab page reports: every record in B/clk/SM from its
    cold, batch and graph medians (the batch one is the acceptance's: back-to-back launches, the data
    stays where it lives), and each rung's best batch figure against the goal."""
    best, failed = {}, 0
    print(f"{'variant':9} {'array':>9} {'ilp':>3} {'cps':>3} {'grid':>5} {'passes':>6} {'MHz':>5} "
          f"{'cold':>6} {'batch':>6} {'graph':>6} {'us/launch':>9} status")
    for p in paths:
        for r in json.load(open(p))["results"]:
            if r["variant"] not in ("dot", "smem_dot"):
                continue
            q = r["params"]
            if r["status"] != "ok":
                failed += r["status"] != "skipped"  # a shape the SM cannot hold is refused, not failed
                print(f"{r['variant']:9} {4 * q['n']:>9} {q['ilp']:>3} {q['ctas_per_sm']:>3} {r['status']} {r['note'][:80]}")
                continue
            cold, batch = per_sm_clock(r, r["gbps"]), per_sm_clock(r, r.get("batch_gbps", 0))
            graph = per_sm_clock(r, r.get("graph_gbps", 0))
            print(f"{r['variant']:9} {4 * q['n']:>9} {q['ilp']:>3} {q['ctas_per_sm']:>3} {r['policy']['grid']:>5} "
                  f"{int(r['model']['passes']):>6} {r['sm_clock_mhz']:5.0f} {cold:6.1f} {batch:6.1f} {graph:6.1f} "
                  f"{r['batch']['median_ms'] * 1e3:9.1f} {r['status']}")
            if batch > best.get(r["variant"], (0,))[0]:
                best[r["variant"]] = (batch, 4 * q["n"], q["ilp"], q["ctas_per_sm"], cold, graph)
    for v, (b, size, ilp, cps, cold, graph) in sorted(best.items()):
        print(f"best {v:9} {b:6.1f} B/clk/SM (batch; cold {cold:.1f}, graph {graph:.1f}) at {size} B arrays, "
              f"--ilp {ilp} --ctas-per-sm {cps}: {'meets' if b >= goal else 'BELOW'} {goal:.0f}")
    return 1 if failed or not best else 0


def achieved(r):
    """The figure the page reports: batch for L2- and L1/shared-resident cases, cold (L2 flushed) for DRAM ones."""
    return r.get("batch_gbps", 0) if r["roof"]["name"] in ("l2", "smem") else r["gbps"]


def compare(old, new):
    """Each case of NEW that OLD has too (lab, variant, params): GB/s before and after."""
    key = lambda r: (r["variant"], tuple(sorted(r["params"].items())))
    before = {key(r): r for r in json.load(open(old))["results"] if r["status"] == "ok"}
    failed = 0
    for r in json.load(open(new))["results"]:
        if r["status"] != "ok":
            failed += r["status"] != "skipped"
            print(f"{r['variant']:11} n={r['params']['n']:>10} {r['status']} {r['note'][:80]}")
            continue
        b = before.get(key(r))
        if not b:
            continue
        a, z = achieved(b), achieved(r)
        print(f"{r['variant']:11} n={r['params']['n']:>10} roof={r['roof']['name']:5} before {a:9.1f} after {z:9.1f} GB/s "
              f"({100 * z / max(a, 1e-9):6.1f}%)")
    return 1 if failed else 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "plateaus":
        sys.exit(plateaus(*args))
    if cmd == "babelstream":
        sys.exit(babelstream(args[0], args[1], [int(a) for a in args[2:]]))
    if cmd == "l1bw":
        sys.exit(l1bw(args))
    if cmd == "compare":
        sys.exit(compare(*args))
    sys.exit(figures(args))
