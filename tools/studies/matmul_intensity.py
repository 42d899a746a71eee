#!/usr/bin/env python3
"""Arithmetic intensity of each matmul case from ncu's DRAM counters (not part of the build).

Reads the raw CSV of `ncu --csv --page raw --log-file NCU.csv ... memlab run matmul --profile ...
--out RUN.json` and that run's results JSON. Under --profile each case launches its kernel twice
(the verified run, then the timed one); ncu profiled both, in case order, and flushed the caches
before each. The second launch of each case is the one reported. Writes CSV to stdout:

  n, m, k, variant, kernel, flops, dram_read_bytes, dram_write_bytes, dram_bytes_over_minimum,
  flop_per_dram_byte, l2_bytes, flop_per_l2_byte, shared_wavefronts_per_load, ncu_time_ns, ncu_sm_hz

  python3 tools/studies/matmul_intensity.py docs/results/h100/matmul/ncu_counters.csv \
      docs/results/h100/matmul/ncu_profile_run.json > docs/results/h100/matmul/intensity.csv
"""
import csv
import json
import sys


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def main(ncu_csv, run_json):
    rows = list(csv.reader(open(ncu_csv)))
    head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    names = rows[head]
    launches = [dict(zip(names, r)) for r in rows[head + 2:]]
    cases = [r for r in json.load(open(run_json))["results"] if r["status"] == "ok"]
    if len(launches) != 2 * len(cases):
        sys.exit(f"{len(launches)} profiled launches for {len(cases)} cases: expected two each")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["n", "m", "k", "variant", "kernel", "flops", "dram_read_bytes", "dram_write_bytes",
                  "dram_bytes_over_minimum", "flop_per_dram_byte", "l2_bytes", "flop_per_l2_byte",
                  "shared_wavefronts_per_load", "ncu_time_ns", "ncu_sm_hz"])
    for i, case in enumerate(cases):
        d = launches[2 * i + 1]
        p = case["params"]
        n = p["n"]
        m, k = p["m"] or n, p["k"] or n
        read, write = number(d["dram__bytes_read.sum"]), number(d["dram__bytes_write.sum"])
        l2 = number(d["lts__t_bytes.sum"])
        loads = number(d["smsp__inst_executed_op_shared_ld.sum"])
        waves = number(d["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"])
        flops = case["flops"]
        out.writerow([n, m, k, case["variant"], d["Kernel Name"].split("(")[0], flops, int(read), int(write),
                      f"{(read + write) / case['bytes']:.3f}", f"{flops / (read + write):.1f}", int(l2),
                      f"{flops / l2:.1f}", f"{waves / loads:.2f}" if loads else "",
                      int(number(d["gpu__time_duration.sum"])), int(number(d["sm__cycles_elapsed.avg.per_second"]))])


if __name__ == "__main__":
    main(*sys.argv[1:3])
