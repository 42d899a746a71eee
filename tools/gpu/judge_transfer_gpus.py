#!/usr/bin/env python3
"""The transfer lab's runs on several GPUs (tools/gpu/measure_transfer_gpus.sh) held to their rules, each as
a Markdown table with a verdict a row and a summary line; no GPU needed (it reads the files the runs wrote).

  judge_transfer_gpus.py collectives --mode graph|host --memlab A.json [B.json] --nccl-tests C1.log ... [-o X.md]
      memlab's nccl-tests-method figure against the median of nccl-tests' cycles (each log one cycle: every
      `#### <test>_perf -g N` section nccl-tests printed), point by point. graph: within 3% from 1 MiB, within
      5% or 2 us below; host: within 3% from 16 MiB, below reported and not judged (the host's launch path,
      which moves between calls by more than that). With two memlab files, each is judged and the two must
      agree within 2%.
  judge_transfer_gpus.py pairs --memlab PAIRS.json --nvbandwidth NVB.log [-o X.md]
      every ordered pair and direction of the peer copies: GB/s a direction against the NVLink data rate (the
      copy engine at least 85%), and against nvbandwidth's matching test at the same buffer size (the copy
      engine within 1%): peer_ce = device_to_device_memcpy_write_ce[src][dst], peer_ce_bidir = the
      bidirectional write test (each direction), peer_sm_read = memcpy_read_sm[dst][src], peer_sm_write =
      memcpy_write_sm[src][dst], peer_sm_bidir = the bidirectional write SM test.
  judge_transfer_gpus.py ranks --one-process R1.json R2.json R3.json --launcher NAME F1.json F2.json F3.json ...
      one process per GPU against one process: the median of the rounds of each, within 3% from 64 MiB.

Exit 0 when every judged row holds, 1 otherwise, 2 on unreadable input.
"""
import argparse
import json
import re
import statistics
import sys
from collections import defaultdict

MIB = 1 << 20
# memlab's rung -> nccl-tests' binary
NCCL_TEST = {"nccl_all_reduce": "all_reduce", "nccl_all_gather": "all_gather",
             "nccl_reduce_scatter": "reduce_scatter", "nccl_broadcast": "broadcast",
             "nccl_all_to_all": "alltoall", "nccl_sendrecv": "sendrecv"}


def size_text(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= m and n % m == 0:
            return f"{n // m} {unit}"
    return f"{n} B"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"judge_transfer_gpus: {path}: {e}")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        sys.exit(f"judge_transfer_gpus: {path}: {e}")


def ok_records(doc, variants=None):
    for r in doc.get("results", []):
        if r.get("status") == "ok" and r.get("lab") == "transfer" and (variants is None or r["variant"] in variants):
            yield r


def parse_nccl_tests(text):
    """{(test, gpus, placement, size): us} from nccl-tests' output; sections start `#### <test>_perf -g N`
    (or carry nccl-tests' own `# Collective test starting: <test>_perf` and `nGpus N` lines)."""
    out = {}
    test, gpus = None, 0
    for line in text.splitlines():
        m = re.match(r"#+\s*(\w+)_perf\b.*?-g\s+(\d+)", line)
        if m:
            test, gpus = m.group(1), int(m.group(2))
            continue
        m = re.match(r"# Collective test starting: (\w+)_perf", line)
        if m:
            test = m.group(1)
            continue
        m = re.search(r"nGpus\s+(\d+)", line)
        if m and line.startswith("#"):
            gpus = int(m.group(1))
            continue
        cells = line.split()
        if test is None or len(cells) < 9 or not cells[0].isdigit():
            continue
        size = int(cells[0])
        # size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
        nums = [c for c in cells[5:]]
        for placement, at in (("out_of_place", 0), ("in_place", 4)):
            try:
                us = float(nums[at])
            except (IndexError, ValueError):
                continue  # nccl-tests prints "N/A" where a test has no in-place form
            out[(test, gpus, placement, size)] = us
    return out


def within(memlab_us, ref_us, size, mode):
    """(judged, holds, rule) for one point."""
    rel = abs(memlab_us - ref_us) / ref_us
    if mode == "graph":
        if size >= MIB:
            return True, rel <= 0.03, "3%"
        return True, rel <= 0.05 or abs(memlab_us - ref_us) <= 2.0, "5% or 2 us"
    if size >= 16 * MIB:
        return True, rel <= 0.03, "3%"
    return False, True, "reported"


