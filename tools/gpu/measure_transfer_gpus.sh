#!/usr/bin/env bash
# The transfer lab on a machine of several GPUs (written for 2 and 4 H100s of one host), with its
# peers nccl-tests and nvbandwidth built from their public sources, in the same call:
#
#   build      memlab (the transfer lab, dev preset: sm_90) and its tests, the NCCL loop experiment,
#              nccl-tests (from .carry/nccl-tests, in the background; MPI=1 too where mpicc exists)
#   check      host and GPU tests of the transfer lab; compute-sanitizer memcheck on the peer rungs
#   overhead   tools/studies/nccl_loop_overhead on 2 and 4 GPUs: where a back-to-back all-reduce
#              loses time (docs/notes/nccl_timing.md)
#   nccl2 nccl4  every collective, out of place and in place, 64 B .. 8 GiB, memlab (one process) and
#              nccl-tests -g N (uint8, sum), on GPUs 0-1 and on all four
#   ranks      one process per GPU: torchrun, a Slurm-style environment and plain variables, 4 ranks,
#              64 MiB .. 8 GiB, then the network transport between the processes (sockets over
#              loopback: the stand-in for a second host)
#   faults     a rank killed mid-run; bad launches (more ranks than GPUs, an inconsistent WORLD_SIZE,
#              a rank with no GPU)
#   small      every collective at 64 B .. 16 MiB on 2 and all GPUs: memlab and nccl-tests (100 iterations a
#              figure) in the same call (docs/notes/nccl_timing.md, section 4)
#   graph      both tools in nccl-tests' graph mode (-G 10: the host's launch path out of the figure), every
#              collective and placement, 64 B .. 1 GiB, 2 and all GPUs; nccl-tests before and after memlab
#   graph_ranks  graph mode in one process per GPU (torchrun) against one process, in turn, two rounds; and
#              over the socket transport
#   mid        the host-launched method, 16 MiB .. 1 GiB on all GPUs, memlab then nccl-tests
#   repeat     one process and torchrun in turn, three rounds, every collective at 64 and 256 MiB
#   sockets    4 ranks over NCCL's socket transport on loopback (the stand-in for a second host), verified
#   pairs      the peer matrix: every ordered pair, copy engine, SM read/write, memlab::copy, one way
#              and both, 4 KiB .. 4 GiB; the latency probes; nvbandwidth's device-to-device tests
#
#   OUT=/some/dir tools/gpu/measure_transfer_gpus.sh [step ...]     (default: every step, in this order)
# Carried (git-ignored, .carry/): fmt's headers (configure once with -DMEMLAB_CARRY_FMT=ON), the
# nccl-tests source (git archive of NVIDIA/nccl-tests), bin/nvbandwidth (built elsewhere against
# Boost's static program_options: the image has no Boost program_options). Every step logs to
# $OUT/logs, is timed and may fail without stopping the next; $OUT/transfer_gpus.tgz holds the logs
# and JSON after every step. NVLink multicast stays off in every process (NCCL_NVLS_ENABLE=0 ...).
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/out-transfer-gpus}
W=${WORK:-/tmp/transfer-gpus}
LOGS=$W/logs
mkdir -p "$OUT" "$LOGS" "$W/json"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
JOBS=$(nproc)
B=$ROOT/build-gpus
M=$B/bin/memlab
J=$W/json
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build check overhead nccl2 nccl4 ranks faults pairs)
SUMMARY=$LOGS/summary.txt
touch "$SUMMARY"

