#!/usr/bin/env bash
# On the GPU machine, with a carried build/dev/bin (built here: `make build PRESET=dev` or the dev
# binaries): card info, GPU tests, compute-sanitizer, and the acceptance runs of the timing and
# refactors. Each step logs into ./device-out (WORK overrides) and the script goes on after a
# failed step; the summary at the end lists every step's exit status. With $OUT set (the device
# tool), everything is packed into $OUT/device-out.tgz.
#   tools/gpu/device_check.sh [tests] [sanitizer] [spot] [timing] [interrupt] [ncu] [vec32] [peers] [sanitizer_labs] [summary]
#                         [defaults] [lab_peers] [new_labs]
# (no argument: tests sanitizer spot timing interrupt ncu vec32 peers defaults, in that order; sanitizer_labs,
# summary, lab_peers and new_labs run when named). NCCL (the transfer lab) is found in python3's
# nvidia-nccl-cu13 when the binary's own runpath (this machine's) does not hold it.
set -uo pipefail
out=${WORK:-device-out}; mkdir -p "$out"
bin=${BIN:-build/dev/bin}
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(tests sanitizer spot timing interrupt ncu vec32 peers defaults)
summary=()
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, records the exit status
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$name rc=$rc $((SECONDS - t0))s")
  echo "== $name rc=$rc ($((SECONDS - t0)) s)"; tail -4 "$out/$name.log"
  # Packed after every step: a call stopped at its limit still brings back what was done.
  if [ -n "${OUT:-}" ]; then printf '%s\n' "${summary[@]}" > "$out/summary.txt"; tar -czf "$OUT/device-out.tgz" -C "$out" .; fi
}
run() { "$bin/memlab" run --quiet "$@"; }
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
san() { compute-sanitizer --tool "$1" --error-exitcode 9 "${@:2}"; }

# The test binaries were built in /work/main: their data and schema paths point there.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu \
  --format=csv | tee "$out/nvidia-smi.txt"
"$bin/memlab" device | tee "$out/device.txt"

