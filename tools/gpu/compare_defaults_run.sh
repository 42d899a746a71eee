#!/usr/bin/env bash
# The defaults run (`memlab run`: every lab with its defaults) of two memlab binaries on one GPU, and
# memlab-compare of the two: "the same behaviour" for a change that must not move any number (the kernels'
# SASS is held by tools/gpu/sass_diff.py; this holds what the harness and the labs' plans make of them).
#
#   OUT=/dir OLD=<old memlab> NEW=<new memlab> [GPU=0] [ROUNDS=1] [LIBS=<dir>] bash tools/gpu/compare_defaults_run.sh
#
# Expected time on one H100: ~2.5 min per defaults run (README: 404 cases in 137 s), so ~5 min for ROUNDS=1
# (old, then new) and ~10 min for ROUNDS=2 (old, new, old, new: drift and the order show as old against old).
# Over the ~3 minutes a device script should take: ROUNDS=1 is what the budget allows; each run is one
# step, so a call stopped at its limit still brings back the runs that finished.
#
# OLD and NEW: memlab binaries, or .xz/.gz copies of them (a binary is ~26 MB; two do not travel beside the tree
# within 64 MiB, compressed they take ~4 MB each). Built elsewhere, a binary needs its shared libraries on this
# machine: LIBS (a folder, e.g. one carrying libfmt.so.9) is put first on LD_LIBRARY_PATH, NCCL is taken from
# python3's nvidia-nccl wheel where the system has none, and `ldd` of each binary is logged; a library still
# "not found" is named in summary.txt and that binary's runs are skipped.
#
# Writes $OUT/defaults/ (at most 7 files): summary.txt (each step: exit status, seconds; the verdict lines),
# nvidia-smi.txt, ldd.txt, runs.tgz (old_<k>.json / new_<k>.json and their .log, k = 1..ROUNDS; packed after
# every run, so a call stopped at its limit keeps the runs that finished), compare.txt (memlab-compare old_1 new_1:
# SAME / FASTER / SLOWER per case against both runs' noise; exit 1 there means a case SLOWER by more than 5%),
# and with ROUNDS=2 compare_old.txt (old_1 against old_2: the noise of the machine itself) and
# compare_new2.txt (old_2 against new_2). Files written before an axis was renamed key their cases by the old
# name: the comparison reads smem's stride as lane_stride and hierarchy's stride as node_stride.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the folder the results go to}/defaults
: "${OLD:?set OLD to the old memlab binary}" "${NEW:?set NEW to the new memlab binary}"
rounds=${ROUNDS:-1}
mkdir -p "$out"
work=$(mktemp -d)
runs=$work/runs  # the runs' JSON and logs, packed into $out/runs.tgz
mkdir -p "$runs"
summary=()
note() { summary+=("$1"); printf '%s\n' "${summary[@]}" > "$out/summary.txt"; echo "$1"; }
step() {  # step NAME LOG COMMAND...: runs COMMAND into LOG, records the exit status and the seconds
  local name=$1 log=$2 t0=$SECONDS
  shift 2
  "$@" > "$log" 2>&1
  local rc=$?
  note "$(printf '%-12s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")"
  return $rc
}

# The binaries, unpacked where they travelled compressed.
binary() {  # binary NAME PATH: prints the path of a runnable copy
  local name=$1 src=$2
  case $src in
  *.xz) xz -dc "$src" > "$work/$name" && chmod +x "$work/$name" && echo "$work/$name" ;;
  *.gz) gzip -dc "$src" > "$work/$name" && chmod +x "$work/$name" && echo "$work/$name" ;;
  *) echo "$src" ;;
  esac
}
old=$(binary memlab_old "$OLD") || note "OLD: cannot unpack $OLD"
new=$(binary memlab_new "$NEW") || note "NEW: cannot unpack $NEW"

[ -n "${LIBS:-}" ] && export LD_LIBRARY_PATH="$(cd "$LIBS" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2'; then
  nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
  [ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu \
  --format=csv > "$out/nvidia-smi.txt" 2>&1
runnable=()
: > "$out/ldd.txt"
for side in old new; do
  bin=${!side}
  { echo "== $side: $bin"; ldd "$bin"; } >> "$out/ldd.txt" 2>&1
  if [ ! -x "$bin" ]; then
    note "$side: $bin is not an executable file: its runs are skipped"
  elif ldd "$bin" 2>&1 | grep -q 'not found'; then
    note "$side: missing libraries ($(ldd "$bin" 2>&1 | awk '/not found/ {print $1}' | tr '\n' ' ')): carry them in LIBS; its runs are skipped"
  else
    runnable+=("$side")
  fi
done

# Old and new in turn, ROUNDS times: each a full defaults run, written as it is measured.
for k in $(seq 1 "$rounds"); do
  for side in old new; do
    [[ " ${runnable[*]} " == *" $side "* ]] || continue
    bin=${!side}
    step "${side}_$k" "$runs/${side}_$k.log" "$bin" run --out "$runs/${side}_$k.json"
    tar -czf "$out/runs.tgz" -C "$runs" .
  done
done

compare() {  # compare A B OUTFILE
  [ -f "$1" ] && [ -f "$2" ] || { note "$(basename "$3"): not compared ($(basename "$1") or $(basename "$2") missing)"; return; }
  step "$(basename "$3" .txt)" "$3" env PYTHONPATH="$root/tools/python" python3 -m memlab_tools.compare "$1" "$2" \
    --rename-param smem:stride=lane_stride --rename-param hierarchy:stride=node_stride
  note "  $(grep -E -m1 'cases compared' "$3" || tail -1 "$3")"
}
compare "$runs/old_1.json" "$runs/new_1.json" "$out/compare.txt"
if [ "$rounds" -ge 2 ]; then
  compare "$runs/old_1.json" "$runs/old_2.json" "$out/compare_old.txt"
  compare "$runs/old_2.json" "$runs/new_2.json" "$out/compare_new2.txt"
fi
rm -rf "$work"
echo "results in $out"
