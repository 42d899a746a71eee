#!/usr/bin/env bash
# memlab::transpose, memlab::copy and the Python package on the GPU machine (H100; nvcc 13.0, cmake, python3 with torch, triton, scikit-build-core; no
# network), from a bare checkout: builds what it needs (dev preset, sm_90), then
#   tests       the library's GPU tests (memlab::transpose, memlab::copy) and the transpose lab's (rung auto)
#   sanitizer   compute-sanitizer memcheck on the transpose GPU tests at small sizes
#   python      the Python package's tests against torch (every dtype, odd shapes, byte-offset slices,
#               errors as exceptions), then `pip install` of the package into a fresh venv and the README's
#               example from there
#   bench       memlab.transpose against a copy of the same bytes, torch .t().contiguous() and Triton, in one
#               process; and the lab's auto, smem_vec_rows, cuBLAS and copy at the f16/f32/f64 shapes
#   summary     the tables, last
#   peers1      (when named) the races in one process each: memlab-peers copy (f16, 2^16..2^31, the source
#               aligned and 2 bytes off) and transpose (the six acceptance shapes), memlab.copy_ and
#               memlab.transpose beside torch and Triton, then memlab-compare --race tables (cuBLAS from
#               the lab step's files when this machine has them). Builds libmemlab alone when it is missing.
#               About 2-3 minutes on an H100 after the build (~1-2 min); run it on its own:
#                 OUT=... bash tools/gpu/device_library.sh peers1
# Each step logs to $WORK/<step>.log (WORK: /tmp/device-library by default) and the script goes on after a
# failed step; with $OUT set, everything is packed into $OUT/device-library.tgz after every step, the
# benchmark JSON copied to $OUT. About 6 minutes; a step that would start after DEADLINE seconds (default
# 420) is skipped and says so, and every step's timeout is cut to end by TOTAL (450 s), so that the whole
# stays under 8 minutes. Steps can be named to run fewer:
#   bash tools/gpu/device_library.sh [build] [tests] [sanitizer] [python] [bench] [lab] [pip] [summary] [peers1]
# BIN and LIB point at binaries and a libmemlab built elsewhere (default build/dev/bin, build/dev/lib/libmemlab.so):
# where the build cannot run (no GoogleTest, say), carried ones are used.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
work=${WORK:-/tmp/device-library}; mkdir -p "$work"
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(build tests sanitizer python bench lab pip summary)
jobs=$(nproc)
bin=${BIN:-build/dev/bin}
lib=${LIB:-$PWD/build/dev/lib/libmemlab.so}
deadline=${DEADLINE:-420}  # no step starts after this many seconds
total=${TOTAL:-450}        # and none runs past this many (the summary step needs a few more)
summary=()
t_start=$SECONDS
pack() { if [ -n "${OUT:-}" ]; then printf '%s\n' "${summary[@]}" > "$work/summary.txt"; tar -czf "$OUT/device-library.tgz" -C "$work" .; fi; }
step() {  # step NAME TIMEOUT_S COMMAND...: runs it under a timeout, logs, records the exit status
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  if [ $((SECONDS - t_start)) -gt "$deadline" ]; then
    summary+=("$(printf '%-22s skipped: past the %s s deadline' "$name" "$deadline")"); echo "== $name: skipped (deadline)"
    return
  fi
  local left=$((total - (SECONDS - t_start)))  # no step runs past the total either
  [ "$left" -lt "$limit" ] && limit=$((left > 30 ? left : 30))
  echo "== $name ($(date +%T), at $((SECONDS - t_start)) s, limit $limit s)"
  timeout --kill-after=10 "$limit" "$@" > "$work/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
  echo "   rc=$rc ($((SECONDS - t0)) s)"; tail -4 "$work/$name.log" | sed 's/^/   /'
  pack
}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  nvcc --version | tail -2; cmake --version | head -1
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  python3 -c "import triton; print('triton', triton.__version__)" 2>&1 | tail -1
  git log --oneline -1 2>/dev/null || true
} 2>&1 | tee "$work/machine.txt"

