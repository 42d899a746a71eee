#!/usr/bin/env bash
# The transfer lab on the GPU machine (one H100, no network): builds memlab with the transfer lab only
# (NCCL from python3's nvidia-nccl-cu13), runs its GPU tests, the sanitizers at small sizes, the
# default tour (timed), 1 GiB host <-> device runs in every direction and host memory kind, NCCL's
# one-rank collectives, the one-GPU refusal, then the peers nvbandwidth and nccl-tests built from
# the sources carried in .carry/ (git-ignored: nothing of theirs is committed).
#
#   run from the repository root, with .carry/nvbandwidth and .carry/nccl-tests present:
#     OUT=/some/dir tools/gpu/device_transfer.sh
# Writes $OUT/transfer.tgz (every log and JSON) and $OUT/summary.txt; prints the summary last.
# Every step is logged and timed; a failed step does not stop the next. Aim: under 7 minutes.
set -uo pipefail

ROOT=$(pwd)
OUT=${OUT:-$ROOT/out-transfer}
W=$(mktemp -d /tmp/transfer.XXXX)
LOGS=$W/logs
mkdir -p "$OUT" "$LOGS"
export PATH=/usr/local/cuda/bin:$PATH
JOBS=$(nproc)
T0=$(date +%s)
SUMMARY=$W/summary.txt
printf '%-34s %5s %7s  %s\n' step rc seconds note > "$SUMMARY"

# step NAME [EXPECTED_RC] -- command...: runs it, logs stdout+stderr to $LOGS/NAME.log, records rc/time.
step() {
  local name=$1 want=0
  shift
  if [ "$1" != "--" ]; then want=$1; shift; fi
  shift  # --
  local t=$(date +%s)
  echo "=== $name: $*" | tee -a "$LOGS/steps.log"
  timeout "${STEP_LIMIT:-150}" "$@" > "$LOGS/$name.log" 2>&1  # a hung step (124) costs at most this
  local rc=$?
  local dt=$(( $(date +%s) - t ))
  local note="ok"
  [ "$rc" != "$want" ] && note="UNEXPECTED (wanted rc $want)"
  printf '%-34s %5s %7s  %s\n' "$name" "$rc" "$dt" "$note" >> "$SUMMARY"
  tail -n 3 "$LOGS/$name.log" | sed 's/^/    /'
  return 0
}

# ---- the machine ------------------------------------------------------------------------------------
{
  date -u; uname -a; nproc; free -g
  nvidia-smi
  nvidia-smi -q | grep -iA12 "PCI$\|GPU Link Info" | head -60
  nvidia-smi topo -m
  nvidia-smi nvlink -s 2>&1 | head -20
  ls /usr/include/boost/program_options.hpp /usr/lib/x86_64-linux-gnu/libboost_program_options* 2>&1
  python3 -c "import nvidia.nccl, os; p=list(nvidia.nccl.__path__)[0]; print(p); print(os.listdir(p+'/lib'))" 2>&1
  cmake --version | head -1; nvcc --version | tail -2
  env | grep -i "^NCCL" || echo "no NCCL_* variables set"
} > "$LOGS/machine.log" 2>&1

NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null || true)
# nccl-tests links -lnccl: the wheel ships libnccl.so.2 only, so give it a home with the usual names.
NCCL_HOME=$W/nccl_home
if [ -n "$NCCL_DIR" ]; then
  mkdir -p "$NCCL_HOME/lib"
  ln -sf "$NCCL_DIR/include" "$NCCL_HOME/include"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$NCCL_HOME/lib/libnccl.so.2"
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" "$NCCL_HOME/lib/libnccl.so"
fi

