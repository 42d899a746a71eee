#!/usr/bin/env bash
# The hierarchy lab after its split into a chase part and a stream part (and BabelStream's mul), on one GPU:
#   tests     the lab's GPU tests (every rung, mul too, verified at small sizes)
#   defaults  `memlab run hierarchy` with its defaults; with BASE_BIN (a binary from before the split) the same
#             run of it first, and memlab-compare of the two; else memlab-compare against the committed
#             defaults (another session: a looser check)
#   tlb       address translation: random .cg chases whose hops miss the L2 (2^24 nodes, one per line, spread
#             over 2 GiB ... 64 GiB: 1024-32768 pages of 2 MiB) and whose hops hit it (one node per 2 MiB page,
#             8 MiB ... 64 GiB: 4-32768 pages); the largest span follows the GPU's memory
#   memcheck  compute-sanitizer memcheck over the stream rungs at small sizes (a partial last tile), --ilp 1,4
#   littles   Little's law again with today's stream kernels (dot, 1 GiB arrays, --ilp x --ctas-per-sm)
# Expected on one H100 with BIN given: ~3 min (tests ~20 s, defaults ~15 s, tlb ~80 s, memcheck ~30 s,
# littles ~30 s); without BIN it first builds the hierarchy lab alone (dev preset, sm_90: ~1-2 min on 16 cores;
# fmt's headers must have been carried in .carry/fmt).
#
#   OUT=/dir [GPU=0] [BIN=build/dev/bin/memlab] [BASE_BIN=/old/build/dev/bin/memlab] bash tools/gpu/measure_hierarchy_gpu.sh [STEP...]
#
# Writes $OUT/hier/: summary.txt (each step: exit status, seconds), nvidia-smi.txt, gpu_tests.log,
# hierarchy_defaults.json (+ .log; hierarchy_defaults_base.json with BASE_BIN), compare.log,
# tlb/hierarchy_tlb_dram_<span>.json, tlb/hierarchy_tlb_l2_pages.json (+ tlb.log), memcheck.log,
# hierarchy_littles_law.json (+ .log). A failed step is logged and the next one runs.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the folder the results go to}/hier
mkdir -p "$out/tlb"
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(tests defaults tlb memcheck littles)
t_start=$SECONDS
summary=()
step() {  # step NAME LOG COMMAND: runs COMMAND (bash -c) into LOG, records the exit status and the seconds
  local name=$1 log=$2 t0=$SECONDS
  bash -c "$3" > "$log" 2>&1
  local rc=$?
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
  printf '%s\n' "${summary[@]}" > "$out/summary.txt"
  echo "== $name rc=$rc ($((SECONDS - t0)) s, total $((SECONDS - t_start)) s)"; tail -4 "$log"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu \
  --format=csv > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"

if [ -n "${BIN:-}" ]; then
  bin=$(cd "$(dirname "$BIN")" && pwd)
else
  bin=$root/build-measure-hier/bin
  step build "$out/build.log" "cd '$root' && cmake --preset dev -B build-measure-hier -DMEMLAB_ONLY_LABS=hierarchy \
    && cmake --build build-measure-hier -j ${JOBS:-16} --target memlab_cli memlab_gpu_tests"
fi
memlab=$bin/memlab
run="$memlab run hierarchy --quiet"

for s in "${steps[@]}"; do
  case $s in
  tests)
    step tests "$out/gpu_tests.log" "timeout 120 '$bin/memlab_gpu_tests' --gtest_filter='*hierarchy*' --gtest_brief=1" ;;
  defaults)
    compare="cd '$root/tools/python' && python3 -m memlab_tools.compare"
    if [ -n "${BASE_BIN:-}" ]; then
      step defaults_base "$out/hierarchy_defaults_base.log" \
        "time '$BASE_BIN' run hierarchy --out '$out/hierarchy_defaults_base.json'"
      step defaults "$out/hierarchy_defaults.log" "time $memlab run hierarchy --out '$out/hierarchy_defaults.json'"
      step compare "$out/compare.log" "$compare '$out/hierarchy_defaults_base.json' '$out/hierarchy_defaults.json'"
    else
      step defaults "$out/hierarchy_defaults.log" "time $memlab run hierarchy --out '$out/hierarchy_defaults.json'"
      step compare "$out/compare.log" "echo 'against the committed defaults (another machine session)'; \
        $compare '$root/docs/results/h100/hierarchy/hierarchy_defaults.json' '$out/hierarchy_defaults.json'"
    fi ;;
  tlb)
    # The largest span: a power of two that leaves 8 GiB of the GPU's memory free (64 GiB on an 80 GB H100).
    mib=$(nvidia-smi -i 0 --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
    top=1; while [ $(( (top * 2 + 8) * 1024 )) -le "${mib:-81559}" ]; do top=$((top * 2)); done
    cmds="set -x; failed=0"
    # Hops that miss the L2: 2^24 nodes, one per 128-byte line (2 GiB of lines: the L2 holds 2.4% of them), in a
    # random cycle, the chain spread over SPAN: node spacing SPAN / 2^24, every hop on a random one of SPAN / 2 MiB
    # pages. Only the page count changes from one span to the next.
    for ((span = 2; span <= top; span *= 2)); do
      cmds+="; $run --variant chase_l2 --sizes ${span}GiB --node-stride $((span * 1024 * 1024 * 1024 / 16777216)) \
        --steps 4096 --max-time 0.2 --out '$out/tlb/hierarchy_tlb_dram_${span}GiB.json' || failed=1"
    done
    # Hops that hit the L2: one node per 2 MiB page, 4 ... 32768 pages (at most 4 MiB of lines).
    cmds+="; $run --variant chase_l2 --node-stride 2MiB --sizes 8MiB..${top}GiB --steps 4096 --max-time 0.2 \
      --out '$out/tlb/hierarchy_tlb_l2_pages.json' || failed=1; exit \$failed"
    step tlb "$out/tlb/tlb.log" "$cmds" ;;
  memcheck)
    step memcheck "$out/memcheck.log" "timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $run \
      --variant write,copy,mul,add,triad,dot,dot_l2_all,smem_dot --sizes 1028,8196 --ilp 1,4 --passes 1 \
      --max-time 0.01" ;;
  littles)
    step littles "$out/hierarchy_littles_law.log" "time $run --variant dot --sizes 1GiB --ilp 1,2,4,8 \
      --ctas-per-sm 1,2,4,8 --max-time 0.1 --out '$out/hierarchy_littles_law.json'" ;;
  *) echo "unknown step $s (tests defaults tlb memcheck littles)" ;;
  esac
done
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - t_start)) s"