for s in "${steps[@]}"; do
  case $s in
    build)
      # Without GoogleTest (or CLI11) the full configure fails: then the library, the lab and the Python
      # package are still built (-DMEMLAB_BUILD_TESTS=OFF), and the test steps use carried binaries if any.
      step configure 120 cmake --preset dev
      grep -q "Configuring done" "$work/configure.log" || step configure_no_tests 120 cmake --preset dev -DMEMLAB_BUILD_TESTS=OFF
      step build_lib_cli 300 cmake --build --preset dev -j "$jobs" --target memlab_c_api memlab_cli
      step build_tests 300 cmake --build --preset dev -j "$jobs" --target memlab_gpu_tests memlab_c_api_test ;;
    tests)
      step gpu_tests_library 240 "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter='transpose_library*:copy_fixture.*:copy_errors.*'
      step gpu_tests_transpose_lab 240 "$bin/memlab_gpu_tests" --gtest_brief=1 --gtest_filter='*transpose_gpu*auto*'
      step c_api_test 60 "$bin/memlab_c_api_test" ;;
    sanitizer)
      # The small_* tests: edge shapes, batches, every offset pair, the acceptance classes at a few MiB.
      step memcheck_transpose 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter='transpose_library.small_edge*:transpose_library.small_batches:transpose_library.small_acceptance*:transpose_library.small_ctas*'
      # Shared-memory hazards of the tile kernels (the realigning stores read the halo rows): racecheck.
      step racecheck_transpose 200 compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$bin/memlab_gpu_tests" --gtest_brief=1 \
        --gtest_filter='transpose_library.small_edge*:transpose_library.small_acceptance*'
      step memcheck_lab_auto 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bin/memlab" run transpose --variant auto --dtype f16,f32,f64 --shape 67x129,64x64,1x33,33x4097 --profile --quiet ;;
    python)
      step pytest_torch 300 env MEMLAB_LIBRARY="$lib" PYTHONPATH=python python3 -m pytest -q -p no:cacheprovider \
        -rs python/tests ;;
    pip)
      # From a clean venv (with the system's torch: --system-site-packages; no network: no build isolation),
      # pip builds libmemlab for sm_90 with scikit-build-core and CMake, then the README's example runs.
      rm -rf "$work/venv"
      # Without the venv module: pip install --target into a folder, and PYTHONPATH to it.
      step pip_install 240 bash -c "
        if python3 -m venv --system-site-packages '$work/venv'; then
          # scikit-build-core from wheels carried in .carry/wheels where the image lacks it (no registry here)
          [ -d .carry/wheels ] && '$work/venv/bin/python' -m pip install --no-index --find-links .carry/wheels scikit-build-core
          # torch where the image keeps it outside the system site-packages (a user site): a .pth file, so the
          # venv sees torch but nothing of this checkout
          if ! '$work/venv/bin/python' -c 'import torch' 2>/dev/null; then
            tdir=\$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
            echo \"\$tdir\" > \$('$work/venv/bin/python' -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/system_torch.pth
          fi
          '$work/venv/bin/python' -m pip install --no-build-isolation --no-deps -v ./python \
            -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 -C build-dir='$work/pip-build'
        else
          rm -rf '$work/venv'; python3 -m pip install --no-build-isolation --no-deps -v --target '$work/pip-target' ./python \
            -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 -C build-dir='$work/pip-build'
        fi"
      cat > "$work/readme_example.py" <<'PY'