# ---- the peers build in the background while memlab builds (nothing is timed yet) ----------------------
build_peers() {
  if [ -d "$ROOT/.carry/nccl-tests" ] && [ -n "$NCCL_DIR" ]; then
    cp -r "$ROOT/.carry/nccl-tests" "$W/nccl-tests"
    # CUDA_LIB holds libcudart alone: the toolkit's lib64 may carry an older libnccl.so, which
    # nccl-tests' link line (-L$CUDA_LIB before -L$NCCL_HOME/lib) would otherwise pick.
    mkdir -p "$W/cuda_lib"
    ln -sf /usr/local/cuda/lib64/libcudart.so "$W/cuda_lib/libcudart.so"
    make -C "$W/nccl-tests" -j "$JOBS" MPI=0 CUDA_HOME=/usr/local/cuda CUDA_LIB="$W/cuda_lib" NCCL_HOME="$NCCL_HOME" \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build > "$LOGS/build_nccl_tests.log" 2>&1
    echo "nccl-tests build rc=$?" >> "$LOGS/build_nccl_tests.log"
  else
    echo "nccl-tests not built: .carry/nccl-tests or python3's nvidia-nccl missing" > "$LOGS/build_nccl_tests.log"
  fi
  if [ -d "$ROOT/.carry/nvbandwidth" ]; then
    cp -r "$ROOT/.carry/nvbandwidth" "$W/nvbandwidth"
    # Boost program_options (headers it includes, static library, CMake files: Debian's 1.74,
    # carried in .carry/boost when the image has none) and nvml.h (PyPI's nvidia-nvml-dev, carried in
    # .carry/nvml); it links the driver's libnvidia-ml.so.1 under the name -lnvidia-ml.
    local boost_root=""
    # The image may have Boost's headers and CMake files without program_options' (seen on the H100
    # image: Boost 1.83, no boost_program_options config): then the carried one, by its config dir.
    if [ -d "$ROOT/.carry/boost" ] && ! ls /usr/lib/x86_64-linux-gnu/cmake/boost_program_options-* > /dev/null 2>&1; then
      local cfg
      cfg=$(ls -d "$ROOT"/.carry/boost/lib/x86_64-linux-gnu/cmake/Boost-* 2>/dev/null | head -1)
      boost_root="-DBoost_ROOT=$ROOT/.carry/boost -DBoost_NO_SYSTEM_PATHS=ON ${cfg:+-DBoost_DIR=$cfg}"
    fi
    local nvml_inc=""
    [ -e /usr/local/cuda/include/nvml.h ] || nvml_inc="-I$ROOT/.carry/nvml/include"
    mkdir -p "$W/nvml_lib"
    local nvml_so
    nvml_so=$(ldconfig -p | awk '/libnvidia-ml.so.1 /{print $NF; exit}')
    [ -n "$nvml_so" ] && ln -sf "$nvml_so" "$W/nvml_lib/libnvidia-ml.so"
    ( cd "$W/nvbandwidth" &&
      cmake -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $boost_root \
        -DCMAKE_CXX_FLAGS="$nvml_inc" -DCMAKE_CUDA_FLAGS="$nvml_inc" \
        -DCMAKE_EXE_LINKER_FLAGS="-L$W/nvml_lib -L/usr/local/cuda/lib64/stubs" &&
      cmake --build build -j "$JOBS" ) > "$LOGS/build_nvbandwidth.log" 2>&1
    echo "nvbandwidth build rc=$?" >> "$LOGS/build_nvbandwidth.log"
  fi
}
build_peers &
PEERS_PID=$!

# ---- memlab -----------------------------------------------------------------------------------------------
# BIN: binaries built elsewhere (a bin/ folder): then nothing of memlab's is built here.
if [ -n "${BIN:-}" ]; then
  B=$(cd "$BIN/.." && pwd)
else
  B=$ROOT/build-transfer
  step configure -- cmake --preset dev -B "$B" -DMEMLAB_ONLY_LABS=transfer ${NCCL_DIR:+-DMEMLAB_NCCL_ROOT=$NCCL_DIR}
  step build -- cmake --build "$B" -j "$JOBS" --target memlab_cli memlab_gpu_tests memlab_labs_tests
fi
M=$B/bin/memlab
[ -x "$B/bin/memlab_labs_tests" ] && step host_tests -- "$B/bin/memlab_labs_tests" --gtest_filter='transfer*'
step gpu_tests -- "$B/bin/memlab_gpu_tests" --gtest_filter='*transfer*'
step list -- "$M" list transfer

# Sanitizers at small sizes: every host rung, direction and memory kind; one-rank collectives.
SMALL=(--sizes 100003 --max-time 0.01 --quiet)  # one odd size: 16-byte body and a byte tail
step memcheck -- compute-sanitizer --tool memcheck --error-exitcode 99 "$M" run transfer --variant ce,sm,auto \
  --direction all --host-memory all "${SMALL[@]}"
# --report-api-errors no: NCCL probes kernels its wheel does not carry for this GPU (cudaFuncGetAttributes ->
# cudaErrorNoKernelImageForDevice, handled by NCCL); memcheck would count those API errors, not memory errors.
step memcheck_nccl -- compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 "$M" run transfer \
  --variant nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all --gpus 1 "${SMALL[@]}"
