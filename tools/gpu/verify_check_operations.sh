#!/usr/bin/env bash
# memlab check as operators meet it, on one GPU (GPU 0), in about a minute (2.5 at most): what the host
# tests cannot show without a GPU. Expected seconds on one H100 in brackets.
#
#   live      memlab check --devices 0 against the committed reference: the GPU idle, not busy      [3]
#   replay    memlab check --replay of that file: the same verdicts row for row, the same exit     [<1]
#   timing    the old and the new binary's check, alternately, 3 runs each: the new one's wall time and
#             measuring time within 5% of the old one's (medians)                                    [18]
#   compute   another process computing on GPU 0 (a PyTorch bf16 matmul loop) through the check: the check
#             names it (pid, name) first, its flagged rows are busy (gpu_busy, rerun), no row blames the
#             HBM, the L2, the clock, PCIe or a link                                                 [10: 6 of them PyTorch starting]
#   memory    another process holding all but 1 GiB of GPU 0's memory: the same                     [8]
#   sigterm   SIGTERM 1.2 s into a check: exit 130, its file holds the rows measured (interrupted marked) [2]
#
#   OUT=/some/dir BIN=build/dev/bin/memlab OLD_BIN=path/to/old/memlab bash tools/gpu/verify_check_operations.sh
# BIN defaults to build/dev/bin/memlab; without OLD_BIN the timing step is skipped. Results: one file,
# $OUT/check/check_operations.tar.gz (summary.txt: one line a step, ok or UNEXPECTED; every step's output
# and check file); the summary is printed too.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/out-check-operations}
mkdir -p "$OUT/check"
D=$(mktemp -d "${TMPDIR:-/tmp}/check_operations.XXXXXX")
export PATH=/usr/local/cuda/bin:$PATH
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null || true)
export LD_LIBRARY_PATH=${NCCL_DIR:+$NCCL_DIR/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SUMMARY=$D/summary.txt
: > "$SUMMARY"
T0=$SECONDS
note() { echo "$*" | tee -a "$SUMMARY"; }
finish() {
  note "total: $((SECONDS - T0)) s"
  tar -czf "$OUT/check/check_operations.tar.gz" -C "$D" . 2>/dev/null
  rm -rf "$D"
}
trap finish EXIT

M=${BIN:-$ROOT/build/dev/bin/memlab}
OLD=${OLD_BIN:-}
{ date -u; hostname; nvidia-smi -L; nvidia-smi -q -i 0 | grep -E "Driver Version|CUDA Version|Serial|UUID"
  "$M" --version; [ -n "$OLD" ] && "$OLD" --version; } > "$D/machine.txt" 2>&1
note "machine: $(hostname), $(nvidia-smi --query-gpu=name --format=csv,noheader -i 0), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0); new $("$M" --version 2>&1 | head -n 1); old ${OLD:+$("$OLD" --version 2>&1 | head -n 1)}"
REFS=$ROOT/references

# step NAME WANTED_RCS -- command...: stdout+stderr to $D/NAME.txt; rc and seconds in the summary.
step() {
  local name=$1 want=$2
  shift 3
  local t0 rc secs verdict=ok
  t0=$(date +%s.%N)
  timeout "${STEP_LIMIT:-60}" "$@" > "$D/$name.txt" 2>&1
  rc=$?
  secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  [[ " $want " == *" $rc "* ]] || verdict="UNEXPECTED (wanted $want)"
  printf '%-10s rc=%-3s %6ss  %s\n' "$name" "$rc" "$secs" "$verdict" | tee -a "$SUMMARY"
  return 0
}

# ---- live and replay ----------------------------------------------------------------------------------
step live "0 5" -- "$M" check --devices 0 --references "$REFS" --out "$D/live.json" --out "$D/live.prom"
step replay "0 5" -- "$M" check --replay "$D/live.json" --references "$REFS" --out "$D/replay.json"
python3 - "$D/live.json" "$D/replay.json" <<'PY' | tee -a "$SUMMARY"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
va = [(r["metric"], r["gpu"], r["peer"], r["verdict"], r["fault"]) for r in a["rows"]]
vb = [(r["metric"], r["gpu"], r["peer"], r["verdict"], r["fault"]) for r in b["rows"]]
same = va == vb and a["exit_status"] == b["exit_status"]
print(f"live vs replay: {len(va)} rows, exit {a['exit_status']} and {b['exit_status']}; "
      + ("the same verdicts and faults row for row" if same else
         "DIFFERENT: " + ", ".join(f"{x}/{y}" for x, y in zip(va, vb) if x != y))
      + f"; live busy={a['busy']} processes={[p for g in a['gpus'] for p in g['processes']]}"
      + ("  -> ok" if same and not a["busy"] else "  -> UNEXPECTED"))
g = a["gpus"][0]
print(f"GPU 0: uuid {g['uuid']}, serial {g['serial'] or '(none)'}, driver {g['driver'] or '(none)'}, "
      f"CUDA {g['driver_version']}, runtime {g['runtime_version']}; check {a['seconds']:.2f} s")
PY

# ---- check's own time: old binary against new, alternately -----------------------------------------
if [ -n "${OLD:-}" ] && [ -x "$OLD" ]; then
  python3 - "$OLD" "$M" "$REFS" "$D" <<'PY' | tee -a "$SUMMARY"
import json, statistics, subprocess, sys, time
old, new, refs, d = sys.argv[1:]
times = {"old": [], "new": []}
measured = {"old": [], "new": []}
for i in range(3):
    for name, binary in (("old", old), ("new", new)):
        out = f"{d}/timing_{name}_{i}.json"
        t0 = time.monotonic()
        r = subprocess.run([binary, "check", "--devices", "0", "--references", refs, "--out", out, "--quiet"],
                           capture_output=True, text=True, timeout=120)
        times[name].append(time.monotonic() - t0)
        measured[name].append(json.load(open(out))["seconds"])
        open(f"{d}/timing_{name}_{i}.txt", "w").write(r.stdout + r.stderr + f"\nrc={r.returncode}\n")
wall = statistics.median(times["new"]) / statistics.median(times["old"])
meas = statistics.median(measured["new"]) / statistics.median(measured["old"])
print(f"timing: wall old {', '.join(f'{x:.2f}' for x in times['old'])} s, new {', '.join(f'{x:.2f}' for x in times['new'])} s "
      f"(new/old medians {wall:.3f}); measuring old {', '.join(f'{x:.2f}' for x in measured['old'])} s, "
      f"new {', '.join(f'{x:.2f}' for x in measured['new'])} s ({meas:.3f})"
      + ("  -> ok" if abs(wall - 1) <= 0.05 and abs(meas - 1) <= 0.05 else "  -> UNEXPECTED (more than 5%)"))
PY
else
  note "timing: no old binary (OLD_BIN): skipped"
fi

# ---- another process on the GPU ----------------------------------------------------------------------
# check_busy NAME: the check file names the process and blames no hardware for what it moved.
check_busy() {
  python3 - "$D/$1.json" "$2" <<'PY' | tee -a "$SUMMARY"
import json, sys
j, pid = json.load(open(sys.argv[1])), int(sys.argv[2])
procs = [p for g in j["gpus"] for p in g["processes"]]
named = [p for p in procs if p["pid"] == pid or p["name"].startswith("python")]
hardware = [f"{r['metric']}:{r['fault']}" for r in j["rows"] if r["fault"] not in (None, "gpu_busy")
            and r["fault"] not in ("ecc_uncorrected", "ecc_history", "pcie_link_degraded")]
busy_rows = [r["metric"] for r in j["rows"] if r["verdict"] == "busy"]
ok = j["busy"] and named and not hardware
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: exit {j['exit_status']}, busy={j['busy']}, processes {procs} "
      f"(the loader is pid {pid}); busy rows {busy_rows}; rows blaming hardware {hardware}"
      + ("  -> ok" if ok else "  -> UNEXPECTED"))
PY
}
# start_load NAME SCRIPT: a Python process on GPU 0 that writes $D/NAME.ready when it is under way.
start_load() {
  rm -f "$D/$1.ready"
  python3 - "$D/$1.ready" > "$D/$1_process.txt" 2>&1 <<<"$2" &
  LOAD_PID=$!
  for _ in $(seq 100); do [ -f "$D/$1.ready" ] && break; sleep 0.25; done
  [ -f "$D/$1.ready" ] || note "$1: the load did not start: $(tail -n 1 "$D/$1_process.txt")"
}
stop_load() { kill "$LOAD_PID" 2>/dev/null; wait "$LOAD_PID" 2>/dev/null; }

