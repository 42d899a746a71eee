#!/usr/bin/env bash
# The hierarchy lab on the H100 machine, from a bare checkout plus the carried .carry/
# (BabelStream's source in .carry/babelstream, fetched from github:UoB-HPC/BabelStream; never
# committed). Builds memlab (dev preset, hierarchy only), runs the lab's tests, compute-sanitizer
# at small sizes, the defaults (timed: <= 20 s), the full sweeps (JSON), a second run of the latency
# plateaus (two runs must agree within 3%), BabelStream at the same array sizes, and the plots.
# Each step logs to $work/<step>.log and the script goes on after a failure; everything is packed
# into $OUT/hierarchy.tgz after every step (at most a few files come back), the JSONs and pictures too.
#   tools/gpu/device_hierarchy.sh            # all steps, ~7 min
#   tools/gpu/device_hierarchy.sh gpu_tests l1bw   # only the steps named (and the build, unless BIN is set)
# Environment: OUT (the device tool's folder; default ./hierarchy-out), JOBS (default 16), BIN.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/hierarchy-out}; mkdir -p "$OUT"
work=$PWD/hierarchy-work; mkdir -p "$work/results" "$work/plots" "$PWD/hierarchy-bin"
res=$work/results
bin=${BIN:-$PWD/build-dev/bin}  # BIN: binaries built elsewhere (then nothing is built here)
jobs=${JOBS:-16}
t_start=$SECONDS
summary=()
pack() { tar -czf "$OUT/hierarchy.tgz" -C "$work" . 2>/dev/null; }
only=" $* "  # the steps named on the command line; none: every step
step() {  # step NAME COMMAND...: runs it (bash -c when one string), logs, records rc and seconds
  local name=$1; shift
  if [ -z "${ALWAYS:-}" ] && [ -n "${only// /}" ] && [[ "$only" != *" $name "* ]]; then return 0; fi
  local t0=$SECONDS
  if [ $# -eq 1 ]; then bash -c "$1" > "$work/$name.log" 2>&1; else "$@" > "$work/$name.log" 2>&1; fi
  local rc=$?
  summary+=("$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
  echo "== $name rc=$rc ($((SECONDS - t0)) s, total $((SECONDS - t_start)) s)"; tail -5 "$work/$name.log"
  printf '%s\n' "${summary[@]}" > "$work/summary.txt"
  pack
}
memlab() { "$bin/memlab" "$@"; }
export -f memlab 2>/dev/null; export bin res work

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,temperature.gpu,power.limit \
  --format=csv > "$work/nvidia-smi.txt" 2>&1; cat "$work/nvidia-smi.txt"
git log --oneline -1 > "$work/commit.txt" 2>/dev/null

# ---- build ---------------------------------------------------------------------------------------------
if [ -z "${BIN:-}" ]; then
  ALWAYS=1 step configure "cmake --preset dev -B build-dev -DMEMLAB_ONLY_LABS=hierarchy"
  ALWAYS=1 step build "cmake --build build-dev -j $jobs --target memlab_cli memlab_labs_tests memlab_gpu_tests memlab_sass_tests"
fi
"$bin/memlab" device > "$work/device.txt" 2>&1

# ---- tests (each < 10 s) -----------------------------------------------------------------------------------
step host_tests "$bin/memlab_labs_tests --gtest_filter='*hierarchy*' --gtest_brief=1"
step sass_tests "$bin/memlab_sass_tests --gtest_filter='*hierarchy*' --gtest_brief=1"
step gpu_tests "timeout 120 $bin/memlab_gpu_tests --gtest_filter='*hierarchy*' --gtest_brief=1"

# ---- sanitizers at small sizes -------------------------------------------------------------------------------
step memcheck "timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $bin/memlab run hierarchy --quiet \
  --sizes 32KiB --steps 256 --passes 1 --load-ctas 4 --max-time 0.01 --out $res/sanitizer_memcheck.json"

# The shared-memory rungs (chase_shared's chain, smem_dot's cp.async staging) under racecheck and synccheck.
for tool in racecheck synccheck; do
  step $tool "timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $bin/memlab run hierarchy --quiet \
    --variant chase_shared,smem_dot --sizes 4KiB,8196 --steps 256 --ilp 1,4 --passes 1 --max-time 0.01 \
    --out $res/sanitizer_$tool.json"
done

# ---- the defaults: at most 20 s -------------------------------------------------------------------------------
step defaults "time $bin/memlab run hierarchy --out $res/hierarchy_defaults.json --out $res/hierarchy_defaults.md"

# ---- the full sweeps (JSON) ------------------------------------------------------------------------------------
RB="$bin/memlab run hierarchy --quiet"
R="$RB --max-time 0.15"
# Latency against working set, 4 KiB .. 4 GiB, L1 path and .cg path, 128-byte nodes.
step latency_ws "$R --variant chase_l1,chase_l2 --sizes 4KiB..4GiB --steps 2048 --out $res/hierarchy_latency_ws.json"
# 32-byte sector granularity beside it, in L1 and L2 only.
step latency_sector "$R --variant chase_l1,chase_l2 --sizes 4KiB..64MiB:*4 --node-stride 32 --steps 2048 --out $res/hierarchy_latency_sector.json"
# L2 partitions: fine steps across 16..64 MiB, and the per-SM map at an L2-resident size.
step l2_partition "$R --variant chase_l2 --sizes 16MiB..64MiB:+4MiB --steps 4096 --out $res/hierarchy_l2_partition.json"
step per_sm "$R --variant chase_l2_per_sm --sizes 8MiB,2GiB --steps 2048 --out $res/hierarchy_per_sm.json"
# Stride chase and the TLB map: stride x working set.
step tlb "$R --variant chase_stride --sizes 8MiB..8GiB:*4 --node-stride 4KiB,64KiB,1MiB,2MiB,4MiB,32MiB --steps 1024 --out $res/hierarchy_tlb.json"
# Shared memory and registers.
step smem_reg "$R --variant chase_shared,register_chain --sizes 4KiB,32KiB,128KiB --steps 4096 --out $res/hierarchy_smem_reg.json"
# Bandwidth against working set, every stream.
step bandwidth_ws "$R --variant smem_dot,dot,dot_l2,dot_l2_all,write,copy,add,triad --sizes 64KiB..1GiB:*4 --out $res/hierarchy_bandwidth_ws.json"
# Little's law: bytes in flight per SM (ILP x occupancy) against DRAM bandwidth.
step littles_law "$R --variant dot --sizes 1GiB --ilp 1,2,4,8 --ctas-per-sm 1,2,4,8 --out $res/hierarchy_littles_law.json"
# Loaded latency: the probe's DRAM latency while 0..131 SMs stream.
step loaded "$R --variant loaded_chase --sizes 1GiB --steps 2048 --load-ctas 0,2,4,8,16,24,32,48,64,96,131 --out $res/hierarchy_loaded.json"
# The latency plateaus twice: the two runs must agree within 3%.
P="--variant register_chain,chase_shared,chase_l1,chase_l2 --sizes 4KiB,32KiB,8MiB,1GiB --steps 4096"
step plateaus_run1 "$R $P --out $res/hierarchy_plateaus_run1.json"
step plateaus_run2 "$R $P --out $res/hierarchy_plateaus_run2.json"
step plateaus_agree "python3 tools/gpu/hierarchy_checks.py plateaus $res/hierarchy_plateaus_run1.json $res/hierarchy_plateaus_run2.json"

# ---- L1 and shared-memory bandwidth against 120 B/clk/SM (docs/notes/hierarchy_l1_bandwidth.md) -------------------
# dot (ld.global: L1 hits after the first pass) and smem_dot (LDS.128) at 4 MiB arrays (the page's size), 4224 KiB =
# 132 x 32 KiB and 8448 KiB = 132 x 64 KiB (every SM the same whole tiles; 128 KiB of both arrays per SM, the lab's
# L1 rule), --ilp 1,2,4 x --ctas-per-sm 1,2,4,8: 72 cases, each launch ~200 us (48 MiB per SM), ~20 s. Then every
# record in B/clk/SM (cold, batch, graph) and each rung's best batch figure against 120; and compute-sanitizer over
# the stream kernels at sizes with a partial last tile (1028 and 8196 f32: 257 and 2049 vectors), one pass, ~10 s.
step l1bw "$R --variant dot,smem_dot --sizes 4MiB,4224KiB,8448KiB --ilp 1,2,4 --ctas-per-sm 1,2,4,8 \
  --out $res/hierarchy_l1bw.json && python3 tools/gpu/hierarchy_checks.py l1bw $res/hierarchy_l1bw.json"
# The other streams, which share the kernel: the 16 MiB and 1 GiB cases of the committed bandwidth sweep, again
# (defaults: --ilp 4 --ctas-per-sm 4), and the ratio to it (~10 s).
step l1bw_others "$R --variant dot,dot_l2,dot_l2_all,write,copy,add,triad --sizes 16MiB,1GiB \
  --out $res/hierarchy_streams_check.json && python3 tools/gpu/hierarchy_checks.py compare \
  docs/results/h100/hierarchy/hierarchy_bandwidth_ws.json $res/hierarchy_streams_check.json"
step l1bw_memcheck "timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $bin/memlab run hierarchy --quiet \
  --variant dot,smem_dot,dot_l2_all,copy,triad --sizes 1028,8196 --ilp 1,4 --passes 1 --max-time 0.01 \
  --out $res/sanitizer_l1bw.json"

# ---- BabelStream at memlab's array sizes (f32: memlab's n = BabelStream's -s) --------------------------------------
bs=$PWD/.carry/babelstream
# BabelStream's CUDA model asks NVML only for its banner's memory clock: tools/gpu/babelstream/nvml.h
# answers from the CUDA runtime, so the build needs neither nvml.h nor libnvidia-ml (as on the dev
# machines). Its own flags (src/cuda/model.cmake): -DCUDA, GRID_STRIDE, UNROLL_FACTOR 4, -O3.
step babelstream_build "cd $bs && nvcc -O3 -std=c++17 -arch=sm_90 -DCUDA -DGRID_STRIDE -DUNROLL_FACTOR=4 --extended-lambda \
  -I$PWD/tools/gpu/babelstream -I. -Icuda -x cu main.cpp cuda/CUDAStream.cu -o $PWD/hierarchy-bin/babelstream && cat SOURCE"
for n in 33554432 268435456; do
  step babelstream_$n "$PWD/hierarchy-bin/babelstream --float -s $n -n 100 --csv"
  step memlab_streams_$n "$RB --max-time 0.5 --passes 1 --variant dot,copy,add,triad --sizes $n --out $res/hierarchy_streams_$n.json"
done
step compare_babelstream "python3 tools/gpu/hierarchy_checks.py babelstream $work $res 33554432 268435456"

# ---- pictures ------------------------------------------------------------------------------------------------
step plots "cd tools/python && python3 -m memlab_tools.plot_hierarchy $res/hierarchy_*.json -o $work/plots"  # not the sanitizer run: its timings are the tool's

# ---- summary ----------------------------------------------------------------------------------------------------
step key_figures "python3 tools/gpu/hierarchy_checks.py figures $res/hierarchy_defaults.json $res/hierarchy_plateaus_run1.json $res/hierarchy_streams_268435456.json"
echo; echo "=== hierarchy summary (total $((SECONDS - t_start)) s) ==="; printf '%s\n' "${summary[@]}" | tee "$work/summary.txt"
pack