step racecheck -- compute-sanitizer --tool racecheck --error-exitcode 99 "$M" run transfer --variant sm,auto \
  --direction all --host-memory pinned "${SMALL[@]}"

wait "$PEERS_PID"  # nothing compiles while anything is timed

# The default tour: this lab's share of `memlab run` (target <= ~15 s). Exit 0: the one-GPU
# refusals of the peer and multi-rank rungs are skipped cases among measured ones.
step defaults_timed -- bash -c "time '$M' run transfer --out '$W/defaults.json' --out '$W/defaults.md'"

# 1 GiB, every direction and host memory kind: the acceptance figures (pinned >= 85% of PCIe).
step gib_pinned -- "$M" run transfer --variant ce,sm,auto --sizes 1GiB --direction all --host-memory pinned --max-time 2 --out "$W/gib_pinned.json"
step gib_pageable -- "$M" run transfer --variant ce --sizes 1GiB --direction all --host-memory pageable --out "$W/gib_pageable.json"
step gib_registered -- "$M" run transfer --variant ce,sm,auto --sizes 1GiB --direction all --host-memory registered --out "$W/gib_registered.json"
step gib_write_combined -- "$M" run transfer --variant ce,sm,auto --sizes 1GiB --direction all --host-memory write_combined --out "$W/gib_write_combined.json"
# A size sweep of the copy engine, pinned, to see where it reaches its plateau.
step sweep_ce_pinned -- "$M" run transfer --variant ce --sizes 4KiB..1GiB:*4 --direction all --host-memory pinned --max-time 0.2 --out "$W/sweep_ce_pinned.json"

# NCCL, one rank, one GPU: all-reduce (and the others), verified.
step nccl_one_rank -- "$M" run transfer --variant nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all \
  --gpus 1 --sizes 8,4KiB,1MiB,64MiB,1GiB --out "$W/nccl_one_rank.json"
step nccl_nvls_user -- env NCCL_NVLS_ENABLE=0 "$M" run transfer --variant nccl_all_reduce --gpus 1 --sizes 1MiB --format json --quiet

# The GPU <-> GPU rungs alone on one GPU: every case refused with the reason, exit 4.
step one_gpu_refusal 4 -- "$M" run transfer --variant peer_ce,peer_ce_bidir,peer_sm_read,peer_sm_write,peer_sm_bidir,peer_auto,nccl_all_reduce \
  --gpus 2 --sizes 64MiB --out "$W/one_gpu_refusal.json"

# ---- the peers, right after memlab ---------------------------------------------------------------------------
NVB=$W/nvbandwidth/build/nvbandwidth
if [ -x "$NVB" ]; then
  # -b 1024: 1 GiB buffers, as memlab's gib_* runs; CE and SM copies, each direction and both.
  step nvbandwidth -- "$NVB" -b 1024 -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
    host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
    host_to_device_memcpy_sm device_to_host_memcpy_sm
else
  printf '%-34s %5s %7s  %s\n' nvbandwidth - - "not built (see build_nvbandwidth.log: Boost program_options?)" >> "$SUMMARY"
fi
NT=$W/nccl-tests/build
if [ -x "$NT/all_reduce_perf" ]; then
  export LD_LIBRARY_PATH=$NCCL_HOME/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}  # NCCL first
  step nccl_tests_all_reduce -- env NCCL_NVLS_ENABLE=0 "$NT/all_reduce_perf" -b 8 -e 1G -f 8 -g 1 -d uint8 -o sum
  step nccl_tests_all_gather -- env NCCL_NVLS_ENABLE=0 "$NT/all_gather_perf" -b 8 -e 1G -f 64 -g 1 -d uint8
else
  printf '%-34s %5s %7s  %s\n' nccl-tests - - "not built (see build_nccl_tests.log)" >> "$SUMMARY"
fi

# ---- pack -----------------------------------------------------------------------------------------------------
printf 'total %ss\n' $(( $(date +%s) - T0 )) >> "$SUMMARY"
cp "$SUMMARY" "$LOGS/summary.txt"
cp "$W"/*.json "$W"/*.md "$LOGS"/ 2>/dev/null
tar -czf "$OUT/transfer.tgz" -C "$W" logs
cp "$SUMMARY" "$OUT/summary.txt"
echo
echo "==== transfer summary (logs and JSON: \$OUT/transfer.tgz) ===="
cat "$SUMMARY"
