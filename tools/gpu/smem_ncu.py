#!/usr/bin/env python3
"""The smem lab's bank model against Nsight Compute's counters, case by case.

    tools/gpu/smem_ncu.py [--memlab build/default/bin/memlab] [--ncu ncu] [--work DIR] [-- MEMLAB RUN ARGS...]
    tools/gpu/smem_ncu.py --compare DIR     (re-read DIR/ncu.csv and DIR/model.json, run nothing)

Runs `memlab run smem --profile --out DIR/model.json ARGS` under ncu (one launch per case after its
verification run, no blocking kernel), collecting for every smem kernel launch

    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum   wavefronts
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum   bank conflicts
    smsp__sass_inst_executed_op_shared_{ld,st}.sum               requests (warp instructions)

and prints, per case, the model's loads and stores (requests, wavefronts, conflicts = wavefronts -
requests x width / 4) next to the counters. The model's split into loads and stores is recomputed
here from the lab's rules (src/labs/smem/model.cpp) and checked against the total every result row
declares (hardware_bytes = wavefronts x 128): a drift between the two fails the run.
Exit status: 0 when every 4-byte case's wavefronts match exactly; 1 otherwise. Standard library only.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

METRICS = {  # ncu metric: short name
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "ld_wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "st_wavefronts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "ld_conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "st_conflicts",
    "smsp__sass_inst_executed_op_shared_ld.sum": "ld_requests",
    "smsp__sass_inst_executed_op_shared_st.sum": "st_requests",
}

# The lab's constants and rules (src/labs/smem/smem.hpp, model.cpp).
ACCESSES = 1024
CTA = 256
WIDTH = {"load_vec8": 8, "load_vec16": 16}
LOADS = {"load_stride", "padded", "swizzled", "load_vec8", "load_vec16"}
# Each variant's kernel, by a piece of its mangled name.
KERNEL = {
    "store_stride": "store_stride_kernel",
    "load_stride": "strided_patternILi4E",
    "padded": "padded_pattern",
    "swizzled": "swizzled_pattern",
    "load_vec8": "strided_patternILi8E",
    "load_vec16": "strided_patternILi16E",
    "global_strided_store": "global_strided_store_kernel",
    "smem_to_smem": "smem_to_smem_kernel",
}


def request_wavefronts(variant, stride, active):
    if active <= 0:
        return 0
    if variant in ("padded", "swizzled"):
        return 1
    width = WIDTH.get(variant, 4)
    group = 128 // width
    residues = 32 // (width // 4)
    banks = residues // math.gcd(stride, residues)
    return sum(-(-max(0, min(active - g0, group)) // banks) for g0 in range(0, 32, group))


def region_words(variant, stride):
    width = WIDTH.get(variant, 4)
    def blocks(nbytes):  # whole 1 KiB blocks (model.cpp: fill_round)
        return -(-nbytes // 1024) * 1024 // 4
    if variant in ("load_stride", "load_vec8", "load_vec16"):
        return blocks((31 * stride + 32) * width)
    return {"padded": blocks(32 * 33 * 4), "swizzled": 32 * 32}.get(variant, 0)


def model(variant, stride, n, grid):
    """(ld requests, ld wavefronts, st requests, st wavefronts) of one launch."""
    tasks, full, rem = -(-n // 32), n // 32, n % 32
    per_warp = full * request_wavefronts(variant, stride, 32) + request_wavefronts(variant, stride, rem)
    if variant in LOADS:
        fill = grid * -(-region_words(variant, stride) // 32)
        return tasks * ACCESSES, ACCESSES * per_warp, fill, fill
    if variant == "store_stride":
        return tasks, per_warp, tasks * ACCESSES, ACCESSES * per_warp
    copies = 2 if variant == "smem_to_smem" else 1
    return copies * tasks, copies * per_warp, copies * tasks, copies * per_warp


def read_launches(path):
    """ncu --csv rows -> [(kernel name, {metric: value})] in launch order."""
    launches = {}
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # skip ncu's ==PROF== lines
    for row in csv.DictReader(lines):
        key = int(row["ID"])
        name, metrics = launches.setdefault(key, (row["Kernel Name"], {}))
        if row["Metric Name"] in METRICS:
            metrics[METRICS[row["Metric Name"]]] = int(float(row["Metric Value"].replace(",", "")))
    return [launches[k] for k in sorted(launches)]


def compare(work):
    with open(os.path.join(work, "model.json")) as f:
        doc = json.load(f)
    cases = [r for r in doc["results"] if r["lab"] == "smem" and r["status"] == "ok"]
    launches = read_launches(os.path.join(work, "ncu.csv"))
    if len(launches) != 2 * len(cases):
        sys.exit(f"{len(launches)} kernel launches profiled for {len(cases)} cases (2 each expected: verify + profile)")
    col = 27  # "model counter" pairs
    head = (f"{'variant':21} {'stride':>6} {'n':>8} | {'ld requests':>{col}} {'ld wavefronts':>{col}} "
            f"{'ld conflicts':>{col}} | {'st requests':>{col}} {'st wavefronts':>{col}} {'st conflicts':>{col}} | "
            "wavefronts equal | counter - model (ld, st)")
    print(head)
    print("-" * len(head))
    bad4, bad_wide, drift, excess = [], [], [], []
    for i, r in enumerate(cases):
        v, s, n, grid = r["variant"], r["params"]["stride"], r["params"]["n"], r["policy"]["grid"]
        name, m = launches[2 * i + 1]  # the profiled launch (the first was the verification run)
        if KERNEL[v] not in name or launches[2 * i][0] != name:
            sys.exit(f"case {i} ({v}): launches {launches[2 * i][0]!r}, {name!r} are not its kernel")
        ldr, ldw, str_, stw = model(v, s, n, grid)
        if (ldw + stw) * 128 != r["hardware_bytes"]:
            drift.append(v)
        w4 = WIDTH.get(v, 4) // 4  # the loads' ideal wavefronts per request (stores are 4-byte)
        model_ld_conflicts, model_st_conflicts = ldw - ldr * w4, stw - str_
        ok = m["ld_wavefronts"] == ldw and m["st_wavefronts"] == stw
        if not ok:
            (bad4 if w4 == 1 else bad_wide).append(v)

        def pair(a, b):
            return f"{a:>12,} {b:>12,}{'  ' if a == b else ' *'}"

        print(f"{v:21} {s:>6} {n:>8} | {pair(ldr, m['ld_requests'])} {pair(ldw, m['ld_wavefronts'])} "
              f"{pair(model_ld_conflicts, m['ld_conflicts'])} | {pair(str_, m['st_requests'])} "
              f"{pair(stw, m['st_wavefronts'])} {pair(model_st_conflicts, m['st_conflicts'])} | {'yes' if ok else 'NO ':3} "
              f"             | {m['ld_wavefronts'] - ldw:+8,} {m['st_wavefronts'] - stw:+8,}")
        excess.append((v, (m["ld_wavefronts"] - ldw) / ldw if ldw else 0.0, (m["st_wavefronts"] - stw) / stw if stw else 0.0,
                       m["ld_requests"] == ldr and m["st_requests"] == str_))
    print()
    print("each column: model, then counter; model = the lab's closed form (src/labs/smem/model.cpp), counter = ncu;")
    print("'*' marks a difference;")
    print("conflicts (model) = wavefronts - requests x (width / 4 bytes).")
    print(f"4-byte cases: {len([r for r in cases if WIDTH.get(r['variant'], 4) == 4])}, "
          f"wavefronts differ in {len(bad4)}; 8/16-byte cases differing: {len(bad_wide)}")
    print(f"requests (warp instructions) equal in {sum(e[3] for e in excess)} of {len(excess)} cases")
    for kind, names in (("bank-bound rungs", LOADS | {"store_stride"}), ("copies", {"global_strided_store", "smem_to_smem"})):
        rows = [e for e in excess if e[0] in names]
        if rows:
            worst = max(max(e[1], e[2]) for e in rows)
            least = min(min(e[1], e[2]) for e in rows)
            print(f"{kind}: counter - model between {100 * least:+.3f}% and {100 * worst:+.3f}% of the model's wavefronts")
    if drift:
        print(f"model drift: this script's split does not add up to the lab's hardware_bytes for {sorted(set(drift))}")
    return 0 if not bad4 and not drift else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memlab", default="build/default/bin/memlab")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--work", default="smem-ncu")
    ap.add_argument("--compare", metavar="DIR", help="only compare DIR/ncu.csv with DIR/model.json")
    ap.add_argument("args", nargs="*", help="more `memlab run smem` arguments (after --)")
    a = ap.parse_args()
    if a.compare:
        return compare(a.compare)
    os.makedirs(a.work, exist_ok=True)
    cmd = [a.ncu, "--csv", "--log-file", os.path.join(a.work, "ncu.csv"), "--metrics", ",".join(METRICS),
           "--kernel-name-base", "mangled", "--kernel-name", "regex:labs4smem", "--print-kernel-base", "mangled",
           a.memlab, "run", "smem", "--profile", "--quiet", "--out", os.path.join(a.work, "model.json"), *a.args]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return compare(a.work)


if __name__ == "__main__":
    sys.exit(main())
