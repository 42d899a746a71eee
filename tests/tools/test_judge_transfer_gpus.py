#!/usr/bin/env python3
"""tools/gpu/judge_transfer_gpus.py on committed runs (4 x H100, docs/results/h100x4/transfer) and on files made
here: nccl-tests' output and nvbandwidth's matrices read right, the median of several nccl-tests cycles, each
rule's verdict, the exit status. No GPU."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "gpu"))
import judge_transfer_gpus as judge  # noqa: E402

RUNS = os.path.join(ROOT, "docs", "results", "h100x4", "transfer")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu", "judge_transfer_gpus.py"), *args],
                          capture_output=True, text=True)


# nccl-tests' output: the size, then out of place and in place (N/A where a test has no in-place form).
LOG = """#### all_reduce_perf -g 2 -b 1M -e 1M
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
     1048576       1048576     uint8     sum      -1    20.00   52.43   52.43       0    21.00   49.93   49.93       0
#### alltoall_perf -g 2 -b 1M -e 1M
     1048576        524288     uint8    none      -1    30.00   34.95   17.48       0      N/A     N/A     N/A     N/A
"""
parsed = judge.parse_nccl_tests(LOG)
check(parsed.get(("all_reduce", 2, "out_of_place", 1 << 20)) == 20.0, f"out of place read: {parsed}")
check(parsed.get(("all_reduce", 2, "in_place", 1 << 20)) == 21.0, "in place read")
check(("alltoall", 2, "in_place", 1 << 20) not in parsed, "N/A is no figure")

# The rules, point by point.
check(judge.within(102.9, 100, 1 << 20, "graph") == (True, True, "3%"), "graph: 2.9% holds from 1 MiB")
check(judge.within(103.1, 100, 1 << 20, "graph")[1] is False, "graph: 3.1% does not")
check(judge.within(11.9, 10, 4096, "graph")[1] is True, "graph below 1 MiB: 2 us holds")
check(judge.within(13, 10, 4096, "graph")[1] is False, "graph below 1 MiB: 3 us and 30% do not")
check(judge.within(50, 10, 1 << 20, "host")[0] is False, "host below 16 MiB: reported, not judged")

with tempfile.TemporaryDirectory() as tmp:
    # memlab's figure against the MEDIAN of three cycles (19, 20, 40 us: 20): 20.5 holds, and two memlab runs
    # 2.5% apart do not.
    logs = []
    for i, us in enumerate((19.0, 20.0, 40.0)):
        path = os.path.join(tmp, f"c{i}.log")
        with open(path, "w") as f:
            f.write(LOG.replace("20.00   52.43", f"{us:.2f}   52.43"))
        logs.append(path)

    def memlab_file(name, us):
        path = os.path.join(tmp, name)
        rec = {"lab": "transfer", "variant": "nccl_all_reduce", "status": "ok",
               "params": {"gpus": 2, "placement": "out_of_place", "n": 1 << 20},
               "nccl_tests": {"median_ms": us / 1e3}}
        with open(path, "w") as f:
            json.dump({"git_sha": "abc", "results": [rec]}, f)
        return path

    a, b = memlab_file("a.json", 20.5), memlab_file("b.json", 21.0)
    r = run("collectives", "--mode", "graph", "--memlab", a, "--nccl-tests", *logs)
    check(r.returncode == 0 and "1 of 1 judged points hold" in r.stdout + r.stderr, f"median of cycles:\n{r.stdout}{r.stderr}")
    check("| 20.00 (19.0/20.0/40.0) |" in r.stdout, f"the cycles listed:\n{r.stdout}")
    r = run("collectives", "--mode", "graph", "--memlab", a, b, "--nccl-tests", *logs)
    check(r.returncode == 1 and "2.4%" in r.stdout, f"two runs 2.4% apart fail:\n{r.stdout}{r.stderr}")

# Committed runs: the copy engine against nvbandwidth, pair by pair (4 GiB from GPU 0, nvbandwidth at 1 GiB:
# within 1%, but under 85% of the roof those files recorded, NVML's line rate).
r = run("pairs", "--memlab", os.path.join(RUNS, "pairs_4gib.json"), "--nvbandwidth", os.path.join(RUNS, "nvbandwidth.log"))
out = r.stdout
check("| peer_ce | 4 GiB | 0->1 | 398.3 | 83.3 | memcpy_write_ce | 398.21 | 1.0002 | **no** |" in out, f"peer_ce 0->1:\n{out}")
check("| peer_sm_read | 4 GiB | 1->0 | 376.5 |" in out and "memcpy_read_sm | 376.42 |" in out, "SM reads: the reader's row")
check("bidirectional_memcpy_write_ce write1 | 393.77" in out, "both ways: the peer's own push is write1")
check(r.returncode == 1, "the line-rate roof: below 85%, does not hold")

r = run("ranks", "--one-process", os.path.join(RUNS, "repeat_one_process_1.json"),
        os.path.join(RUNS, "repeat_one_process_2.json"), os.path.join(RUNS, "repeat_one_process_3.json"),
        "--launcher", "torchrun", os.path.join(RUNS, "repeat_torchrun_1.json"),
        os.path.join(RUNS, "repeat_torchrun_2.json"), os.path.join(RUNS, "repeat_torchrun_3.json"))
check("points from 64 MiB hold" in r.stderr and "| torchrun | nccl_all_reduce | 4 | 64 MiB |" in r.stdout,
      f"ranks:\n{r.stdout}{r.stderr}")

r = run("pairs", "--memlab", "/nonexistent.json", "--nvbandwidth", os.path.join(RUNS, "nvbandwidth.log"))
check(r.returncode != 0 and "Traceback" not in r.stderr, f"a missing file: one line, no traceback:\n{r.stderr}")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("judge_transfer_gpus: every check holds")
