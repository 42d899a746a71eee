#!/usr/bin/env bash
# memlab check on the machine it lands on, every GPU (the node check): about 4-5 minutes on 4 H100s
# (the build not counted), 2 on one. Writes the reference the repository commits, then holds the
# check to its acceptance:
#
#   write     memlab check --write-reference $OUT/check/ref_<gpus>.json --runs 3 (every GPU)
#   run1 run2 two plain checks against that file (table + JSON each), their wall time
#   committed a check against the references committed in this tree, where there are any
#   load      a competing load on the last GPU (another process copying on it the whole check): that GPU
#             and only it (its rows, and the pairs and node figures it takes part in) flagged
#   edited    a copy of the reference with hbm_read twice out of reach, on GPU 0: fail naming hbm_read
#   subset    CUDA_VISIBLE_DEVICES=0,1 (several GPUs only), the reference found by MEMLAB_REFERENCES:
#             only those two checked
#   bad       a missing, a malformed and another model's reference, an unknown --devices ordinal:
#             exit 2, one line each, and no GPU work (well under a second each)
# On one GPU the same, the node figures skipped by the check itself and no subset.
#
#   OUT=/some/dir [BIN=prebuilt/memlab] tools/gpu/measure_check.sh
# Without BIN it builds the dev preset (copy, hierarchy and transfer labs) in build/check-gpu; fmt's
# headers as the other scripts carry them (.carry/fmt). Every step is timed (at most STEP_LIMIT
# seconds, default 300), logged under $OUT/check/ and may fail without stopping the next;
# $OUT/check/summary.txt has one line per step.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/out-check}
D=$OUT/check
mkdir -p "$D"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null || true)
export LD_LIBRARY_PATH=${NCCL_DIR:+$NCCL_DIR/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SUMMARY=$D/summary.txt
: > "$SUMMARY"
T0=$SECONDS

note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME WANTED_RCS -- command...: output (stdout and stderr) to $D/NAME.txt; rc and seconds in the summary.
step() {
  local name=$1 want=$2
  shift 3
  local t0
  t0=$(date +%s.%N)
  timeout "${STEP_LIMIT:-300}" "$@" > "$D/$name.txt" 2>&1
  local rc=$?
  local secs
  secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  local verdict=ok
  [[ " $want " == *" $rc "* ]] || verdict="UNEXPECTED (wanted $want)"
  printf '%-10s rc=%-3s %7ss  %s\n' "$name" "$rc" "$secs" "$verdict" | tee -a "$SUMMARY"
  tail -n 1 "$D/$name.txt" | cut -c1-200 | sed 's/^/    /'
  return 0
}

{ date -u; hostname; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi -q | grep -iA8 "GPU Link Info" | head -20
  echo "NCCL: ${NCCL_DIR:-system}"; } > "$D/machine.txt" 2>&1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
LAST=$((NGPU - 1))
note "machine: $(hostname), $NGPU GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"

if [ -n "${BIN:-}" ]; then
  M=$BIN
else
  B=$ROOT/build/check-gpu
  t=$SECONDS
  { cmake -S "$ROOT" -B "$B" --preset dev "-DMEMLAB_ONLY_LABS=copy;hierarchy;transfer" -DMEMLAB_BUILD_TESTS=OFF \
      && cmake --build "$B" -j "$(nproc)" --target memlab_cli; } > "$D/build.txt" 2>&1
  note "build: rc=$? $((SECONDS - t))s"
  M=$B/bin/memlab
fi
"$M" --version >> "$D/machine.txt" 2>&1
REF=$D/ref_${NGPU}.json
rm -f "$REF"

# 1. The reference: three runs of the suite on every GPU.
step write "0 5" -- "$M" check --write-reference "$REF" --runs 3
# 2. Two plain checks against it.
step run1 "0 5" -- "$M" check --reference "$REF" --out "$D/run1.json"
step run2 "0 5" -- "$M" check --reference "$REF" --out "$D/run2.json"
python3 - "$D/run1.json" "$D/run2.json" <<'PY' | tee -a "$SUMMARY"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda r: (r["metric"], r["gpu"], r["peer"])
va = {key(r): r["verdict"] for r in a["rows"]}
vb = {key(r): r["verdict"] for r in b["rows"]}
diff = [k for k in va if va[k] != vb.get(k)]
print(f"run1 vs run2: {a['seconds']:.1f} s and {b['seconds']:.1f} s in memlab; {len(diff)} verdict(s) differ"
      + (": " + ", ".join(f"{k[0]}@{k[1]}->{k[2]} {va[k]}/{vb[k]}" for k in diff) if diff else " (same verdicts)"))
PY

# 2b. Against the references committed in this tree (once there are any): the default lookup.
if ls "$ROOT"/references/*.json > /dev/null 2>&1; then
  step committed "0 5 6" -- env MEMLAB_REFERENCES="$ROOT/references" "$M" check --out "$D/committed.json"
fi

# 3a. A competing load on the last GPU: another process copying on it for the whole check.
READY=$D/.load_ready
rm -f "$READY"
LOAD_SECONDS=150
CUDA_VISIBLE_DEVICES=$LAST python3 - "$READY" "$LOAD_SECONDS" > "$D/load_process.txt" 2>&1 <<'PY' &
import sys, time
import torch
a = torch.empty(2**29, dtype=torch.float32, device="cuda")
b = torch.empty_like(a)
b.copy_(a); torch.cuda.synchronize()
open(sys.argv[1], "w").write("copying\n")
end = time.time() + float(sys.argv[2])
n = 0
while time.time() < end:
    for _ in range(50):
        b.copy_(a)
    torch.cuda.synchronize()
    n += 50
print(f"{n} copies of 2 GiB")
PY
LOAD_PID=$!
for _ in $(seq 60); do [ -f "$READY" ] && break; sleep 0.5; done
if [ ! -f "$READY" ]; then
  # No PyTorch here: memlab's own copy, one run after another (a second between them at most).
  kill "$LOAD_PID" 2>/dev/null; wait "$LOAD_PID" 2>/dev/null
  note "load: PyTorch did not start ($(tail -n 1 "$D/load_process.txt")); memlab run copy in a loop instead"
  ( end=$((SECONDS + LOAD_SECONDS)); while [ $SECONDS -lt $end ]; do
      CUDA_VISIBLE_DEVICES=$LAST "$M" run copy --variant vec16,memcpy,cub --sizes 2^29 --src-offset 0..15 --quiet \
        --max-time 2 > /dev/null 2>&1; done ) &
  LOAD_PID=$!
  sleep 4
fi
step load "1 5" -- "$M" check --reference "$REF" --out "$D/load.json"
kill "$LOAD_PID" 2>/dev/null; pkill -P "$LOAD_PID" 2>/dev/null; wait "$LOAD_PID" 2>/dev/null
python3 - "$D/load.json" "$LAST" <<'PY' | tee -a "$SUMMARY"
import json, sys
j, last = json.load(open(sys.argv[1])), int(sys.argv[2])
bad = [r for r in j["rows"] if r["verdict"] in ("fail", "warn", "sibling")]
def gpus(r):
    return {r["gpu"], r["peer"]} - {None} if r["scope"] != "node" else set(range(len(j["gpus"])))
others = [r for r in bad if last not in gpus(r)]
mine = [r for r in bad if r["scope"] == "gpu" and r["gpu"] == last]
print(f"load on GPU {last}: {len(mine)} of its rows flagged ({', '.join(r['metric'] + ':' + r['verdict'] for r in mine)}); "
      f"{len(others)} rows flagged without it" + (": " + ", ".join(f"{r['metric']}@{r['gpu']}" for r in others) if others else "")
      + ("  -> ok" if mine and not others else "  -> UNEXPECTED"))
PY

# 3b. A reference out of reach: hbm_read's median and floors doubled, GPU 0 alone.
python3 - "$REF" "$D/ref_edited.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("median", "warn_at", "fail_at"):
    r["per_gpu"]["hbm_read"][k] *= 2
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
step edited "1" -- "$M" check --reference "$D/ref_edited.json" --devices 0
grep -E " (fail|warn|sibling) " "$D/edited.txt" | sed 's/^/    flagged: /' | tee -a "$SUMMARY"

# 3c. A subset through CUDA_VISIBLE_DEVICES, the reference found by MEMLAB_REFERENCES (the default lookup).
if [ "$NGPU" -ge 2 ]; then
  mkdir -p "$D/refs"
  cp "$REF" "$D/refs/$(python3 -c "import json,re,sys; print(re.sub('[^a-z0-9]+','-',json.load(open(sys.argv[1]))['model']['name'].lower()).strip('-'))" "$REF").json"
  step subset "0 5" -- env CUDA_VISIBLE_DEVICES=0,1 MEMLAB_REFERENCES="$D/refs" "$M" check --out "$D/subset.json"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('subset: GPUs checked', [g['bus_id'] for g in j['gpus']], 'reference', j['reference'] and j['reference']['path'])" "$D/subset.json" | tee -a "$SUMMARY"
  rm -rf "$D/refs"
fi

# 3d. Bad inputs: exit 2, one line, before any GPU work.
printf '{ "schema": ' > "$D/ref_malformed.json"
python3 - "$REF" "$D/ref_other.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["model"]["name"], r["model"]["memory_gib"] = "NVIDIA H200", 139.8
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
{
  for args in "--reference $D/no_such.json" "--reference $D/ref_malformed.json" "--reference $D/ref_other.json" \
              "--devices $NGPU" "--devices 0,99"; do
    t0=$(date +%s%N)
    msg=$("$M" check $args 2>&1)
    rc=$?
    echo "rc=$rc $(( ($(date +%s%N) - t0) / 1000000 )) ms  lines=$(printf '%s\n' "$msg" | wc -l)  memlab check $args"
    echo "    $msg"
  done
} > "$D/bad.txt" 2>&1
cat "$D/bad.txt" | tee -a "$SUMMARY"
rm -f "$D/ref_malformed.json" "$D/ref_other.json" "$READY"
note "total: $((SECONDS - T0)) s"
