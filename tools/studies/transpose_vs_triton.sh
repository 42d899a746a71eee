#!/usr/bin/env bash
# memlab's best transpose (smem_vec_rows) against Triton's at 16384² f32 under ncu: time, DRAM and L2
# traffic, occupancy, shared-memory conflicts, instructions; and Triton's cubin for its SASS.
#   BIN=.carry/bin bash tools/studies/transpose_vs_triton.sh   (on the GPU machine; $OUT: results)
set -uo pipefail
bin=${BIN:-build/default/bin}; out=${OUT:-transpose-vs-triton}; mkdir -p "$out"
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread
m=$m,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_registers
m=$m,launch__occupancy_limit_shared_mem,sm__maximum_warps_per_active_cycle_pct
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second
ncu --metrics "$m" --kernel-name regex:smem_vec_rows --launch-count 3 --csv \
  "$bin/memlab" run transpose --variant smem_vec_rows --dtype f32 --shape 16384x16384 --profile --quiet \
  > "$out/ncu_memlab.csv" 2> "$out/ncu_memlab.err"; echo "memlab rc=$?"
export TRITON_CACHE_DIR="$out/triton_cache"
PYTHONPATH=tools/python ncu --metrics "$m" --kernel-name regex:transpose --launch-count 3 --csv \
  python3 -m memlab_tools.peers transpose --variant triton_transpose --dtype f32 --shape 16384x16384 --max-time 0.05 \
  --out "$out/peers.json" > "$out/ncu_triton.csv" 2> "$out/ncu_triton.err"; echo "triton rc=$?"
find "$out/triton_cache" -name '*.cubin' -o -name '*.ptx' -o -name '*.json' | head -20
tail -3 "$out/ncu_memlab.err" "$out/ncu_triton.err"
