#!/usr/bin/env bash
# Verifies the transpose, stencil and matmul labs on one GPU (their GPU tests: every rung of each table
# over edge shapes, against the CPU reference), and times transpose's element-per-access rungs beside
# the 16-byte ones and a copy at 16384², f16/f32/f64: where a 64 x 64 tile of one-element accesses
# (smem_padded64) lands between the 32 x 32 rungs and smem_vec.
#
# Expected time on one H100: about 2.5 minutes with a built binary (BIN); building first adds a few.
#
#   BIN=build/ci/bin OUT=/tmp/out GPU=0 bash tools/gpu/verify_transpose_stencil_matmul_gpu.sh
#
# Writes $OUT/lab_rungs/: steps.log (each step, its command and exit status), gpu_tests.log,
# transpose.json (memlab's results), transpose.log. A failing step is logged and the next one runs.
set -u
OUT=${OUT:-/tmp/verify_lab_rungs}
export CUDA_VISIBLE_DEVICES=${GPU:-0}
dir="$OUT/lab_rungs"
mkdir -p "$dir"
cd "$(dirname "$0")/../.."

. tools/gpu/gpu_steps.sh  # step NAME COMMAND...: its output in NAME.log, its exit status in steps.log

if [ -z "${BIN:-}" ]; then
  step build bash -c "cmake --preset dev -B build-gpu >/dev/null && cmake --build build-gpu -j --target memlab_cli memlab_gpu_tests"
  BIN=build-gpu/bin
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$dir/gpu.txt" 2>&1

# Every rung of the three labs' tables, every dtype, the edge shapes (the GPU suite's own tests of them).
step gpu_tests timeout 300 "$BIN/memlab_gpu_tests" --gtest_filter='*transpose*:*stencil*:*matmul*' --gtest_brief=1

# The element-per-access rungs (32 x 32 and 64 x 64 tiles), the 16-byte ones and the copy, one run.
step transpose timeout 180 "$BIN/memlab" run transpose \
  --variant naive,smem,smem_padded,smem_swizzled,smem_padded64,smem_vec,smem_vec_rows,copy \
  --dtype f16,f32,f64 --shape 16384x16384 --out "$dir/transpose.json"