start_load compute '
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
b = torch.randn_like(a)
c = a @ b; torch.cuda.synchronize()
open(sys.argv[1], "w").write("computing\n")
end = time.time() + 60
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
'
step compute "7" -- "$M" check --devices 0 --references "$REFS" --out "$D/compute.json"
COMPUTE_PID=$LOAD_PID
stop_load
check_busy compute "$COMPUTE_PID"

start_load memory '
import sys, time, torch
free, total = torch.cuda.mem_get_info(0)
held = torch.empty(free - (1 << 30), dtype=torch.uint8, device="cuda:0")
open(sys.argv[1], "w").write(f"holding {held.numel() >> 20} MiB of {total >> 20}\n")
time.sleep(60)
'
step memory "0 7" -- "$M" check --devices 0 --references "$REFS" --out "$D/memory.json"
MEMORY_PID=$LOAD_PID
stop_load
check_busy memory "$MEMORY_PID"

# ---- SIGTERM in the middle -------------------------------------------------------------------------------
t0=$(date +%s.%N)
"$M" check --devices 0 --references "$REFS" --out "$D/sigterm.json" > "$D/sigterm.txt" 2>&1 &
CHECK_PID=$!
sleep 1.2
kill -TERM "$CHECK_PID"
wait "$CHECK_PID"
rc=$?
note "sigterm: rc=$rc after $(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$t0") s"
python3 - "$D/sigterm.json" "$rc" <<'PY' | tee -a "$SUMMARY"
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"sigterm: no check file ({e})  -> UNEXPECTED"); sys.exit()
measured = [r["metric"] for r in j["rows"] if r["value"] is not None]
cut = [r["metric"] for r in j["rows"] if r["verdict"] == "interrupted"]
ok = sys.argv[2] == "130" and j["interrupted_by"] == "SIGTERM" and measured and cut
print(f"sigterm: exit {sys.argv[2]}, interrupted_by {j['interrupted_by']}, {len(measured)} rows measured ({', '.join(measured)}), "
      f"{len(cut)} interrupted" + ("  -> ok" if ok else "  -> UNEXPECTED"))
PY
