#!/usr/bin/env bash
# The transfer lab on a machine of several GPUs of one host (2, 4 or 8 H100s or H200s) against its peers
# nccl-tests and nvbandwidth, one binary, its commit in every file. Each STEP fits one call of the device
# tool (10 minutes); the build stays on a warm machine between calls, so `build` runs first, once.
#
#   build          memlab (transfer lab, dev preset: sm_90) and its tests; nccl-tests from .carry/nccl-tests
#                  (MPI=1 too where mpicc exists); nvbandwidth (.carry/bin/nvbandwidth, else built from
#                  .carry/nvbandwidth); the machine's description; then `check`
#   check          host tests (launchers, the ranks' watch, NCCL's loader, srun where Slurm is), the transfer
#                  lab's GPU tests, the NCCL-less CLI tests
#   graph N        collectives in nccl-tests' graph mode (-G 100: with 10 replays nccl-tests' first one, which
#                  also uploads the graphs, weighs on its small sizes) on N GPUs, 64 B .. 64 MiB, both placements:
#                  nccl-tests 5 cycles (-e 64M, memlab's largest size) interleaved with 2 memlab runs; judged:
#                  within 3% of nccl-tests' median from 1 MiB, within 5% or 2 us below, the runs within 2%
#   host N [FROM TO]  the same host-launched (nccl-tests' default loop), FROM .. TO (default 16 MiB .. 8 GiB;
#                  nccl-tests' -e = TO), within 3%
#   pairs [SIZES [RUNGS]]  every ordered pair, peer copies one way and both (default 1GiB,4GiB and the copy
#                  engine and SM rungs), and nvbandwidth's matching tests at each size; judged: the copy engine
#                  at least 85% of the NVLink data rate a direction and within 1% of nvbandwidth
#   sweep          every ordered pair, every peer rung one way and both, 4 KiB .. 256 MiB
#   latency        every ordered pair: a chase of the peer's memory and a ping-pong, at 1 MiB and 1 GiB
#   ranks          one process per GPU (every GPU): one process, torchrun, srun --mpi=pmi2 and mpirun in turn,
#                  3 rounds, every collective out of place at 64 MiB, 256 MiB, 1 GiB; judged: each launcher's
#                  median within 3% of one process's. srun: a one-node Slurm started here where the machine has
#                  Slurm (tools/gpu/local_slurm.py), else the environments a real srun gave (.carry/srun_env,
#                  captured by tools/gpu/carry_peers.sh), replayed
#   faults         for every launcher: a rank killed mid-run (the others out within --rank-timeout + 5 s,
#                  naming it and its host); a rank stopped (SIGSTOP: no progress, out after --rank-timeout); a
#                  healthy wait longer than --rank-timeout (graph mode, 100 replays of 4 GiB) completing; bad
#                  input: one line, exit 2 or 3, before any collective (ranks started with different WORLD_SIZE
#                  included)
#
# Calls per machine kind (README.md in this folder): x2: build, graph 2, host 2, pairs, sweep -- latency,
# ranks, faults; x4: the same with graph 4 and host 4 as well; x8: build, graph 8, host 8,
# pairs 1GiB peer_ce,peer_ce_bidir, pairs 1GiB peer_sm_read,peer_sm_write,peer_sm_bidir, latency, ranks, faults.
#
#   OUT=/some/dir tools/gpu/measure_transfer_gpus.sh STEP [ARG...] [-- STEP [ARG...]]...
# Works in $WORK/transfer_gpus/ (default /tmp/transfer-gpus: it outlasts the call on a warm machine, so later
# steps judge earlier ones' files): logs/<step>.log, json/*.json, judged/*.md, summary.txt (a line per step, its
# rc, seconds, and the judge's verdict). Each call leaves TWO files in $OUT (the device tool brings back at most
# 8): transfer_gpus.tgz (that folder, every call so far) and transfer_gpus_summary.txt. A step may fail without stopping the next. NVLink multicast stays
# off in every process (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1).
# Carried (git-ignored, .carry/, tools/gpu/carry_peers.sh makes it): fmt's headers, the nccl-tests source,
# nvbandwidth (binary or source), srun's environments.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/out-transfer-gpus}
W=${WORK:-/tmp/transfer-gpus}
D=$W/transfer_gpus
LOGS=$D/logs J=$D/json JD=$D/judged
mkdir -p "$LOGS" "$J" "$JD" "$W"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
JOBS=$(nproc)
B=$ROOT/build-gpus
M=$B/bin/memlab
SUMMARY=$D/summary.txt
touch "$SUMMARY"
JUDGE="python3 $ROOT/tools/gpu/judge_transfer_gpus.py"
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null || true)
export LD_LIBRARY_PATH=${NCCL_DIR:+$NCCL_DIR/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NT=$W/nccl-tests/build
NTM=$W/nccl-tests-mpi/build
NVB=$W/nvbandwidth
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
COLLECTIVES=nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all,nccl_sendrecv
NT_TESTS="all_reduce all_gather reduce_scatter broadcast alltoall sendrecv"

# step NAME [WANTED_RC] -- command...: logs to $LOGS/NAME.log, records rc and seconds.
step() {
  local name=$1 want=0
  shift
  if [ "$1" != "--" ]; then want=$1; shift; fi
  shift
  local t=$SECONDS
  echo "=== $name: $*" >> "$LOGS/steps.log"
  timeout "${STEP_LIMIT:-560}" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  local note=ok
  [ "$rc" != "$want" ] && note="UNEXPECTED (wanted $want)"
  printf '%-34s rc=%-4s %4ss  %s\n' "$name" "$rc" "$((SECONDS - t))" "$note" | tee -a "$SUMMARY"
  tail -n 2 "$LOGS/$name.log" | cut -c1-240 | sed 's/^/    /'
}
# judge NAME judge-args...: the rule's verdict, into judged/NAME.md and the summary.
judge() {
  local name=$1
  shift
  $JUDGE "$@" -o "$JD/$name.md" 2> "$LOGS/judge_$name.log"
  printf '%-34s %s\n' "judged $name" "$(tail -1 "$LOGS/judge_$name.log")" | tee -a "$SUMMARY"
}

machine() {
  date -u; nproc; free -g | head -2
  echo "memlab commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null) $(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) changed files"
  nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s | head -24
  echo "NCCL: $NCCL_DIR"; python3 -c "import importlib.metadata as m; print('nvidia-nccl-cu13', m.version('nvidia-nccl-cu13'))"
  which mpirun mpicc torchrun srun slurmctld 2>&1; python3 -c "import torch; print('torch', torch.__version__)"
  env | grep -E "^(NCCL|TORCH_SYMM|NVSHMEM)" | sort
}

build_peers() {
  local home=$W/nccl_home
  mkdir -p "$home/lib" "$W/cuda_lib"
  ln -sfn "$NCCL_DIR/include" "$home/include"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$home/lib/libnccl.so.2"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$home/lib/libnccl.so"
  # CUDA_LIB holds libcudart alone: the toolkit's lib64 may carry another libnccl.so.
  ln -sf /usr/local/cuda/lib64/libcudart.so "$W/cuda_lib/libcudart.so"
  rm -rf "$W/nccl-tests" && cp -r "$ROOT/.carry/nccl-tests" "$W/nccl-tests"
  make -C "$W/nccl-tests" -j "$JOBS" MPI=0 CUDA_HOME=/usr/local/cuda CUDA_LIB="$W/cuda_lib" NCCL_HOME="$home" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build
  echo "nccl-tests MPI=0 rc=$?"
  if command -v mpicc > /dev/null; then
    local mpi=$W/mpi_home
    mkdir -p "$mpi"
    ln -sfn "$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}')" "$mpi/include"
    ln -sfn "$(mpicc --showme:libdirs 2>/dev/null | awk '{print $1}')" "$mpi/lib"
    rm -rf "$W/nccl-tests-mpi" && cp -r "$ROOT/.carry/nccl-tests" "$W/nccl-tests-mpi"
    make -C "$W/nccl-tests-mpi" -j "$JOBS" MPI=1 MPI_HOME="$mpi" CUDA_HOME=/usr/local/cuda CUDA_LIB="$W/cuda_lib" \
      NCCL_HOME="$home" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build
    echo "nccl-tests MPI=1 rc=$?"
  fi
  # nvbandwidth: the carried binary where it runs here, else from the carried source (needs Boost's
  # program_options: the image's, or .carry/boost).
  if [ -x "$ROOT/.carry/bin/nvbandwidth" ] && "$ROOT/.carry/bin/nvbandwidth" --help > /dev/null 2>&1; then
    cp "$ROOT/.carry/bin/nvbandwidth" "$NVB"
  elif [ -d "$ROOT/.carry/nvbandwidth" ]; then
    rm -rf "$W/nvbandwidth-src" && cp -r "$ROOT/.carry/nvbandwidth" "$W/nvbandwidth-src"
    local boost=""
    [ -d "$ROOT/.carry/boost" ] && boost="-DBoost_ROOT=$ROOT/.carry/boost"
    (cd "$W/nvbandwidth-src" && cmake -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $boost \
      -DCMAKE_EXE_LINKER_FLAGS="-L/usr/local/cuda/lib64/stubs" && cmake --build build -j "$JOBS") &&
      cp "$W/nvbandwidth-src/build/nvbandwidth" "$NVB"
  fi
  [ -x "$NVB" ] && "$NVB" --help | head -3 || echo "no nvbandwidth: the pairs are not compared with it"
}

# nccl-tests, every collective on N GPUs (one process, -g N), uint8 sum; ARGS: its size range and method.
nccl_tests() {  # N ARGS...
  local n=$1
  shift
  for t in $NT_TESTS; do
    echo "#### ${t}_perf -g $n $*"
    "$NT/${t}_perf" -g "$n" -d uint8 -o sum "$@"
    echo "#### rc=$?"
  done
}

# Collectives on N GPUs by a method: nccl-tests' cycles 1, memlab A, cycles 2 and 3, memlab B, cycles 4 and 5
# (the two tools in turn, so that neither owns a quiet or a busy stretch of the call), then the judge.
collectives() {  # NAME N MODE SIZES NT_ARGS [MEMLAB_ARGS...]
  local name=$1 n=$2 mode=$3 sizes=$4 nt_args=$5
  shift 5
  local logs=() runs=()
  for part in c1 mA c2 c3 mB c4 c5; do
    case $part in
      c*) step "${name}_nccl_tests_$part" -- bash -c "nccl_tests $n $nt_args"
          cp "$LOGS/${name}_nccl_tests_$part.log" "$J/${name}_nccl_tests_$part.log"
          logs+=("$J/${name}_nccl_tests_$part.log") ;;
      m*) step "${name}_memlab_$part" -- "$M" run transfer --quiet --variant "$COLLECTIVES" --gpus "$n" --placement all \
            --sizes "$sizes" --max-time "${MAX_TIME:-0.2}" "$@" --out "$J/${name}_memlab_$part.json"
          runs+=("$J/${name}_memlab_$part.json") ;;
    esac
  done
  judge "$name" collectives --mode "$mode" --memlab "${runs[@]}" --nccl-tests "${logs[@]}"
}

