#!/usr/bin/env bash
# The gather lab's `sorted` against torch.index_select on the same sorted int32 indices, 2^24 f32
# lookups into an 8 MiB table, under ncu: time, DRAM and L2 traffic, requests, instructions, occupancy.
#   BIN=.carry/bin bash tools/studies/gather_vs_index_select.sh   (on the GPU machine; $OUT: results)
set -uo pipefail
bin=${BIN:-build/default/bin}; out=${OUT:-gather-vs-index-select}; mkdir -p "$out"
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second
ncu --metrics "$m" --kernel-name regex:gather_kernel --launch-count 2 --csv \
  "$bin/memlab" run gather --variant sorted --dtype f32 --sizes 2^24 --table-bytes 8MiB --profile --quiet \
  > "$out/ncu_memlab.csv" 2> "$out/ncu_memlab.err"; echo "memlab rc=$?"
PYTHONPATH=tools/python ncu --metrics "$m" --kernel-name regex:scatter_gather --launch-count 2 --csv \
  python3 -m memlab_tools.peers gather --variant torch_index_select_sorted --dtype f32 --sizes 2^24 --table-bytes 8MiB \
  --max-time 0.05 --out "$out/peers.json" > "$out/ncu_torch.csv" 2> "$out/ncu_torch.err"; echo "torch rc=$?"
tail -n 3 "$out/ncu_memlab.err" "$out/ncu_torch.err"
