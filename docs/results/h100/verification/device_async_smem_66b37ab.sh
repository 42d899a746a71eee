#!/usr/bin/env bash
# Device call 2 (async/smem labs, binary at 66b37ab): GPU tests, sanitizers, the committed runs, ncu.
set -uo pipefail
here=.carry/async
m=$here/memlab
out=${OUT:-/tmp}/work; mkdir -p "$out"
t_start=$SECONDS
pack() { tar -czf "${OUT:-/tmp}/async2.tgz" -C "$out" . 2>/dev/null; }
step() {  # step NAME TIMEOUT COMMAND...
  local name=$1 lim=$2; shift 2
  local left=$((288 - (SECONDS - t_start)))
  if [ "$left" -lt 5 ]; then echo "== $name skipped: no time left" | tee -a "$out/summary.txt"; return; fi
  [ "$lim" -gt "$left" ] && lim=$left
  local t0=$SECONDS
  echo "\$ $*" > "$out/$name.log"
  timeout -s INT "$lim" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc $((SECONDS - t0))s (total $((SECONDS - t_start))s)" | tee -a "$out/summary.txt"
  tail -2 "$out/$name.log"
  pack
}
cs() { echo compute-sanitizer --tool "$1" --error-exitcode 9; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu --format=csv > "$out/nvidia-smi.txt" 2>&1
"$m" device > "$out/device.txt" 2>&1

step gpu_tests 45 "$here/memlab_gpu_tests" --gtest_filter='*smem*:*async*'
step smem 15 bash -c "time $m run smem --out $out/smem_f32.json --out $out/smem_f32.md"
step ncu_smem 40 python3 "$here/smem_ncu.py" --memlab "$m" --work "$out/ncu_smem"
step async 45 "$m" run async --sizes 2^28,2^29 --out "$out/async_f32.json" --out "$out/async_f32.md"
step async_offsets 50 "$m" run async --sizes 2^27 --variant ldg_sts16,ldgsts_ca16,ldgsts_cg16,tma_bulk \
  --src-offset 0..128:+16 --smem-offset 0 --stages 1 --max-time 0.2 --out "$out/async_src_offsets.json"
step async_smem_offsets 45 "$m" run async --sizes 2^27 --variant ldg_sts16,ldgsts_ca16,ldgsts_cg16,tma_bulk \
  --src-offset 0 --smem-offset 0..128:+16 --stages 1 --max-time 0.2 --out "$out/async_smem_offsets.json"
step memcheck_smem 15 $(cs memcheck) "$m" run smem --sizes 1000 --stride 1,3,32 --profile --quiet
step memcheck_async 25 $(cs memcheck) "$m" run async --dtype u8 --sizes 100000 --src-offset 0,16 --smem-offset 0,16 \
  --stages 1,3 --profile --quiet
step racecheck_smem 15 $(cs racecheck) "$m" run smem --sizes 1000 --stride 1,32 --profile --quiet
step racecheck_async 20 $(cs racecheck) "$m" run async --sizes 100000 --stages 1,3 --profile --quiet
step synccheck_smem 10 $(cs synccheck) "$m" run smem --sizes 1000 --stride 1,32 --profile --quiet
step synccheck_async 15 $(cs synccheck) "$m" run async --sizes 100000 --stages 1,3 --profile --quiet
step async_stages 30 "$m" run async --sizes 2^28 --variant pipelined,divergent_commit --stages 1..4 \
  --tile-bytes 4KiB,8KiB,16KiB --max-time 0.25 --out "$out/async_stages.json"
step copy_vs_bulk 25 "$m" run async copy --dtype f32 --sizes 2^28,2^29 --stages 1 \
  --variant ldg_sts16,ldgsts_cg16,tma_bulk,tma_tensor,auto,cub,memcpy --out "$out/async_copy_auto.json"
step async_defaults 12 bash -c "time $m run async --quiet --out $out/async_defaults.json"
step async_rel_offsets 30 "$m" run async --sizes 2^27 --variant ldgsts_cg16,tma_bulk --src-offset 16,32,48 \
  --smem-offset 0..64:+16 --stages 1 --max-time 0.2 --out "$out/async_rel_offsets.json"
step async_tiles 25 "$m" run async --sizes 2^28 --variant ldg_sts16,ldgsts_cg16,tma_bulk,tma_tensor,cub \
  --tile-bytes 4KiB,8KiB,16KiB,32KiB,64KiB --stages 1 --max-time 0.25 --out "$out/async_tiles.json"
echo "total $((SECONDS - t_start)) s" >> "$out/summary.txt"
pack