import torch, memlab
x = torch.randn(12289, 3001, device="cuda")
y = memlab.transpose(x)  # == x.t().contiguous(), 2.6x faster (H100); memlab.copy_(dst, src) copies
assert torch.equal(y, x.t().contiguous()); print("README example ok, library:", memlab.library_path())
PY
      if [ -x "$work/venv/bin/python" ]; then py=("$work/venv/bin/python"); pp=""; else py=(python3); pp="$work/pip-target"; fi
      step readme_example 120 bash -c "cd '$work' && env -u MEMLAB_LIBRARY PYTHONPATH='$pp' ${py[*]} readme_example.py" ;;
    bench)
      step bench_python 360 env MEMLAB_LIBRARY="$lib" PYTHONPATH=python python3 \
        tools/studies/transpose_any_shape_bench.py --samples 40 --budget 2.5 --out "$work/transpose_bench.json"
      [ -n "${OUT:-}" ] && cp "$work/transpose_bench.json" "$OUT/" 2>/dev/null ;;
    lab)
      # (step runs its command under timeout, which takes a program, not a shell function)
      run=("$bin/memlab" run --quiet)
      step lab_f32 240 "${run[@]}" transpose --variant auto,smem_vec_rows,cublas,copy --dtype f32 \
        --shape 16384x16384,10000x7000,12289x3001 --max-time 1 --out "$work/lab_f32.json"
      step lab_f16 180 "${run[@]}" transpose --variant auto,smem_vec_rows,cublas,copy --dtype f16 \
        --shape 8191x8193,8192x8192 --max-time 1 --out "$work/lab_f16.json"
      step lab_f64 180 "${run[@]}" transpose --variant auto,smem_vec_rows,cublas,copy --dtype f64 \
        --shape 8193x4099 --max-time 1 --out "$work/lab_f64.json"
      [ -n "${OUT:-}" ] && cp "$work"/lab_*.json "$OUT/" 2>/dev/null ;;
    peers1)
      # Each race in ONE process, memlab's library timed beside torch and Triton with the
      # same cold/batch/graph method. Without a libmemlab (a bare machine), only it is built: one .cu file,
      # no CLI, labs or tests.
      if [ ! -f "$lib" ]; then
        step peers1_configure 120 cmake -S . -B build-peers1 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
          -DCMAKE_CUDA_COMPILER=nvcc -DMEMLAB_BUILD_CLI=OFF -DMEMLAB_BUILD_TESTS=OFF -DMEMLAB_INSTALL=OFF
        step peers1_build_lib 240 cmake --build build-peers1 -j "$jobs" --target memlab_c_api
        lib=$PWD/build-peers1/lib/libmemlab.so
      fi
      peers=(env MEMLAB_LIBRARY="$lib" PYTHONPATH="$PWD/tools/python:$PWD/python" PYTHONUNBUFFERED=1
             python3 -m memlab_tools.peers)
      race=(env PYTHONPATH="$PWD/tools/python" python3 -m memlab_tools.compare)
      # 16 sizes x 2 offsets x (copy_, clone, Triton, memlab.copy_): 128 cases, ~0.4-0.6 s each; 2^31 f16 is 4 GiB
      # a buffer (src, dst and clone's output: 12 GiB with the check's temporaries, of 80).
      step peers1_copy 200 "${peers[@]}" copy --dtype f16 --sizes 2^16..2^31 --src-offset 0,2 --quiet \
        --out "$work/peers1_copy_f16.json"
      # The acceptance shapes, each in its own dtype: 6 x (.t().contiguous(), Triton, memlab.transpose) = 18 cases.
      step peers1_transpose 150 "${peers[@]}" transpose --quiet --out "$work/peers1_transpose.json" \
        --shape 16384x16384:f32,10000x7000:f32,12289x3001:f32,8191x8193:f16,16411x8191:u8,8193x4099:f64
      step peers1_race_copy 30 "${race[@]}" "$work/peers1_copy_f16.json" --race --out "$work/peers1_race_copy_f16.md"
      # cuBLAS (and nothing else of it) from the lab step's runs on this machine, when there are any: another
      # process, marked so in the table.
      labs=(); for f in "$work"/lab_f16.json "$work"/lab_f32.json "$work"/lab_f64.json; do [ -f "$f" ] && labs+=("$f"); done
      step peers1_race_transpose 30 "${race[@]}" "$work/peers1_transpose.json" "${labs[@]}" --race \
        --against torch,triton,cublas --out "$work/peers1_race_transpose.md"
      [ -n "${OUT:-}" ] && cp "$work"/peers1_*.json "$work"/peers1_race_*.md "$OUT/" 2>/dev/null
      for f in "$work"/peers1_race_*.md; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done ;;
    summary)
      {
        echo "== the lab (cold medians, GB/s; % of the copy of the same bytes in the same run)"
        python3 - "$work"/lab_*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        recs = json.load(open(path))["results"]
    except Exception as e:  # a missing or partial file: say so, go on
        print(f"  {path}: {e}"); continue
    key = lambda r: (r["params"].get("dtype"), r["params"].get("rows"), r["params"].get("cols"))
    copy = {key(r): r.get("gbps") for r in recs if r.get("variant") == "copy" and r.get("gbps")}
    for r in recs:
        g, c = r.get("gbps"), copy.get(key(r))
        pct = f"{100 * g / c:6.1f}%" if g and c else "      -"
        gs = f"{g:8.1f}" if g else "       -"
        print(f"  {key(r)[0]:>4} {key(r)[1]}x{key(r)[2]:<6} {r.get('variant'):14} {gs} GB/s {pct}  {r.get('status', '')} {r.get('note', '')[:60]}")
PY
        echo "== one process, torch (tools/studies/transpose_any_shape_bench.py)"
        sed -n '/^ *shape /,$p' "$work/bench_python.log"
        echo "== steps"; printf '%s\n' "${summary[@]}"
      } 2>&1 | tee "$work/summary_tables.txt" ;;
  esac
done
echo "== summary (total $((SECONDS - t_start)) s)"; printf '%s\n' "${summary[@]}"
[ -f "$work/summary_tables.txt" ] && sed -n '/== one process/,/== steps/p' "$work/summary_tables.txt" | head -60
pack
