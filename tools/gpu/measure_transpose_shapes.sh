#!/usr/bin/env bash
# memlab::transpose at every shape, on one GPU (docs/notes/transpose_skinny.md, docs/labs/transpose.md):
# expected ~4 minutes on one H100 (build ~1.5 min with 16 cores, tests ~0.3, acceptance <= 1, sanitizers
# <= 1.5). The heat map over every shape has its own script: tools/gpu/measure_transpose_heatmap.sh. From a bare
# checkout on the GPU machine (nvcc, cmake, GoogleTest, python3 with torch; no network):
#
#   OUT=/some/dir [GPU=0] bash tools/gpu/measure_transpose_shapes.sh [build] [tests] [accept] [sanitizer]
#
# (no step named: all, in that order). Steps:
#   build      cmake --preset dev (sm_90) -DMEMLAB_ONLY_LABS=transpose: libmemlab (memlab_c_api) and
#              memlab_gpu_tests
#   tests      the library's transpose GPU tests (the few paths' among them) and the transpose lab's `auto`
#   accept     (python3, torch, `import memlab`) a side of 1..8 elements against >= 256 MiB of traffic, both
#              ways round, 1/2/4/8-byte elements, and 10^6 batched 3x3..16x16: memlab.transpose against a copy
#              of the same bytes and torch's .t().contiguous(), one process -> acceptance.json, acceptance.md
#   sanitizer  compute-sanitizer memcheck and racecheck on the few paths' GPU tests (small_few_paths_*)
# Everything lands in $OUT/skinny/ (default OUT: /tmp/out): the files above, summary.txt (each step's exit
# status and time), machine.txt, logs.txt (the tail of each step's log). A failed step is logged and the
# next one runs. BIN= (a folder with memlab_gpu_tests) and LIB= (libmemlab.so) use binaries built elsewhere
# and skip the CMake build; ACCEPT_BUDGET (s, default 60) bounds the acceptance measurements. Uses GPU ${GPU:-0}
# only (CUDA_VISIBLE_DEVICES).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
out=${OUT:-/tmp/out}/skinny
mkdir -p "$out"
work=${WORK:-/tmp/measure-transpose-shapes}
mkdir -p "$work"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build tests accept sanitizer)
jobs=$(nproc)
bin=${BIN:-build/dev/bin}
lib=${LIB:-$PWD/build/dev/lib/libmemlab.so}
: > "$out/summary.txt"
: > "$out/logs.txt"

step() {  # step NAME TIMEOUT_S COMMAND...: runs it under a timeout, logs, records the exit status
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "== $name ($(date +%T), limit $limit s)"
  timeout --kill-after=10 "$limit" "$@" > "$work/$name.log" 2>&1
  local rc=$?
  printf '%-16s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$out/summary.txt"
  { echo "===== $name (rc=$rc)"; tail -40 "$work/$name.log"; } >> "$out/logs.txt"
  return 0
}

{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  nvcc --version | tail -2
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__)" 2>&1 | tail -1
  git log --oneline -1 2>/dev/null || true
  echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
} > "$out/machine.txt" 2>&1

for s in "${steps[@]}"; do
  case $s in
    build)
      if [ -z "${BIN:-}" ]; then
        step configure 120 cmake --preset dev -DMEMLAB_ONLY_LABS=transpose
        step build 420 cmake --build build/dev -j "$jobs" --target memlab_c_api memlab_gpu_tests
      fi ;;
    tests)
      step gpu_tests 180 "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter='transpose_library*:transpose_library_errors*:*transpose_gpu*auto*' ;;
    accept)
      step accept $(( ${ACCEPT_BUDGET:-60} + 60 )) env MEMLAB_LIBRARY="$lib" PYTHONPATH=python:tools/python \
        python3 -m memlab_tools.transpose_shapes accept -o "$out" --samples 30 --budget "${ACCEPT_BUDGET:-60}" ;;
    sanitizer)
      few='transpose_library.small_few_paths_edge*:transpose_library.small_few_paths_batches:transpose_library.small_few_paths_ctas*'
      step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter="$few"
      step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/memlab_gpu_tests" \
        --gtest_brief=1 --gtest_filter='transpose_library.small_few_paths_batches:transpose_library.small_few_paths_ctas*' ;;
    *) echo "unknown step: $s (build tests accept sanitizer; the heat map: tools/gpu/measure_transpose_heatmap.sh)" >&2 ;;
  esac
done
echo "== done: $out"
cat "$out/summary.txt"
