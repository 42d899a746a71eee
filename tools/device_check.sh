#!/usr/bin/env bash
# On the GPU machine: build-free check of a carried build/bin. Card info, GPU tests, memcheck,
# and a short timing pass. Logs under $OUT (or ./device-out).
set -uo pipefail
out=${OUT:-device-out}; mkdir -p "$out"
bin=build/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total,temperature.gpu --format=csv | tee "$out/nvidia-smi.txt"
$bin/memlab device | tee "$out/device.txt"
echo "== GPU tests"
$bin/memlab_gpu_tests --gtest_brief=1 2>&1 | tail -15 | tee "$out/gpu_tests.txt"
echo "== host and lab tests here too"
for t in memlab_host_tests memlab_labs_tests; do $bin/$t --gtest_brief=1 2>&1 | tail -2; done
echo "== compute-sanitizer memcheck"
compute-sanitizer --tool memcheck --error-exitcode 9 $bin/memlab run copy --dtype f16,u8 --sizes 4097,100000 \
  --max-time 0.01 --quiet > "$out/memcheck_run.txt" 2>&1; echo "memcheck run rc=$?"; tail -3 "$out/memcheck_run.txt"
compute-sanitizer --tool memcheck --error-exitcode 9 $bin/memlab_gpu_tests --gtest_brief=1 \
  --gtest_filter='*edge_sizes*f16*:*edge_sizes*u8*' > "$out/memcheck_tests.txt" 2>&1; echo "memcheck tests rc=$?"; tail -3 "$out/memcheck_tests.txt"
echo "== timing sanity"
$bin/memlab run copy --dtype f16 --sizes 2^20,2^26,2^31 --max-time 0.5 --out "$out/sanity.json" 2>&1 | tee "$out/sanity.txt"