for s in "${steps[@]}"; do
  case $s in
    tests)  # the test binaries carried (a stripped bin/ may hold only the GPU ones)
      for t in gpu example_lab host labs; do
        [ -x "$bin/memlab_${t}_tests" ] && step "${t}_tests" "$bin/memlab_${t}_tests" --gtest_brief=1
      done ;;
    sanitizer)
      # --profile: each case verified, then one more launch, no blocking kernel (a tool that
      # serializes launches would hold it until its timeout).
      step memcheck_copy san memcheck "$bin/memlab" run copy --dtype u8,f16 --sizes 1,4097,100000 --src-offset 0,1,2,15 \
        --dst-offset 0,6 --profile --quiet
      step memcheck_labs san memcheck "$bin/memlab" run stride gather tile --sizes 2^16 --table-bytes 1MiB \
        --tile 64x64 --ctas 0 --profile --quiet
      step memcheck_tests san memcheck "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*edge_sizes*f16*:*edge_sizes*u8*:copy_fixture.*'
      step racecheck_tile san racecheck "$bin/memlab" run tile --sizes 2^16 --tile 64x64 --ctas 0 --profile --quiet
      step synccheck_tile san synccheck "$bin/memlab" run tile --sizes 2^16 --tile 64x64 --ctas 0 --profile --quiet ;;
    spot)  # the committed numbers of the four labs, within noise
      step spot_copy run copy --dtype f16 --variant vec16,auto,memcpy,cub --sizes 2^20,2^28,2^31 --src-offset 0,2 \
        --max-time 0.5 --out "$out/spot_copy.json"
      step spot_stride run stride --variant strided,strided_write,strided_rw --dtype f32 --stride 1,8,32 --sizes 2^26 \
        --max-time 0.3 --out "$out/spot_stride.json"
      step spot_gather run gather --sizes 2^26 --table-bytes 8MiB,200MiB --max-time 0.4 --out "$out/spot_gather.json"
      step spot_tile run tile --dtype f32 --tile 128x128,128x256 --ctas 0 \
        --variant cute_universal,cute_tiled_autovec128,ldg_sts16,ldgsts_cg16 --max-time 0.4 --out "$out/spot_tile.json" ;;
    timing)  # batch vs graph at small sizes; two runs for repeatability
      step copy_f16_a run copy --dtype f16 --sizes 2^12..2^31 --out "$out/copy_f16_a.json"
      step copy_f16_b run copy --dtype f16 --sizes 2^12..2^31 --out "$out/copy_f16_b.json" ;;
    interrupt)  # SIGINT after 8 s: a valid file with every case finished, exit 130
      timeout --preserve-status -s INT 8 "$bin/memlab" run copy --sizes 2^12..2^31 --out "$out/interrupted.json" > "$out/interrupt.log" 2>&1
      rc=$?; summary+=("interrupt rc=$rc (expect 130)"); echo "== interrupt rc=$rc"; tail -3 "$out/interrupt.log" ;;
    ncu)  # memlab's GB/s against ncu's DRAM bytes over its kernel time, auto at 2^28 f16
      step ncu_memlab run copy --variant auto --dtype f16 --sizes 2^28 --max-time 1 --out "$out/ncu_memlab.json"
      step ncu ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        --kernel-name regex:copy_aligned16_kernel --launch-count 3 --csv \
        "$bin/memlab" run copy --variant auto --dtype f16 --sizes 2^28 --profile --quiet ;;
    vec32)  # vec32 skipped with its reason on a pre-sm_100 device; auto as before
      step vec32_auto run copy --dtype f16 --variant vec32,auto,cub --sizes 2^20,2^28,2^31 --src-offset 0,2 \
        --max-time 0.5 --out "$out/vec32_auto.json" ;;
    peers)  # memlab's copy and gather labs and their PyTorch/Triton peers, on one machine
      peers() { PYTHONPATH=tools/python PYTHONUNBUFFERED=1 python3 -m memlab_tools.peers "$@"; }
      step pytest_gpu env PYTHONPATH=tools/python python3 -m pytest -q tools/python/tests
      step peers_smoke peers copy --dtype f16 --sizes 2^12,2^20 --src-offset 0,2 --out "$out/peers_smoke.json"
      step copy_f16 run copy --dtype f16 --sizes 2^12..2^31 --out "$out/copy_f16.json"
      step peers_copy_f16 peers copy --dtype f16 --sizes 2^12..2^31 --like "$out/copy_f16.json" \
        --out "$out/peers_copy_f16.json"
      step copy_f16_misaligned run copy --dtype f16 --sizes 2^16..2^30:*4 --src-offset 2 --out "$out/copy_f16_mis.json"
      step peers_copy_f16_mis peers copy --dtype f16 --sizes 2^16..2^30:*4 --src-offset 2 \
        --like "$out/copy_f16_mis.json" --out "$out/peers_copy_f16_mis.json"
      step gather_f32 run gather --dtype f32 --sizes 2^24 --table-bytes 8MiB,200MiB --out "$out/gather_f32.json"
      step peers_gather_f32 peers gather --dtype f32 --sizes 2^24 --table-bytes 8MiB,200MiB \
        --like "$out/gather_f32.json" --out "$out/peers_gather_f32.json" ;;
    sanitizer_labs)  # every lab at small, ragged sizes under memcheck; the shared-memory users under racecheck and synccheck
      small=(smem "--sizes 2^12"
             async "--sizes 5000 --src-offset 0,16 --smem-offset 0,16 --stages 1,2 --dtype u8,f32"
             transpose "--shape 67x129,64x64,1x33 --dtype f16,f32,f64"
             layout "--sizes 4097,17 --dtype f16,f32,f64 --field 0,2"
             stencil "--sizes 4160 --xy 16x20"
             matmul "--sizes 67,1 --m 132 --k 36")
      for ((i = 0; i < ${#small[@]}; i += 2)); do
        l=${small[i]}; a=${small[i+1]}
        # shellcheck disable=SC2086  # $a is a list of flags
        step "memcheck_$l" san memcheck "$bin/memlab" run "$l" $a --profile --quiet
        if [ "$l" != layout ]; then
          step "racecheck_$l" san racecheck "$bin/memlab" run "$l" $a --profile --quiet
          step "synccheck_$l" san synccheck "$bin/memlab" run "$l" $a --profile --quiet
        fi
      done ;;
    summary)  # the terminal tables and summary lines of two labs with peers
      step summary_transpose "$bin/memlab" run transpose --shape 4096x4096 --max-time 0.2
      step summary_matmul "$bin/memlab" run matmul --sizes 1024 --max-time 0.2 ;;
    new_labs)  # the labs and library added last, on one GPU: the transfer lab's 1 GiB runs and one-rank NCCL, the refusal of the
      # GPU <-> GPU rungs (exit 4), memlab::transpose at its acceptance shapes, the hierarchy's latency plateaus twice
      step transfer_gib_pinned run transfer --variant ce,sm,auto --sizes 1GiB --direction all --host-memory pinned \
        --out "$out/transfer_gib_pinned.json"
      step transfer_gib_others run transfer --variant ce,sm --sizes 1GiB --direction all \
        --host-memory pageable,registered,write_combined --max-time 1 --out "$out/transfer_gib_others.json"
      step transfer_nccl_one_rank run transfer --variant nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all \
        --gpus 1 --sizes 8,1MiB,1GiB --out "$out/transfer_nccl_one_rank.json"
      step transfer_one_gpu_refusal run transfer --variant peer_ce,peer_sm_read,nccl_all_reduce --gpus 2
      step transpose_auto run transpose --variant auto,smem_vec_rows,cublas,copy --dtype f32 \
        --shape 16384x16384,10000x7000,12289x3001 --out "$out/transpose_auto_f32.json"
      step transpose_auto_f16_f64 run transpose --variant auto,smem_vec_rows,cublas,copy --dtype f16,f64 \
        --shape 8191x8193,6143x3001 --out "$out/transpose_auto_f16_f64.json"
      step hierarchy_latency_a run hierarchy --variant register_chain,chase_shared,chase_l1,chase_l2 \
        --sizes 8KiB,1MiB,8MiB,1GiB --out "$out/hierarchy_latency_a.json"
      step hierarchy_latency_b run hierarchy --variant register_chain,chase_shared,chase_l1,chase_l2 \
        --sizes 8KiB,1MiB,8MiB,1GiB --out "$out/hierarchy_latency_b.json" ;;
    defaults)  # what `make run` does
      step defaults "$bin/memlab" run --out "$out/defaults.json" ;;
    lab_peers)  # after defaults: the gather, transpose and matmul peers at the labs' default points, same machine
      p=(env PYTHONPATH=tools/python PYTHONUNBUFFERED=1 timeout 200 python3 -m memlab_tools.peers)
      step peers_gather "${p[@]}" gather --dtype f32 --sizes 2^24 --table-bytes 8MiB,200MiB --like "$out/defaults.json" \
        --out "$out/peers_gather_f32.json"
      step peers_transpose "${p[@]}" transpose --dtype f32 --shape 16384x16384,10000x7000 --like "$out/defaults.json" \
        --out "$out/peers_transpose_f32.json"
      step peers_matmul "${p[@]}" matmul --shape 4096x4096x4096,4100x4100x4100 --like "$out/defaults.json" \
        --out "$out/peers_matmul_f32.json" ;;
  esac
done
echo "== summary"; printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
if [ -n "${OUT:-}" ]; then tar -czf "$OUT/device-out.tgz" -C "$out" . && cp "$out/summary.txt" "$OUT/"; fi