# One process per GPU under LAUNCHER (every GPU of the machine), the memlab arguments after it.
ranks_run() {  # LAUNCHER OUT.json MEMLAB_ARGS...
  local launcher=$1 out=$2
  shift 2
  case $launcher in
    one_process) "$M" "$@" --quiet --gpus "$NGPU" --out "$out" ;;
    torchrun) torchrun --standalone --nproc-per-node "$NGPU" --no-python "$M" "$@" --out "$out" ;;
    mpirun) mpirun --allow-run-as-root -np "$NGPU" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "$M" "$@" --out "$out" ;;
    env) for r in $(seq 0 $((NGPU - 1))); do RANK=$r WORLD_SIZE=$NGPU "$M" "$@" --out "$out" & done; wait ;;
    srun_pmi2 | srun_pmix | srun)
      local mpi=${launcher#srun_}
      [ "$launcher" = srun ] && mpi=none
      if [ -n "${SLURM_CONF:-}" ]; then
        srun -n "$NGPU" --mpi="$mpi" "$M" "$@" --out "$out"
      else  # the environments a real srun gave, replayed, a process each
        local envs=$ROOT/.carry/srun_env/${mpi}_$NGPU
        [ -d "$envs" ] || { echo "no Slurm here and no $envs (tools/gpu/carry_peers.sh)"; return 3; }
        for r in $(seq 0 $((NGPU - 1))); do
          (set -a && . "$envs/$r.env" && set +a && exec "$M" "$@" --out "$out") &
        done
        wait
      fi ;;
  esac
}
# The launchers this machine has: torchrun, srun --mpi=pmi2 (its plain launch reads the same Slurm variables
# and is tested on the host: tests/harness/test_srun.py), mpirun where it is installed.
launchers() {
  local l="torchrun srun_pmi2"
  command -v mpirun > /dev/null && l="$l mpirun"
  echo "$l"
}

