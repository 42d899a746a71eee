#!/usr/bin/env bash
# memlab from Python at its edges, on one GPU (expected: ~3-4 minutes on an H100, of which the build ~1 min):
#   build     libmemlab alone (cmake, sm_90, no CLI or tests), with JAX's FFI handler where python3's jax has its
#             headers (the configure log says which), and tools/studies/copy_small_floor.cu
#   pytest    python/tests on the GPU: torch (eager, torch.compile, torch.cuda.graph, opcheck) and jax (jit, vmap)
#   demo      tools/studies/memlab_compile_demo.py: Dynamo's account (graphs, breaks, the graph), the compiled
#             and the replayed results against eager, jax.jit(memlab.transpose) against x.T
#   floor     tools/studies/copy_floor.py: memlab.copy_, torch's copy_ and cudaMemcpyAsync at f16 2^12..2^24, cold and
#             warm, interleaved, beside the empty kernel's launch floor; then memlab-compare --race on its file
#   floor_cpp tools/studies/copy_small_floor: the same race in C++ with candidate launch shapes (why, if slower)
#   host      tools/studies/memlab_py_host_overhead.py: the Python wrapper's own host cost (stub library)
#   claim     tools/studies/layout_claim.py: torch.matmul(A.t(), B) against A.t().contiguous() and memlab.transpose,
#             f32, TF32, bf16 at 1024..8192
# Everything lands in $OUT/py/ (default OUT=/tmp/measure-python-edges), seven files at most (the device machine
# sends back eight): the results (copy_floor.json/.md, copy_floor_race.md, layout_claim.json/.md,
# copy_small_floor.txt) and logs.txt: each step's exit status and seconds, the machine, then every step's whole
# log (rewritten after each step). A failed step is logged and the next one runs. GPU ${GPU:-0} only.
#   OUT=/somewhere bash tools/gpu/measure_python_edges.sh [step ...]      (default: every step, in the order above)
# Needs python3 with torch (+ triton for torch.compile; where python3 lacks torch, /opt/torch/.venv/bin/python3
# is used if it is there) and, for the JAX parts, jax with its CUDA plugin (without jax the JAX parts say "jax
# absent" and skip; where jaxlib's headers do not compile, libmemlab is built again without the JAX handler);
# pytest for the tests. BUILD (default build-pyedges) is the build folder; LIB a libmemlab built elsewhere (skips
# build); WORK (default /tmp/measure-python-edges-work) holds the step logs.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX beside torch in one process: no 75% grab of the GPU
# The GPU machine's python3 with torch is /opt/torch/.venv's; put it first where a bare python3 lacks torch.
if ! python3 -c 'import torch' 2>/dev/null && [ -x /opt/torch/.venv/bin/python3 ]; then
  export PATH=/opt/torch/.venv/bin:$PATH
fi
out=${OUT:-/tmp/measure-python-edges}/py
mkdir -p "$out"
work=${WORK:-/tmp/measure-python-edges-work}
mkdir -p "$work/logs"
build=${BUILD:-build-pyedges}
lib=${LIB:-$PWD/$build/lib/libmemlab.so}
export MEMLAB_LIBRARY=$lib
export PYTHONPATH=$PWD/python:$PWD/tools/python${PYTHONPATH:+:$PYTHONPATH}
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(build pytest demo floor floor_cpp host claim)
summary=()
t_start=$SECONDS

logs=()  # the step logs, in order
write_logs() {  # $out/logs.txt: the summary, the machine, every step's log
  { echo "== summary (total $((SECONDS - t_start)) s)"; printf '%s\n' "${summary[@]}"; echo
    cat "$work/environment.txt"
    for f in "${logs[@]}"; do echo; echo "===== $(basename "$f" .log)"; cat "$f"; done; } > "$out/logs.txt"
}

step() {  # step NAME TIMEOUT_S COMMAND...: runs it under a timeout into $work/logs/NAME.log, records its exit status
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS log=$work/logs/$name.log
  echo "== $name ($(date +%T), at $((SECONDS - t_start)) s, limit $limit s)"
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
  logs+=("$log")
  echo "   rc=$rc ($((SECONDS - t0)) s)"; tail -3 "$log" | sed 's/^/   /'
  write_logs
}

do_build() {
  local jax=()
  for attempt in with_jax without_jax; do
    cmake -S . -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 -DMEMLAB_BUILD_CLI=OFF -DMEMLAB_BUILD_TESTS=OFF \
          -DMEMLAB_INSTALL=OFF -DPython3_EXECUTABLE="$(command -v python3)" "${jax[@]}" &&
      cmake --build "$build" -j "$(nproc)" --target memlab_c_api && break
    [ "$attempt" = without_jax ] && return 1
    # The JAX handler is the one part that compiles against headers from outside (jaxlib's): where they do not
    # compile, libmemlab without it still serves every other step (the JAX parts then say the handler is missing).
    echo "libmemlab failed to build: again WITHOUT the JAX handler (MEMLAB_JAX_FFI_INCLUDE_DIR=/nonexistent)"
    jax=(-DMEMLAB_JAX_FFI_INCLUDE_DIR=/nonexistent)
  done
  { nm -D "$lib" | grep -q memlab_jax_transpose && echo "libmemlab: with the JAX handler" ||
      echo "libmemlab: WITHOUT the JAX handler (jax absent, its FFI headers missing, or they did not compile)"; }
  nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Iinclude -o "$build/copy_small_floor" \
       tools/studies/copy_small_floor.cu
}
export -f do_build
export build lib

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  nvcc --version | tail -2
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  python3 -c "import triton; print('triton', triton.__version__)" 2>&1 | tail -1
  python3 -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__, jax.devices())" \
    2>/dev/null || echo "jax absent (or it fails to start): the JAX parts skip"
  command -v python3
  git log -1 --format='commit %h %s' 2>/dev/null
} > "$work/environment.txt" 2>&1

for s in "${steps[@]}"; do
  case $s in
    build) if [ -n "${LIB:-}" ]; then echo "== build: skipped (LIB=$LIB)"; else step build 300 bash -c do_build; fi ;;
    pytest) step pytest 240 python3 -m pytest -q -p no:cacheprovider -rs python/tests ;;
    demo) step demo 180 python3 tools/studies/memlab_compile_demo.py ;;
    floor)
      step floor 180 python3 tools/studies/copy_floor.py --dtype f16 --sizes 2^12..2^24 --samples 60 --warm \
        --out "$out/copy_floor.json" --md "$out/copy_floor.md"
      step floor_race 60 python3 -m memlab_tools.compare "$out/copy_floor.json" --race --out "$out/copy_floor_race.md" ;;
    floor_cpp)
      step floor_cpp 120 "$build/copy_small_floor" 100
      cp "$work/logs/floor_cpp.log" "$out/copy_small_floor.txt" ;;
    host) step host 60 python3 tools/studies/memlab_py_host_overhead.py --calls 200000 ;;
    claim)
      step claim 240 python3 tools/studies/layout_claim.py --math f32,tf32,bf16 --sizes 1024,2048,4096,8192 \
        --samples 30 --out "$out/layout_claim.json" --md "$out/layout_claim.md" ;;
    *) echo "unknown step $s (build pytest demo floor floor_cpp host claim)"; exit 2 ;;
  esac
done
write_logs
echo "== done in $((SECONDS - t_start)) s; $out: $(ls "$out" | tr '\n' ' ')"; printf '%s\n' "${summary[@]}"
