#!/usr/bin/env bash
# libmemlab beside PyTorch, CuPy and JAX, in either order, on the GPU machine (python3 with torch, cupy and jax; no
# network), and what libmemlab exports: the crash inside `import torch` in a process that had loaded libmemlab
# first, and its fix (src/c_api/libmemlab.map: libmemlab exports memlab_* alone), held as an experiment on one
# set of objects built here:
#   build    libmemlab for sm_90 as the tree builds it (fixed), and the same objects linked again without the
#            version script and --exclude-libs: the library as it was before (every inline std:: function and
#            GNU_UNIQUE static its C++ headers declare visible, exported).
#   exports  nm -D --defined-only of both (exports_fixed.txt, exports_before.txt), and ld.so's account of a
#            process that loads each, then imports torch (LD_DEBUG=bindings): which other objects bound to
#            libmemlab's symbols (bindings_fixed.txt, bindings_before.txt; the fix: none).
#   crash    `import memlab; memlab.library_path(); import torch` and a torch call, in a fresh process, with each
#            library, and torch first then memlab: the exit status of each (139 or -11: SIGSEGV).
#   pytest   the Python package's suite against the fixed library (python/tests: test_import_order.py loads
#            libmemlab before and after torch, CuPy and JAX, and alone, each with a real transpose on the GPU;
#            test_cpu.py's export check).
# Writes $OUT/import-order/: summary.txt, the export lists, the bindings and each step's log. About 2-3 minutes
# on an H100 (the build about one). Steps can be named to run fewer:
#   OUT=/dir bash tools/gpu/verify_import_order.sh [build] [exports] [crash] [pytest]
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:?set OUT to the folder the results go to}/import-order
mkdir -p "$out"
build=${BUILD:-build-import-order}
fixed=$PWD/$build/lib/libmemlab.so
before_dir=$PWD/$build/before
before=$before_dir/libmemlab.so
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(build exports crash pytest)
summary=()
note() { summary+=("$1"); printf '%s\n' "${summary[@]}" > "$out/summary.txt"; echo "$1"; }
step() {  # step NAME LIMIT_S COMMAND...: runs it under a timeout into NAME.log, notes the exit status
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-26s rc=%-4s %4ss' "$name" "$rc" "$((SECONDS - t0))")"
  return $rc
}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  gcc --version | head -1
  for m in torch cupy jax; do python3 -c "import $m; print('$m', $m.__version__)" 2>&1 | tail -1; done
  git log --oneline -1 2>/dev/null || true
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

for s in "${steps[@]}"; do
  case $s in
    build)
      step configure 180 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_CUDA_COMPILER=nvcc -DMEMLAB_BUILD_CLI=OFF -DMEMLAB_BUILD_TESTS=OFF -DMEMLAB_INSTALL=OFF \
        -G "Unix Makefiles"
      step build_lib 300 cmake --build "$build" -j "$(nproc)" --target memlab_c_api
      # The same objects, linked as before the fix: CMake's own link line without the two options.
      mkdir -p "$before_dir"
      link=$(sed -e 's/-Wl,--version-script=[^ ]*//' -e 's/-Wl,--exclude-libs,ALL//' \
        -e "s# -o lib/libmemlab.so # -o $before #" "$build/CMakeFiles/memlab_c_api.dir/link.txt")
      step relink_before 120 bash -c "cd '$build' && $link" ;;
    exports)
      for which in fixed before; do
        lib=$fixed; [ $which = before ] && lib=$before
        nm -D --defined-only "$lib" > "$out/exports_$which.txt" 2>&1
        note "$(printf 'exports %-7s %4s symbols, %s not memlab_*, %s GNU_UNIQUE' "$which" \
          "$(wc -l < "$out/exports_$which.txt")" "$(awk '$3 !~ /^memlab_/' "$out/exports_$which.txt" | wc -l)" \
          "$(readelf --dyn-syms -W "$lib" | awk '$5 == "UNIQUE" && $7 != "UND"' | wc -l)")"
        rm -f "$out"/ld.*
        LD_DEBUG=bindings LD_DEBUG_OUTPUT="$out/ld" MEMLAB_LIBRARY="$lib" PYTHONPATH=python timeout 120 \
          python3 -c "import memlab; memlab.library_path(); import torch" > /dev/null 2>&1
        cat "$out"/ld.* 2>/dev/null | grep " to $lib " | grep -v "binding file $lib " > "$out/bindings_$which.txt"
        rm -f "$out"/ld.*
        note "$(printf 'bindings %-6s %4s by other objects to libmemlab (%s)' "$which" "$(wc -l < "$out/bindings_$which.txt")" \
          "$(awk '{print $4}' "$out/bindings_$which.txt" | sort -u | xargs -r -n1 basename | tr '\n' ' ')")"
      done ;;
    crash)
      call="import torch; x = torch.arange(12.0, device='cuda').reshape(3, 4); assert torch.equal(memlab.transpose(x), x.t().contiguous()); print('ok')"
      step crash_before_memlab_then_torch 180 env MEMLAB_LIBRARY="$before" PYTHONPATH=python \
        python3 -c "import memlab; memlab.library_path(); $call"
      step crash_fixed_memlab_then_torch 180 env MEMLAB_LIBRARY="$fixed" PYTHONPATH=python \
        python3 -c "import memlab; memlab.library_path(); $call"
      step crash_fixed_torch_then_memlab 180 env MEMLAB_LIBRARY="$fixed" PYTHONPATH=python \
        python3 -c "import torch, memlab; memlab.library_path(); $call" ;;
    pytest)
      step pytest 420 env MEMLAB_LIBRARY="$fixed" PYTHONPATH=python python3 -m pytest -q -p no:cacheprovider -rs \
        python/tests
      tail -15 "$out/pytest.log" ;;
    *) echo "unknown step $s (build exports crash pytest)"; exit 2 ;;
  esac
done
echo "== $out"; cat "$out/summary.txt"
