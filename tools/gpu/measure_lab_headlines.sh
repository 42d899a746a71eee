#!/usr/bin/env bash
# The headline figures of docs/labs/hierarchy.md and docs/labs/transfer.md (host <-> device) measured again from a
# committed tree, into files of the catalogue's names: their committed files were made from uncommitted trees
# (manifest commit "-dirty"), and a page's headline figure must come from a commit (tools/docs/drift.py lists them
# as pending re-measurement). One GPU (an H100 80GB HBM3), no network. Builds the two labs alone (dev preset, sm_90),
# then runs the exact commands of the files' manifest rows:
#   hierarchy/  hierarchy_plateaus_run1.json, _run2.json, plateaus_agree.log (registers, shared, L1, L2, HBM latency);
#               hierarchy_per_sm.json (each SM's L2 latency); hierarchy_l1bw.json, l1bw.log (L1 and shared-memory
#               bandwidth); hierarchy_littles_law.json, hierarchy_littles_law.log; hierarchy_loaded.json;
#               hierarchy_bandwidth_ws.json (every stream against working set: the bandwidth picture's sizes);
#               hierarchy_tlb_l2_pages.json, hierarchy_tlb_dram_<2..64>GiB.json, translation.log
#   transfer/   gib_pinned.json, gib_pageable.json, sweep_ce_pinned.json
# Expected on one H100: build ~2 min on 16 cores, measurements ~4 min. A failed step is logged and the next runs.
#
#   OUT=/dir [BIN=build/dev/bin/memlab] bash tools/gpu/measure_lab_headlines.sh
#
# Then, on the development machine: copy $OUT/hierarchy/* and $OUT/transfer/* over the committed files of
# docs/results/h100/{hierarchy,transfer}/, `python3 tools/docs/results_catalogue.py scrub FILE...`, refresh the rows
# (`results_catalogue.py add FOLDER FILE... --page docs/labs/<lab>.md`), drop the claims' `remeasure` flags and run
# `python3 tools/docs/drift.py`: a figure that moved is corrected on the page and in its claim.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the folder the results go to}
h=$out/hierarchy t=$out/transfer
mkdir -p "$h" "$t"
t_start=$SECONDS
summary=()
step() {  # step NAME COMMAND: runs COMMAND (bash -c) into $out/NAME.log, records the exit status and the seconds
  local name=$1 t0=$SECONDS
  bash -c "$2" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-16s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
  printf '%s\n' "${summary[@]}" > "$out/summary.txt"
  echo "== $name rc=$rc ($((SECONDS - t0)) s, total $((SECONDS - t_start)) s)"; tail -3 "$out/$name.log"
}

git -C "$root" log --oneline -1 > "$out/commit.txt" 2>&1; git -C "$root" status --short | head -20 >> "$out/commit.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv > "$out/nvidia-smi.txt" 2>&1
if [ -n "${BIN:-}" ]; then
  memlab=$(cd "$(dirname "$BIN")" && pwd)/memlab
else
  step build "cd '$root' && cmake --preset dev -B build-headlines -DMEMLAB_ONLY_LABS='hierarchy;transfer' \
    && cmake --build build-headlines -j ${JOBS:-16} --target memlab_cli"
  memlab=$root/build-headlines/bin/memlab
fi
H="$memlab run hierarchy --quiet"
checks="python3 '$root/tools/gpu/hierarchy_checks.py'"

# ---- hierarchy: the commands of the manifest rows (docs/results/h100/hierarchy/manifest.csv) ----------------------
P="--variant register_chain,chase_shared,chase_l1,chase_l2 --sizes 4KiB,32KiB,8MiB,1GiB --steps 4096"
step plateaus "cd '$h' && $H --max-time 0.15 $P --out hierarchy_plateaus_run1.json && \
  $H --max-time 0.15 $P --out hierarchy_plateaus_run2.json && \
  $checks plateaus hierarchy_plateaus_run1.json hierarchy_plateaus_run2.json > plateaus_agree.log"
step per_sm "cd '$h' && $H --max-time 0.15 --variant chase_l2_per_sm --sizes 8MiB,2GiB --steps 2048 --out hierarchy_per_sm.json"
step l1bw "cd '$h' && $H --max-time 0.15 --variant dot,smem_dot --sizes 4MiB,4224KiB,8448KiB --ilp 1,2,4 \
  --ctas-per-sm 1,2,4,8 --out hierarchy_l1bw.json && $checks l1bw hierarchy_l1bw.json > l1bw.log"
step littles "cd '$h' && { time $H --variant dot --sizes 1GiB --ilp 1,2,4,8 --ctas-per-sm 1,2,4,8 --max-time 0.1 \
  --out hierarchy_littles_law.json; } > hierarchy_littles_law.log 2>&1"
# The streams against working set with today's kernels (the committed file ran the kernels before the whole-tile
# change; the bandwidth picture draws only today's): the manifest's command, mul added.
step bandwidth_ws "cd '$h' && $H --max-time 0.15 --variant smem_dot,dot,dot_l2,dot_l2_all,write,copy,mul,add,triad \
  --sizes 64KiB..1GiB:*4 --out hierarchy_bandwidth_ws.json"
step loaded "cd '$h' && $H --max-time 0.15 --variant loaded_chase --sizes 1GiB --steps 2048 \
  --load-ctas 0,2,4,8,16,24,32,48,64,96,131 --out hierarchy_loaded.json"
# Translation: the largest span leaves 8 GiB of the GPU's memory free (64 GiB on an 80 GB H100).
mib=$(nvidia-smi -i 0 --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
top=1; while [ $(( (top * 2 + 8) * 1024 )) -le "${mib:-81559}" ]; do top=$((top * 2)); done
tlb="set -x; cd '$h'"
for ((span = 2; span <= top; span *= 2)); do
  tlb+="; $H --variant chase_l2 --sizes ${span}GiB --node-stride $((span * 1024 * 1024 * 1024 / 16777216)) --steps 4096 \
    --max-time 0.2 --out hierarchy_tlb_dram_${span}GiB.json"
done
tlb+="; $H --variant chase_l2 --node-stride 2MiB --sizes 8MiB..${top}GiB --steps 4096 --max-time 0.2 \
  --out hierarchy_tlb_l2_pages.json"
step tlb "{ $tlb; } > '$h/translation.log' 2>&1"

# ---- transfer, host <-> device (docs/results/h100/transfer/manifest.csv) ------------------------------------------
T="$memlab run transfer"
step gib_pinned "cd '$t' && $T --variant ce,sm,auto --sizes 1GiB --direction all --host-memory pinned --max-time 2 \
  --out gib_pinned.json"
step gib_pageable "cd '$t' && $T --variant ce --sizes 1GiB --direction all --host-memory pageable --out gib_pageable.json"
step sweep "cd '$t' && $T --variant ce --sizes 4KiB..1GiB:*4 --direction all --host-memory pinned --max-time 0.2 \
  --out sweep_ce_pinned.json"

echo; echo "=== summary (total $((SECONDS - t_start)) s) ==="; printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
