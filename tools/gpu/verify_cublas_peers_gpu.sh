#!/usr/bin/env bash
# The cuBLAS peers (matmul's cublas_sgemm and cublas_tf32, transpose's cublas) on one GPU, with cuBLAS
# loaded at run time (src/harness/cublas_loader.hpp) instead of linked: their GPU tests (edge shapes,
# verified against the CPU reference), a short `memlab run` of each, and the same run where cuBLAS cannot
# be loaded (a dlopen that fails for it, LD_PRELOAD): the peers skipped with the reason, the run's other
# rungs measured, exit 0.
#
# Expected time on one H100: under a minute with a built binary (BIN); building first adds a few.
#
#   BIN=build/ci/bin OUT=/tmp/out GPU=0 bash tools/gpu/verify_cublas_peers_gpu.sh
#
# Writes $OUT/cublas_peers/: steps.log (each step, its command and exit status) and one NAME.log per
# step, the runs' results as NAME.json. A failing step is logged and the next one runs.
set -u
OUT=${OUT:-/tmp/verify_cublas_peers}
export CUDA_VISIBLE_DEVICES=${GPU:-0}
dir="$OUT/cublas_peers"
mkdir -p "$dir"
cd "$(dirname "$0")/../.." || exit 1

. tools/gpu/gpu_steps.sh  # step NAME COMMAND...: its output in NAME.log, its exit status in steps.log

if [ -z "${BIN:-}" ]; then
  step build bash -c "cmake --preset dev -B build-gpu -DMEMLAB_ONLY_LABS='matmul;transpose' >/dev/null &&
                      cmake --build build-gpu -j --target memlab_cli memlab_gpu_tests"
  BIN=build-gpu/bin
fi

# Nothing of cuBLAS among the libraries memlab needs to start (expect no line, exit 1 from grep).
step ldd bash -c "ldd '$BIN/memlab' | grep -i cublas"

# Every cuBLAS peer x dtype x the edge shapes, verified (the GPU suite's own tests of them).
step gpu_tests timeout 240 "$BIN/memlab_gpu_tests" --gtest_filter='*cublas*' --gtest_brief=1

# One short run of each peer next to a rung of the lab's own.
step matmul timeout 60 "$BIN/memlab" run matmul --variant naive,cublas_sgemm,cublas_tf32 --sizes 1024 \
  --out "$dir/matmul.json"
step transpose timeout 60 "$BIN/memlab" run transpose --variant smem_vec,cublas --dtype f16,f32,f64 \
  --shape 4096x4096 --out "$dir/transpose.json"

# cuBLAS that cannot be loaded: the peers skipped with the reason, the other rungs run, exit 0.
shim="$dir/no_cublas.so"
cat >"$dir/no_cublas.c" <<'EOF'
// dlopen of any cuBLAS library fails, as on a machine without it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
void* dlopen(const char* file, int mode) {
  static void* (*real)(const char*, int) = 0;
  if (file != 0 && strstr(file, "libcublas") != 0) return 0;
  if (real == 0) real = (void* (*)(const char*, int))dlsym(RTLD_NEXT, "dlopen");
  return real(file, mode);
}
EOF
step shim cc -shared -fPIC -O1 "$dir/no_cublas.c" -o "$shim" -ldl
step without_cublas timeout 60 env LD_PRELOAD="$shim" "$BIN/memlab" run transpose --variant smem_vec,cublas \
  --dtype f32 --shape 4096x4096 --out "$dir/without_cublas.json"
rm -f "$shim"