# step NAME [EXPECTED_RC] -- command...: logs to $LOGS/NAME.log, records rc and seconds, packs $OUT.
step() {
  local name=$1 want=0
  shift
  if [ "$1" != "--" ]; then want=$1; shift; fi
  shift
  local t=$SECONDS
  echo "=== $name: $*" >> "$LOGS/steps.log"
  timeout "${STEP_LIMIT:-300}" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  local note=ok
  [ "$rc" != "$want" ] && note="UNEXPECTED (wanted $want)"
  printf '%-28s rc=%-4s %4ss  %s\n' "$name" "$rc" "$((SECONDS - t))" "$note" | tee -a "$SUMMARY"
  tail -n 2 "$LOGS/$name.log" | cut -c1-220 | sed 's/^/    /'
  cp "$J"/*.json "$LOGS"/ 2>/dev/null
  tar -czf "$OUT/transfer_gpus.tgz" -C "$W" logs
}

NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null || true)
export LD_LIBRARY_PATH=${NCCL_DIR:+$NCCL_DIR/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NT=$W/nccl-tests/build
NTM=$W/nccl-tests-mpi/build
NGPU=$(nvidia-smi -L | wc -l)

machine() {
  date -u; nproc; free -g | head -2
  nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s | head -24
  nvidia-smi -q | grep -iA12 "GPU Link Info" | head -30
  echo "NCCL: $NCCL_DIR"; ls "$NCCL_DIR/lib" 2>&1; python3 -c "import nvidia.nccl, importlib.metadata as m; print('nvidia-nccl-cu13', m.version('nvidia-nccl-cu13'))"
  which mpirun mpicc torchrun srun 2>&1; python3 -c "import torch; print('torch', torch.__version__)"
  env | grep -E "^(NCCL|TORCH_SYMM|NVSHMEM)" | sort
}

build_peers() {
  local home=$W/nccl_home
  mkdir -p "$home/lib" "$W/cuda_lib"
  ln -sfn "$NCCL_DIR/include" "$home/include"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$home/lib/libnccl.so.2"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$home/lib/libnccl.so"
  ln -sf /usr/local/cuda/lib64/libcudart.so "$W/cuda_lib/libcudart.so"
  rm -rf "$W/nccl-tests" && cp -r "$ROOT/.carry/nccl-tests" "$W/nccl-tests"
  make -C "$W/nccl-tests" -j "$JOBS" MPI=0 CUDA_HOME=/usr/local/cuda CUDA_LIB="$W/cuda_lib" NCCL_HOME="$home" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build
  echo "nccl-tests MPI=0 rc=$?"
  if command -v mpicc > /dev/null; then
    # nccl-tests reads $MPI_HOME/include and $MPI_HOME/lib: a home of links to where mpicc says they are.
    local mpi=$W/mpi_home
    mkdir -p "$mpi"
    ln -sfn "$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}')" "$mpi/include"
    ln -sfn "$(mpicc --showme:libdirs 2>/dev/null | awk '{print $1}')" "$mpi/lib"
    rm -rf "$W/nccl-tests-mpi" && cp -r "$ROOT/.carry/nccl-tests" "$W/nccl-tests-mpi"
    make -C "$W/nccl-tests-mpi" -j "$JOBS" MPI=1 MPI_HOME="$mpi" \
      CUDA_HOME=/usr/local/cuda CUDA_LIB="$W/cuda_lib" NCCL_HOME="$home" \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build
    echo "nccl-tests MPI=1 rc=$?"
  else
    echo "no mpicc on this machine: nccl-tests runs as one process driving N GPUs (-g N) only"
  fi
}

# memlab, one process: every collective, both placements, on the first N GPUs.
SIZES_COLL=64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB,1GiB,4GiB,8GiB
COLLECTIVES=nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all,nccl_sendrecv
memlab_collectives() {  # N
  "$M" run transfer --quiet --variant "$COLLECTIVES" --gpus "$1" --placement all --sizes "$SIZES_COLL" \
    --max-time 0.2 --out "$J/collectives_${1}gpu.json"
}
nccl_tests_all() {  # N: every collective, as nccl-tests prints it (uint8, sum; out of place and in place)
  for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    echo "#### ${t}_perf -g $1"
    "$NT/${t}_perf" -b 64 -e 8G -f 4 -g "$1" -d uint8 -o sum -w 1 -n 20 -c 1
    echo "#### rc=$?"
    # -f 4 from 64 B stops at 4 GiB: 8 GiB on its own.
    echo "#### ${t}_perf -g $1"
    "$NT/${t}_perf" -b 8G -e 8G -g "$1" -d uint8 -o sum -w 1 -n 20 -c 1
    echo "#### rc=$?"
  done
}

nccl_tests_range() {  # N MIN MAX: every collective from MIN to MAX (x4), as nccl_tests_all runs it
  for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    echo "#### ${t}_perf -g $1"
    "$NT/${t}_perf" -b "$2" -e "$3" -f 4 -g "$1" -d uint8 -o sum -w 1 -n 20 -c 1
    echo "#### rc=$?"
  done
}

nccl_tests_small() {  # N: every collective at 64 B .. 16 MiB, 100 iterations behind each figure
  for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    echo "#### ${t}_perf -g $1"
    "$NT/${t}_perf" -b 64 -e 16M -f 4 -g "$1" -d uint8 -o sum -w 20 -n 100 -c 1
    echo "#### rc=$?"
  done
}
SIZES_SMALL=64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB

# nccl-tests' graph mode (-G 10: the 20 iterations captured once a GPU, replayed 10 times a figure), 64 B .. 1 GiB
# with buffers of 1 GiB: every iteration's buffers rotate as memlab's loop rotates them (as many regions of the
# size as 1 GiB holds, at most the 20 iterations).
# GRAPH_LAUNCHES (default 10): replays a figure, on both sides; GRAPH_MAX (default 1G): the largest size.
nccl_tests_graph() {  # N
  for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    echo "#### ${t}_perf -g $1"
    "$NT/${t}_perf" -b 64 -e "${GRAPH_MAX:-1G}" -f 4 -g "$1" -d uint8 -o sum -w 5 -n 20 -G "${GRAPH_LAUNCHES:-10}" -c 1
    echo "#### rc=$?"
  done
}
SIZES_GRAPH=64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB,1GiB
[ -n "${GRAPH_MAX:-}" ] && SIZES_GRAPH=$(python3 -c "
import sys; units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
top = '${GRAPH_MAX}'; top = int(top[:-1]) * units[top[-1]] if top[-1] in units else int(top)
names = '$SIZES_GRAPH'.split(',')
def v(n):
    for u, m in (('KiB', 1 << 10), ('MiB', 1 << 20), ('GiB', 1 << 30)):
        if n.endswith(u): return int(n[:-3]) * m
    return int(n)
print(','.join(n for n in names if v(n) <= top))")

# `timeout` runs programs, not shell functions: the functions above run through bash -c.
export -f memlab_collectives nccl_tests_all nccl_tests_range nccl_tests_small nccl_tests_graph
export M J NT SIZES_COLL COLLECTIVES GRAPH_LAUNCHES GRAPH_MAX

for s in "${steps[@]}"; do
  case $s in
    build)
      machine > "$LOGS/machine.log" 2>&1
      build_peers > "$LOGS/build_peers.log" 2>&1 &
      PEERS=$!
      step configure -- cmake --preset dev -B "$B" -DMEMLAB_ONLY_LABS=transfer ${NCCL_DIR:+-DMEMLAB_NCCL_ROOT=$NCCL_DIR}
      step build -- cmake --build "$B" -j "$JOBS" --target memlab_cli memlab_gpu_tests memlab_labs_tests memlab_host_tests
      step build_overhead -- nvcc -O3 -arch=sm_90 -I"$NCCL_DIR/include" -o "$W/nccl_loop_overhead" \
        tools/studies/nccl_loop_overhead.cu -L"$NCCL_DIR/lib" -l:libnccl.so.2
      wait $PEERS
      tail -3 "$LOGS/build_peers.log"
      ;;
    check)
      step host_tests -- bash -c "'$B/bin/memlab_host_tests' --gtest_filter='launcher*:writers*' && '$B/bin/memlab_labs_tests' --gtest_filter='transfer*'"
      step gpu_tests -- "$B/bin/memlab_gpu_tests" --gtest_filter='*transfer*'
      # --report-api-errors no: the peer rungs meet two errors they handle (peer access already on; a
      # peer copy a graph capture refuses: no graph figure), which memcheck would count.
      step memcheck_peers -- compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 "$M" run transfer --quiet \
        --variant peer_ce,peer_ce_bidir,peer_sm_read,peer_sm_write,peer_sm_bidir,peer_auto,peer_auto_bidir,peer_chase \
        --peer 1 --sizes 100003 --max-time 0.01
      # (not peer_pingpong: the sanitizer runs one kernel at a time, and a ping-pong needs both sides at once)
      # A first look at one process per GPU before the long steps (2 ranks, plain variables).
      step ranks_smoke -- bash -c "for r in 0 1; do RANK=\$r WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce,nccl_sendrecv --sizes 1MiB --max-time 0.2 --rank-timeout 20 --out '$J/ranks_smoke.json' & done; wait"
      ;;
    overhead)
      step overhead_2gpu -- "$W/nccl_loop_overhead" 2
      [ "$NGPU" -ge 4 ] && step overhead_4gpu -- "$W/nccl_loop_overhead" 4
      ;;
    nccl2)
      STEP_LIMIT=400 step memlab_collectives_2gpu -- bash -c "memlab_collectives 2"
      step nccl_tests_2gpu -- bash -c "nccl_tests_all 2"
      ;;
    nccl4)
      [ "$NGPU" -ge 4 ] || continue
      STEP_LIMIT=400 step memlab_collectives_4gpu -- bash -c "memlab_collectives 4"
      step nccl_tests_4gpu -- bash -c "nccl_tests_all 4"
      ;;
    ranks)
      R_SIZES=64MiB,256MiB,1GiB,4GiB
      R_ARGS=(run transfer --variant "$COLLECTIVES" --placement out_of_place --sizes "$R_SIZES" --max-time 0.3 --rank-timeout 60)
      step ranks_one_process -- "$M" "${R_ARGS[@]}" --quiet --gpus "$NGPU" --out "$J/ranks_one_process.json"
      step ranks_torchrun -- torchrun --standalone --nproc-per-node "$NGPU" --no-python "$M" "${R_ARGS[@]}" \
        --out "$J/ranks_torchrun.json"
      step ranks_slurm_env -- bash -c "for r in \$(seq 0 $((NGPU - 1))); do SLURM_PROCID=\$r SLURM_LOCALID=\$r SLURM_NODEID=0 SLURM_STEP_NUM_TASKS=$NGPU SLURM_STEP_TASKS_PER_NODE=$NGPU SLURM_JOB_ID=4242 '$M' ${R_ARGS[*]} --out '$J/ranks_slurm_env.json' & done; wait"
      # The network transport between the processes, as between two hosts: sockets over loopback.
      step ranks_sockets -- bash -c "for r in \$(seq 0 $((NGPU - 1))); do NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo RANK=\$r WORLD_SIZE=$NGPU '$M' run transfer --variant nccl_all_reduce,nccl_sendrecv --placement out_of_place --sizes 1MiB,64MiB --max-time 0.5 --out '$J/ranks_sockets.json' & done; wait"
      if [ -x "$NTM/all_reduce_perf" ]; then
        step nccl_tests_mpi -- mpirun --allow-run-as-root -np "$NGPU" "$NTM/all_reduce_perf" -b 64M -e 8G -f 4 -g 1 -d uint8
        step ranks_mpirun -- mpirun --allow-run-as-root -np "$NGPU" -x NCCL_NVLS_ENABLE "$M" "${R_ARGS[@]}" --out "$J/ranks_mpirun.json"
      fi
      ;;
    faults)
      # A rank killed mid-run: the others stop within the deadline, naming it; rank 0 keeps its file.
      step fault_kill -- bash "$ROOT/tools/gpu/kill_one_rank.sh" "$M" "$NGPU" "$J/fault_kill.json" "$LOGS"
      step fault_more_ranks_than_gpus 3 -- env RANK=0 WORLD_SIZE=8 LOCAL_RANK=0 LOCAL_WORLD_SIZE=8 "$M" run transfer --variant nccl_all_reduce
      step fault_bad_world_size 2 -- env RANK=4 WORLD_SIZE=4 "$M" run transfer --variant nccl_all_reduce
      step fault_gpus_flag 2 -- env RANK=0 WORLD_SIZE=2 "$M" run transfer --variant nccl_all_reduce --gpus 4
      step fault_no_gpu_rank -- bash -c "CUDA_VISIBLE_DEVICES= RANK=1 WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce --rank-timeout 15; echo rank1 rc=\$?; RANK=0 WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce --rank-timeout 15; echo rank0 rc=\$?"
      step fault_too_many_gpus 3 -- "$M" run transfer --variant nccl_all_reduce --gpus 8
      ;;
    pairs)
      PEER_RUNGS=peer_ce,peer_ce_bidir,peer_sm_read,peer_sm_write,peer_sm_bidir,peer_auto,peer_auto_bidir
      STEP_LIMIT=420 step pairs_bandwidth -- "$M" run transfer --quiet --device all --peer all --variant "$PEER_RUNGS" \
        --sizes 4KiB..256MiB:*16 --max-time 0.15 --out "$J/pairs.json"
      # 4 GiB (a gigabyte's check on the host takes seconds): the pairs from GPU 0.
      step pairs_4gib -- "$M" run transfer --quiet --device 0 --peer all --variant "$PEER_RUNGS" --sizes 4GiB \
        --max-time 0.3 --out "$J/pairs_4gib.json"
      step pairs_latency -- "$M" run transfer --quiet --device all --peer all --variant peer_chase,peer_pingpong \
        --sizes 1MiB,1GiB --max-time 0.2 --out "$J/pairs_latency.json"
      if [ -x "$ROOT/.carry/bin/nvbandwidth" ]; then
        step nvbandwidth -- "$ROOT/.carry/bin/nvbandwidth" -b 1024 -t device_to_device_memcpy_read_ce \
          device_to_device_memcpy_write_ce device_to_device_bidirectional_memcpy_read_ce \
          device_to_device_bidirectional_memcpy_write_ce device_to_device_memcpy_read_sm device_to_device_memcpy_write_sm \
          device_to_device_bidirectional_memcpy_read_sm device_to_device_bidirectional_memcpy_write_sm \
          device_to_device_latency_sm
      fi
      ;;
    small)
      # Below 16 MiB both figures are the host's launch path. memlab and nccl-tests in the same call, on the
      # same GPUs, every collective and placement, 64 B .. 16 MiB; nccl-tests with 20 warm-up iterations and
      # 100 behind each figure (its default 20 is one draw of a wide distribution at these sizes) and its
      # buffers no larger than 16 MiB.
      STEP_LIMIT=400 step small_memlab -- "$M" run transfer --quiet --variant "$COLLECTIVES" --gpus 2,"$NGPU" \
        --placement all --sizes "$SIZES_SMALL" --max-time 0.2 --out "$J/small_memlab.json"
      step small_nccl_tests -- bash -c "nccl_tests_small 2; [ $NGPU -gt 2 ] && nccl_tests_small $NGPU"
      ;;
    graph)
      # Both tools in nccl-tests' graph mode, every collective and placement, 64 B .. 1 GiB, 2 and all GPUs, same
      # call; nccl-tests twice (its own repeatability), before and after memlab.
      # GRAPH_GPUS: the GPU counts (default 2 and all); GRAPH_CYCLES=1: nccl-tests before memlab only.
      GPU_COUNTS=${GRAPH_GPUS:-2}; [ -z "${GRAPH_GPUS:-}" ] && [ "$NGPU" -gt 2 ] && GPU_COUNTS=2,$NGPU
      # GRAPH_LAUNCHES, GRAPH_MAX: as nccl_tests_graph reads them; GRAPH_TAG names the files (default graph);
      # GRAPH_MEMLAB=0: nccl-tests alone.
      G=${GRAPH_TAG:-graph}
      step "${G}_nccl_tests_a" -- bash -c "for g in ${GPU_COUNTS//,/ }; do nccl_tests_graph \$g; done"
      [ "${GRAPH_MEMLAB:-1}" = 1 ] && STEP_LIMIT=500 step "${G}_memlab" -- "$M" run transfer --quiet --variant "$COLLECTIVES" --gpus "$GPU_COUNTS" \
        --placement all --sizes "$SIZES_GRAPH" --max-time 0.2 --nccl-tests-graph "${GRAPH_LAUNCHES:-10}" \
        --out "$J/${G}_memlab.json"
      [ "${GRAPH_CYCLES:-2}" -ge 2 ] && step "${G}_nccl_tests_b" -- bash -c "for g in ${GPU_COUNTS//,/ }; do nccl_tests_graph \$g; done"
      ;;
    graph_ranks)
      # Graph mode in one process per GPU (every rank captures its own stream) against one process, in turn,
      # every collective out of place at 1 KiB, 1 MiB and 64 MiB; then over NCCL's socket transport.
      GR_ARGS=(run transfer --variant "$COLLECTIVES" --placement out_of_place --sizes 1KiB,1MiB,64MiB --max-time 0.3
        --nccl-tests-graph "${GRAPH_LAUNCHES:-10}" --rank-timeout 60)
      for round in 1 2; do
        step "graph_one_process_$round" -- "$M" "${GR_ARGS[@]}" --quiet --gpus "$NGPU" --out "$J/graph_one_process_$round.json"
        step "graph_torchrun_$round" -- torchrun --standalone --nproc-per-node "$NGPU" --no-python "$M" "${GR_ARGS[@]}" \
          --out "$J/graph_torchrun_$round.json"
      done
      step graph_sockets -- bash -c "for r in \$(seq 0 $((NGPU - 1))); do NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo RANK=\$r WORLD_SIZE=$NGPU '$M' run transfer --variant nccl_all_reduce,nccl_sendrecv --placement out_of_place --sizes 1MiB,64MiB --max-time 0.5 --nccl-tests-graph ${GRAPH_LAUNCHES:-10} --out '$J/graph_sockets.json' & done; wait"
      ;;
    mid)
      # The host-launched method again, 16 MiB .. 1 GiB on all GPUs, memlab then nccl-tests, same call.
      STEP_LIMIT=400 step host_16MiB_1GiB_memlab -- "$M" run transfer --quiet --variant "$COLLECTIVES" --gpus "$NGPU" --placement all \
        --sizes 16MiB,64MiB,256MiB,1GiB --max-time 0.2 --out "$J/host_16MiB_1GiB_memlab.json"
      step host_16MiB_1GiB_nccl_tests -- bash -c "nccl_tests_range $NGPU 16M 1G"
      ;;
    repeat)
      # One process against torchrun at 64 and 256 MiB, in turn, three rounds, four times the default sampling:
      # how far the two modes part against how far each moves between its own rounds.
      P_ARGS=(run transfer --variant "$COLLECTIVES" --placement out_of_place --sizes 64MiB,256MiB --max-time 1.0 --rank-timeout 60)
      for round in 1 2 3; do
        step "repeat_one_process_$round" -- "$M" "${P_ARGS[@]}" --quiet --gpus "$NGPU" --out "$J/repeat_one_process_$round.json"
        step "repeat_torchrun_$round" -- torchrun --standalone --nproc-per-node "$NGPU" --no-python "$M" "${P_ARGS[@]}" \
          --out "$J/repeat_torchrun_$round.json"
      done
      ;;
    sockets)
      step ranks_sockets -- bash -c "for r in \$(seq 0 $((NGPU - 1))); do NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo RANK=\$r WORLD_SIZE=$NGPU '$M' run transfer --variant nccl_all_reduce,nccl_sendrecv --placement out_of_place --sizes 1MiB,64MiB --max-time 0.5 --out '$J/ranks_sockets.json' & done; wait"
      ;;
    *) echo "unknown step $s" ;;
  esac
done
echo; echo "==== summary ===="; cat "$SUMMARY"