export -f nccl_tests ranks_run
export M NT NT_TESTS NGPU LD_LIBRARY_PATH ROOT

start_slurm() {
  if python3 "$ROOT/tools/gpu/local_slurm.py" start "$W/slurm" --cpus "$((NGPU * 2))" > "$W/slurm.env" 2> "$LOGS/slurm.log"; then
    . "$W/slurm.env"
    export SLURM_CONF
  fi
}
stop_slurm() { [ -n "${SLURM_CONF:-}" ] && python3 "$ROOT/tools/gpu/local_slurm.py" stop "$W/slurm"; unset SLURM_CONF; }

# A run of one process per GPU under LAUNCHER with rank 1 sent SIGNAL (KILL: it dies; STOP: alive and stuck) AT
# s in: every other rank must be out within --rank-timeout + 5 s of it, naming the rank (killed) or the lack
# of progress (stopped). Timed from the signal to the last other rank's exit (the launcher may take longer to
# give up on the stopped one: it is killed after).
fault() {  # LAUNCHER SIGNAL AT TIMEOUT
  local launcher=$1 sig=$2 at=$3 timeout=$4
  local tag=fault_${launcher}_${sig}
  ranks_run "$launcher" "$J/$tag.json" run transfer --variant nccl_all_reduce,nccl_all_gather --placement out_of_place \
    --sizes 64MiB..8GiB:*2 --max-time 3 --rank-timeout "$timeout" > "$LOGS/$tag.ranks.log" 2>&1 &
  local group=$!
  sleep "$at"
  # The ranks: the memlab processes this run started; rank 1 by its environment, whoever started it.
  local victim="" others=()
  for p in $(pgrep -f "$M run transfer"); do
    [ "$(readlink -f "/proc/$p/exe")" = "$(readlink -f "$M")" ] || continue  # not a launcher's own process
    if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qE "^(RANK|OMPI_COMM_WORLD_RANK|PMI_RANK|SLURM_PROCID)=1$"; then
      victim=$p
    else
      others+=("$p")
    fi
  done
  [ -z "$victim" ] && { echo "no rank 1 found"; kill -9 $group; return 1; }
  local t0=$SECONDS
  kill -"$sig" "$victim" && echo "sent SIG$sig to rank 1 (pid $victim) at $at s; the other ranks: ${others[*]}"
  while [ $((SECONDS - t0)) -le $((timeout + 60)) ]; do
    local alive=0
    for p in "${others[@]}"; do kill -0 "$p" 2> /dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  local took=$((SECONDS - t0))
  kill -9 "$victim" 2> /dev/null
  wait $group
  echo "the other ranks were out $took s after the signal (limit: --rank-timeout $timeout + 5 s); the launcher's rc=$?"
  grep -h "memlab: rank" "$LOGS/$tag.ranks.log" | head -8
  [ "$took" -le $((timeout + 5)) ]
}
export -f fault start_slurm stop_slurm launchers
export J LOGS W

