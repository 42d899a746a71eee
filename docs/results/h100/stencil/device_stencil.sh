#!/usr/bin/env bash
# The stencil lab on the GPU machine, with the binaries carried next to this script: GPU tests,
# compute-sanitizer, ncu, and runs. Each step logs into $WORK (default /tmp/stencil-out); the
# summary lists every step's exit status; after every step the folder is packed into
# $OUT/stencil.tgz, so a run cut short still brings back what it did.
#   device.sh STEP...   (tests memcheck racecheck synccheck defaults defaults2 sweep1d sweep3d stages ncu)
set -uo pipefail
bin=$(cd "$(dirname "$0")" && pwd)
out=${WORK:-/tmp/stencil-out}; mkdir -p "$out"
summary=()
pack() { [ -n "${OUT:-}" ] && tar -czf "$OUT/stencil.tgz" -C "$out" . ; }
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, records the exit status and time
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  summary+=("$name rc=$rc ${ms} ms")
  echo "== $name rc=$rc (${ms} ms)"; tail -3 "$out/$name.log"
  printf '%s\n' "${summary[@]}" > "$out/summary.txt"; pack
}
ml() { "$bin/memlab" "$@"; }
san() { compute-sanitizer --tool "$1" --error-exitcode 9 "${@:2}"; }
V1=1d_ldg,1d_ldg_sts,1d_ldg_no_branch,1d_ldgsts,1d_ldgsts_no_branch,1d_ldgsts_vec16,1d_copy
V3=3d_ldg,3d_ldg_no_branch,3d_ldgsts,3d_ldgsts_no_branch,3d_ldgsts_vec16,3d_ldgsts_overlap,3d_copy

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu \
  --format=csv > "$out/nvidia-smi.txt" 2>&1
ml device > "$out/device.txt" 2>&1
ml --version > "$out/version.txt" 2>&1

for s in "$@"; do
  case $s in
    tests)
      step gpu_tests "$bin/memlab_gpu_tests" --gtest_filter='*stencil*:*halo*' ;;
    memcheck)  # --profile: each case verified, then launched once more, no blocking kernel
      step memcheck_1d san memcheck "$bin/memlab" run stencil --variant $V1 --sizes 1,2,17,2049,4097,100000 \
        --side 4,5 --profile --quiet
      # 68x65x6: tiles cut in x and y; 129x64x1: nx not a multiple of 4 (16-byte rungs refuse it);
      # 64x64x800: 800 tiles, more than the persistent grid of 3d_ldgsts_overlap (3 CTAs x 132 SMs)
      step memcheck_3d_a san memcheck "$bin/memlab" run stencil --variant $V3 --sizes 26520 --xy 68x65 --side 4,5 \
        --profile --quiet
      step memcheck_3d_b san memcheck "$bin/memlab" run stencil --variant $V3 --sizes 8256 --xy 129x64 --profile --quiet
      step memcheck_3d_c san memcheck "$bin/memlab" run stencil --variant $V3 --sizes 3276800 --xy 64x64 --profile --quiet
      step memcheck_overlap san memcheck "$bin/memlab" run stencil --variant 3d_ldgsts_overlap --stages 2,3,4 \
        --sizes 3276800,26520 --xy 64x64,68x65 --profile --quiet
      step memcheck_halo san memcheck "$bin/memlab_gpu_tests" --gtest_filter='halo_fixture.*' ;;
    racecheck)
      step racecheck_1d san racecheck "$bin/memlab" run stencil --variant $V1 --sizes 17,4097 --side 5 --profile --quiet
      step racecheck_3d san racecheck "$bin/memlab" run stencil --variant $V3 --sizes 26520,3276800 --xy 68x65,64x64 \
        --profile --quiet
      step racecheck_overlap san racecheck "$bin/memlab" run stencil --variant 3d_ldgsts_overlap --stages 3,4 \
        --sizes 3276800 --xy 64x64 --profile --quiet ;;
    synccheck)
      step synccheck_1d san synccheck "$bin/memlab" run stencil --variant $V1 --sizes 17,4097 --side 5 --profile --quiet
      step synccheck_3d san synccheck "$bin/memlab" run stencil --variant $V3 --sizes 26520,3276800 --xy 68x65,64x64 \
        --profile --quiet
      step synccheck_overlap san synccheck "$bin/memlab" run stencil --variant 3d_ldgsts_overlap --stages 3,4 \
        --sizes 3276800 --xy 64x64 --profile --quiet ;;
    defaults)  # `memlab run stencil` as a user types it: must finish within 15 s on the H100
      step defaults "$bin/memlab" run stencil --out "$out/stencil_defaults.json" \
        --out "$out/stencil_defaults.md" ;;
    defaults2)
      step defaults2 "$bin/memlab" run stencil --out "$out/stencil_defaults_run2.json" ;;
    sweep1d)
      step sweep1d ml run stencil --variant $V1 --sizes 2^22..2^29 --max-time 0.3 --quiet \
        --out "$out/stencil_1d_sizes.json" --out "$out/stencil_1d_sizes.md" ;;
    sweep3d)
      step sweep3d_planes ml run stencil --variant $V3 --sizes 2^27 --xy 128x1024,256x512,512x512,1024x256,2048x128 \
        --max-time 0.3 --quiet --out "$out/stencil_3d_planes.json" --out "$out/stencil_3d_planes.md"
      step sweep3d_sizes ml run stencil --variant $V3 --sizes 2^22..2^29:*2 --xy 512x512 --max-time 0.3 --quiet \
        --out "$out/stencil_3d_sizes.json" --out "$out/stencil_3d_sizes.md" ;;
    stages)  # the overlap rung's pipeline depth, next to vec16 and the copy in the same run (the two
             # refuse --stages 3 and 4, with the reason: 4 skipped rows)
      step stages ml run stencil --variant 3d_ldgsts_vec16,3d_ldgsts_overlap,3d_copy --stages 2,3,4 --sizes 2^27 \
        --quiet --out "$out/stencil_3d_stages.json" --out "$out/stencil_3d_stages.md" ;;
    ncu)  # L2 sectors from the SMs and DRAM bytes against the sector model (hardware_bytes)
      step ncu_1d ncu --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed.sum \
        --kernel-name regex:'d1_' --launch-skip 0 --csv "$bin/memlab" run stencil --variant $V1 --sizes 2^25 --profile \
        --quiet --out "$out/ncu_1d_memlab.json"
      step ncu_3d ncu --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed.sum \
        --kernel-name regex:'d3_' --csv "$bin/memlab" run stencil --variant $V3 --sizes 2^25 --xy 512x512 --profile \
        --quiet --out "$out/ncu_3d_memlab.json" ;;
  esac
done
echo "== summary"; printf '%s\n' "${summary[@]}"
pack