def collectives(args):
    cycles = []
    for path in args.nccl_tests:
        cycles.append(parse_nccl_tests(read(path)))
    reference = defaultdict(list)
    for c in cycles:
        for key, us in c.items():
            reference[key].append(us)
    runs = []
    for path in args.memlab:
        doc = load(path)
        figures = {}
        for r in ok_records(doc, NCCL_TEST):
            if "nccl_tests" not in r:
                continue
            p = r["params"]
            key = (NCCL_TEST[r["variant"]], int(p["gpus"]), p["placement"], int(p["n"]))
            figures[key] = 1e3 * r["nccl_tests"]["median_ms"]
        runs.append((path, doc.get("git_sha", "?"), figures))
    keys = sorted(set().union(*(f.keys() for _, _, f in runs)) & set(reference))
    lines = [f"# memlab ({args.mode}-launched loop) against the median of {len(cycles)} nccl-tests cycles", "",
             "memlab files: " + ", ".join(f"{p} (commit {sha})" for p, sha, _ in runs), "",
             "| GPUs | test | placement | size | nccl-tests median us (cycles) | "
             + " | ".join(f"memlab {i + 1} us | ratio" for i in range(len(runs)))
             + (" | runs apart |" if len(runs) > 1 else " |") + " rule | holds |",
             "| ---: | --- | --- | ---: | ---: | " + " | ".join("---: | ---:" for _ in runs)
             + (" | ---: |" if len(runs) > 1 else " |") + " --- | --- |"]
    judged = held = 0
    for key in keys:
        test, gpus, placement, size = key
        ref = statistics.median(reference[key])
        cells, ok, rule, counted = [], True, "", False
        values = []
        for _, _, figures in runs:
            us = figures.get(key)
            if us is None:
                cells += ["-", "-"]
                continue
            values.append(us)
            j, h, rule = within(us, ref, size, args.mode)
            counted |= j
            ok &= h
            cells += [f"{us:.2f}", f"{us / ref:.3f}"]
        apart = ""
        if len(runs) > 1:
            if len(values) == 2:
                gap = abs(values[0] - values[1]) / min(values)
                apart = f"{100 * gap:.1f}%"
                if counted:
                    ok &= gap <= 0.02
            else:
                apart = "-"
        judged += counted
        held += counted and ok
        spread = "/".join(f"{u:.1f}" for u in reference[key])
        verdict = ("yes" if ok else "**no**") if counted else "(reported)"
        lines.append(f"| {gpus} | {test} | {placement} | {size_text(size)} | {ref:.2f} ({spread}) | "
                     + " | ".join(cells) + (f" | {apart} |" if len(runs) > 1 else " |") + f" {rule} | {verdict} |")
    summary = f"{held} of {judged} judged points hold ({len(keys)} compared)"
    lines += ["", summary]
    return lines, held == judged and judged > 0, summary


def parse_nvbandwidth(text):
    """{(test, part): {(row, col): GB/s}}; part "" for a one-way test, write1/write2/read1/read2/total."""
    out = {}
    test = None
    part = ""
    rows = None
    for line in text.splitlines():
        m = re.match(r"Running (\w+)\.", line)
        if m:
            test, part, rows = m.group(1), "", None
            continue
        m = re.search(r"\) (Read1|Read2|Write1|Write2|Total) bandwidth", line)
        if m:
            part, rows = m.group(1).lower(), None
            continue
        if re.search(r"GPU\(row\).*bandwidth \(GB/s\)", line):
            part, rows = part if "<->" in line else "", None
            continue
        cells = line.split()
        if test and cells and all(c.isdigit() for c in cells) and rows is None:
            rows = {}
            out[(test, part)] = rows
            continue
        if test and rows is not None and len(cells) > 1 and cells[0].isdigit():
            row = int(cells[0])
            for col, v in enumerate(cells[1:]):
                if v != "N/A":
                    rows[(row, col)] = float(v)
        elif not cells:
            rows = None
    return out