run_step() {
  local s=$1
  shift
  case $s in
    build)
      machine > "$LOGS/machine.log" 2>&1
      build_peers > "$LOGS/build_peers.log" 2>&1 &
      local peers=$!
      step configure -- cmake --preset dev -B "$B" -DMEMLAB_ONLY_LABS=transfer ${NCCL_DIR:+-DMEMLAB_NCCL_ROOT=$NCCL_DIR}
      step build_memlab -- cmake --build "$B" -j "$JOBS" --target memlab_cli memlab_gpu_tests memlab_labs_tests \
        memlab_host_tests memlab_cli_tests
      wait $peers
      tail -4 "$LOGS/build_peers.log"
      "$M" --version > "$D/memlab_version.txt" 2>&1
      run_step check
      ;;
    check)
      step host_tests -- bash -c "'$B/bin/memlab_host_tests' --gtest_filter='launcher*:progress_deadline*:rank_links*:nccl_loader*' && '$B/bin/memlab_labs_tests' --gtest_filter='transfer*'"
      step srun_test -- python3 "$ROOT/tests/harness/test_srun.py" "$M"
      step cli_nccl_tests -- "$B/bin/memlab_cli_tests" --gtest_filter='nccl_on_first_use*'
      step gpu_tests -- "$B/bin/memlab_gpu_tests" --gtest_filter='*transfer*'
      ;;
    graph)
      local n=${1:-2}
      collectives "graph${n}" "$n" graph 64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB \
        "-b 64 -e 64M -f 4 -w 5 -n 20 -G 100 -c 0" --nccl-tests-graph 100
      ;;
    host)
      # host N [FROM TO]: memlab's sizes and nccl-tests' -b/-e alike (doubling), default 16 MiB .. 8 GiB.
      local n=${1:-2} from=${2:-16MiB} to=${3:-8GiB}
      collectives "host${n}_${from}_${to}" "$n" host "${from}..${to}:*2" \
        "-b $(numfmt --from=iec "${from%B}") -e $(numfmt --from=iec "${to%B}") -f 2 -w 1 -n 20 -c 0"
      ;;
    pairs)
      local sizes=${1:-1GiB,4GiB} rungs=${2:-peer_ce,peer_ce_bidir,peer_sm_read,peer_sm_write,peer_sm_bidir}
      local tag=pairs_${sizes//,/_}
      [ -n "${2:-}" ] && tag=${tag}_${rungs%%,*}
      step "${tag}_memlab" -- "$M" run transfer --quiet --device all --peer all --variant "$rungs" --sizes "$sizes" \
        --max-time 0.3 --out "$J/$tag.json"
      if [ -x "$NVB" ]; then
        for size in ${sizes//,/ }; do
          local mib=$(( $(numfmt --from=iec "${size%B}") >> 20 ))
          step "${tag}_nvbandwidth_$size" -- "$NVB" -b "$mib" -t device_to_device_memcpy_write_ce \
            device_to_device_bidirectional_memcpy_write_ce device_to_device_memcpy_read_sm \
            device_to_device_memcpy_write_sm device_to_device_bidirectional_memcpy_write_sm
          cp "$LOGS/${tag}_nvbandwidth_$size.log" "$J/${tag}_nvbandwidth_$size.log"
          python3 - "$J/$tag.json" "$size" "$J/${tag}_$size.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
n = int(sys.argv[2][:-3]) * units[sys.argv[2][-3:]]
doc["results"] = [r for r in doc["results"] if int(r["params"]["n"]) == n]
json.dump(doc, open(sys.argv[3], "w"))
PY
          judge "${tag}_$size" pairs --memlab "$J/${tag}_$size.json" --nvbandwidth "$J/${tag}_nvbandwidth_$size.log"
        done
      fi
      ;;
    sweep)
      # Every ordered pair, every peer rung one way and both, 4 KiB .. 256 MiB (x16): the page's size table.
      step pairs_sweep -- "$M" run transfer --quiet --device all --peer all \
        --variant peer_ce,peer_ce_bidir,peer_sm_read,peer_sm_write,peer_sm_bidir,peer_auto,peer_auto_bidir \
        --sizes 4KiB..256MiB:*16 --max-time 0.15 --out "$J/pairs.json"
      ;;
    latency)
      # The latency of one small access to every peer: a chase of its memory, a ping-pong of a flag.
      step pairs_latency -- "$M" run transfer --quiet --device all --peer all --variant peer_chase,peer_pingpong \
        --sizes 1MiB,1GiB --max-time 0.2 --out "$J/pairs_latency.json"
      ;;
    ranks)
      start_slurm
      local args=(run transfer --variant "$COLLECTIVES" --placement out_of_place --sizes 64MiB,256MiB,1GiB
        --max-time 0.3 --rank-timeout 60)
      local judge_args=()
      declare -A files
      for round in 1 2 3; do
        for l in one_process $(launchers); do
          step "ranks_${l}_$round" -- bash -c "ranks_run $l '$J/ranks_${l}_$round.json' ${args[*]}"
          files[$l]="${files[$l]:-} $J/ranks_${l}_$round.json"
        done
      done
      for l in $(launchers); do judge_args+=(--launcher "$l" ${files[$l]}); done
      judge ranks ranks --one-process ${files[one_process]} "${judge_args[@]}"
      stop_slurm
      ;;
    faults)
      start_slurm
      for l in env $(launchers); do
        step "fault_${l}_killed" -- bash -c "fault $l KILL 20 30"
        step "fault_${l}_stopped" -- bash -c "fault $l STOP 20 15"
      done
      # A healthy wait longer than the deadline: 100 replays of a graph of 20 all-reduces of 4 GiB (tens of
      # seconds between two waits' ends) with --rank-timeout 5: it must complete.
      step fault_long_wait -- bash -c "ranks_run torchrun '$J/fault_long_wait.json' run transfer --variant nccl_all_reduce \
        --placement out_of_place --sizes 4GiB --max-time 0.1 --nccl-tests-graph 100 --rank-timeout 5"
      # Bad input, before any collective: one line, exit 2 or 3.
      step fault_bad_world_size 2 -- env RANK=4 WORLD_SIZE=4 "$M" run transfer --variant nccl_all_reduce
      step fault_gpus_flag 2 -- env RANK=0 WORLD_SIZE=2 "$M" run transfer --variant nccl_all_reduce --gpus 4
      step fault_more_ranks_than_gpus 3 -- env RANK=0 WORLD_SIZE=$((NGPU * 2)) LOCAL_RANK=0 \
        LOCAL_WORLD_SIZE=$((NGPU * 2)) "$M" run transfer --variant nccl_all_reduce
      step fault_too_many_gpus 3 -- "$M" run transfer --variant nccl_all_reduce --gpus $((NGPU * 2))
      # Ranks that disagree on WORLD_SIZE: rank 0 is told 2, rank 1 is told 3. Rank 0 (NCCL's root) refuses
      # them at once, exit 2; rank 1 waits for a world that never forms, out after its --rank-timeout.
      step fault_world_sizes_disagree -- bash -c "RANK=0 WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce \
        --rank-timeout 10 & p0=\$!; RANK=1 WORLD_SIZE=3 '$M' run transfer --variant nccl_all_reduce --rank-timeout 10 & \
        p1=\$!; wait \$p0; echo rank0 rc=\$?; wait \$p1; echo rank1 rc=\$?"
      step fault_no_gpu_rank -- bash -c "CUDA_VISIBLE_DEVICES= RANK=1 WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce --rank-timeout 15; echo rank1 rc=\$?; RANK=0 WORLD_SIZE=2 '$M' run transfer --variant nccl_all_reduce --rank-timeout 15; echo rank0 rc=\$?"
      step fault_srun_pmi2_no_gpu 3 -- env SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=1 SLURM_NODEID=0 \
        SLURM_STEP_TASKS_PER_NODE=2 PMI_RANK=1 PMI_SIZE=2 CUDA_VISIBLE_DEVICES= "$M" run transfer --variant nccl_all_reduce
      stop_slurm
      ;;
    *) echo "unknown step $s" ;;
  esac
}

# Steps and their arguments, separated by `--`.
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(build)
current=()
for a in "${args[@]}" --; do
  if [ "$a" = -- ]; then
    [ ${#current[@]} -gt 0 ] && run_step "${current[@]}"
    current=()
  else
    current+=("$a")
  fi
done
echo; echo "==== summary ===="; cat "$SUMMARY"
mkdir -p "$OUT"
tar -czf "$OUT/transfer_gpus.tgz" -C "$W" transfer_gpus
cp "$SUMMARY" "$OUT/transfer_gpus_summary.txt"