def pairs(args):
    doc = load(args.memlab)
    nvb = parse_nvbandwidth(read(args.nvbandwidth))
    link = doc.get("device", {}).get("link", {})
    lines = ["# Peer copies: every ordered pair and direction, against the NVLink data rate and nvbandwidth", "",
             f"memlab {args.memlab} (commit {doc.get('git_sha', '?')}); nvbandwidth {args.nvbandwidth}; NVLink "
             f"{link.get('nvlink_links', 0)} links x {link.get('nvlink_link_gbps', 0)} GB/s "
             f"({link.get('nvlink_rate_from', '?')}), line rate {link.get('nvlink_line_gbps', '-')} GB/s a link", "",
             "| rung | size | direction | memlab GB/s | % data rate | nvbandwidth test | nvbandwidth GB/s | ratio | "
             "holds |", "| --- | ---: | --- | ---: | ---: | --- | ---: | ---: | --- |"]
    judged = held = 0
    for r in ok_records(doc):
        rung = r["variant"]
        if rung not in ("peer_ce", "peer_ce_bidir", "peer_sm_read", "peer_sm_write", "peer_sm_bidir"):
            continue
        dev = int(r.get("device", doc.get("device", {}).get("ordinal", 0)))
        peer = int(r["params"]["peer"])
        ways = r.get("directions", {})
        rate = r["roof"]["value"] / max(len(ways), 1)  # the roof holds every direction the case moves
        for name, d in sorted(ways.items()):
            src, dst = (int(x) for x in name.split("->"))
            if rung == "peer_ce":
                test, cell = ("device_to_device_memcpy_write_ce", ""), (src, dst)
            elif rung == "peer_sm_write":
                test, cell = ("device_to_device_memcpy_write_sm", ""), (src, dst)
            elif rung == "peer_sm_read":
                test, cell = ("device_to_device_memcpy_read_sm", ""), (dst, src)
            else:  # both ways: each GPU writes; write2 is the row GPU's own push, write1 the other's
                kind = "ce" if rung == "peer_ce_bidir" else "sm"
                test = (f"device_to_device_bidirectional_memcpy_write_{kind}", "write2" if src == dev else "write1")
                cell = (dev, peer)
            ref = nvb.get(test, {}).get(cell)
            pct = 100 * d["gbps"] / rate if rate > 0 else 0
            copy_engine = rung.startswith("peer_ce")
            ok = True
            if copy_engine:
                judged += 1
                ok = pct >= 85 and ref is not None and abs(d["gbps"] / ref - 1) <= 0.01
                held += ok
            ratio = f"{d['gbps'] / ref:.4f}" if ref else "-"
            lines.append(f"| {rung} | {size_text(int(r['params']['n']))} | {name} | {d['gbps']:.1f} | {pct:.1f} | "
                         f"{test[0].replace('device_to_device_', '')}{' ' + test[1] if test[1] else ''} | "
                         f"{ref if ref is not None else '-'} | {ratio} | "
                         f"{('yes' if ok else '**no**') if copy_engine else '(reported)'} |")
    summary = f"{held} of {judged} copy-engine directions hold (>= 85% of the data rate, within 1% of nvbandwidth)"
    lines += ["", summary]
    return lines, held == judged and judged > 0, summary


def collective_figures(paths):
    """{(rung, gpus, size): [ms per run]} of nccl-tests' method, out of place."""
    out = defaultdict(list)
    for path in paths:
        for r in ok_records(load(path), NCCL_TEST):
            p = r["params"]
            if "nccl_tests" in r and p.get("placement") == "out_of_place":
                out[(r["variant"], int(p["gpus"]), int(p["n"]))].append(r["nccl_tests"]["median_ms"])
    return out


def ranks(args):
    base = collective_figures(args.one_process)
    lines = ["# One process per GPU against one process: medians of alternating rounds", "",
             "| launcher | rung | GPUs | size | one process ms (rounds) | launcher ms (rounds) | ratio | holds |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    judged = held = 0
    for name, *paths in args.launcher:
        theirs = collective_figures(paths)
        for key in sorted(set(base) & set(theirs)):
            rung, gpus, size = key
            a, b = statistics.median(base[key]), statistics.median(theirs[key])
            counted = size >= 64 * MIB
            ok = abs(b / a - 1) <= 0.03
            judged += counted
            held += counted and ok
            lines.append(f"| {name} | {rung} | {gpus} | {size_text(size)} | {a:.4f} ({len(base[key])}) | "
                         f"{b:.4f} ({len(theirs[key])}) | {b / a:.3f} | "
                         f"{('yes' if ok else '**no**') if counted else '(reported)'} |")
    summary = f"{held} of {judged} points from 64 MiB hold (within 3% of one process)"
    lines += ["", summary]
    return lines, held == judged and judged > 0, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("collectives")
    c.add_argument("--mode", choices=["graph", "host"], required=True)
    c.add_argument("--memlab", nargs="+", required=True)
    c.add_argument("--nccl-tests", nargs="+", required=True)
    p = sub.add_parser("pairs")
    p.add_argument("--memlab", required=True)
    p.add_argument("--nvbandwidth", required=True)
    r = sub.add_parser("ranks")
    r.add_argument("--one-process", nargs="+", required=True)
    r.add_argument("--launcher", nargs="+", action="append", required=True, metavar="NAME FILE")
    for s in (c, p, r):
        s.add_argument("-o", "--out")
    args = ap.parse_args()
    lines, ok, summary = {"collectives": collectives, "pairs": pairs, "ranks": ranks}[args.what](args)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print(("holds: " if ok else "DOES NOT HOLD: ") + summary, file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
