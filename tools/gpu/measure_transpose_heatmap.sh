#!/usr/bin/env bash
# The heat map of memlab::transpose at every shape, on one GPU (docs/labs/transpose.md, "The heat map: every
# shape, every element size"): expected ~1.5-3 minutes on one H100: the bench's build ~20-40 s (nvcc, one file;
# none with BIN=), the sweep ~40-90 s (bounded: SWEEP_BUDGET, default 140 s, which cuts the last sides of the grid
# and leaves a complete smaller one).
#
#   OUT=/some/dir [GPU=0] [BIN=/path/to/transpose_shapes_bench] bash tools/gpu/measure_transpose_heatmap.sh
#
# The sweep (tools/studies/transpose_shapes_bench.cu): rows and cols each in 1..64, the powers of two
# 128..65536 and 20 primes next to them up to 65521 (94 sides, every ordered pair: each shape and its
# transpose), 1-, 2-, 4- and 8-byte elements; a batch of matrices makes up >= 64 MiB moved; each cell
# memlab::transpose_bytes (the library's entry point) verified on the device element by element, then 3 cold
# samples (L2 flushed) interleaved with 3 of cudaMemcpyAsync of the same bytes in the same process:
# fraction = copy median / transpose median. Near the few paths' thresholds it also times the path not taken
# (--crossover). The grid grows a side at a time (a coarse 25-side grid first), so a budget cut leaves a
# complete smaller grid.
#
# Results in $OUT/heat/ (default OUT: /tmp/out), three files:
#   shapes.csv   one row per cell (the bench's CSV; header comments name the GPU)
#   summary.md   memlab-transpose-shapes' summary: per element size the worst cell, the median, cells < 0.5, < 0.8
#   log.txt      the machine, each step's exit status and time, the bench's output, restarts
# The pictures are drawn afterwards, anywhere (matplotlib), from the CSV:
#   PYTHONPATH=tools/python python3 -m memlab_tools.transpose_shapes heatmap $OUT/heat/shapes.csv -o DIR
# (PLOT=1 draws them here too, into $OUT/heat/: four more files.)
#
# Tolerant of single failures: a step that fails is logged and the next runs; a CUDA error that stops the
# bench (a sticky error ends its context) is recorded as a CRASH cell and the sweep goes on after it (at most
# 5 restarts, inside the same budget). BIN= a prebuilt bench (a file, or a folder holding
# transpose_shapes_bench) skips the build; BUILD= the folder the build writes to (default
# /tmp/measure-transpose-heatmap). Uses GPU ${GPU:-0} only (CUDA_VISIBLE_DEVICES).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
out=${OUT:-/tmp/out}/heat
mkdir -p "$out"
work=${BUILD:-/tmp/measure-transpose-heatmap}
mkdir -p "$work"
log=$out/log.txt
csv=$out/shapes.csv
budget=${SWEEP_BUDGET:-140}
t_start=$SECONDS
: > "$log"

note() { echo "$*" | tee -a "$log"; }

{
  echo "== machine"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,memory.used \
    --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  git log -1 --format='commit %h %s' 2>/dev/null || true
  echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SWEEP_BUDGET=$budget BIN=${BIN:-}"
} >> "$log" 2>&1

# The bench: BIN (a file or a folder holding it), else built here.
bench=""
if [ -n "${BIN:-}" ]; then
  if [ -d "$BIN" ]; then bench=$BIN/transpose_shapes_bench; else bench=$BIN; fi
  [ -x "$bench" ] || { note "BIN=$BIN: no executable transpose_shapes_bench there"; bench=""; }
  [ -n "$bench" ] && note "== build: skipped (BIN: $bench)"
else
  t0=$SECONDS
  bench=$work/transpose_shapes_bench
  timeout --kill-after=10 300 nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -Iinclude \
    tools/studies/transpose_shapes_bench.cu -o "$bench" > "$work/build.log" 2>&1
  rc=$?
  note "== build: rc=$rc $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || { tail -30 "$work/build.log" >> "$log"; bench=""; }
fi

# The sweep, restarted after a crash from the cell after the one that crashed (--resume skips the cells in the CSV).
if [ -n "$bench" ]; then
  t0=$SECONDS
  progress=$work/progress.txt
  resume=()
  for attempt in 1 2 3 4 5 6; do
    left=$((budget - (SECONDS - t0)))
    if [ "$left" -le 5 ]; then note "   no budget left for attempt $attempt"; break; fi
    : > "$progress"
    echo "== sweep attempt $attempt ($(date +%T), budget $left s)" >> "$log"
    timeout --kill-after=10 $((left + 90)) "$bench" --out "$csv" --budget "$left" --samples 3 --crossover \
      --progress "$progress" "${resume[@]}" >> "$log" 2>&1
    rc=$?
    state=$(tr -s ' ' < "$progress" | head -1)
    note "== sweep attempt $attempt: rc=$rc $((SECONDS - t0)) s, last: ${state:-nothing}"
    case $state in
      done*) break ;;  # rc 0: every cell verified; 1: a cell failed verification (its row says WRONG)
      running*)
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then note "   timed out"; break; fi
        # A CUDA error stopped it during this cell: record it, go on after it.
        read -r _ es rows cols batch <<< "$state"
        echo "$es,$rows,$cols,$batch,,,,,,nan,,CRASH,,," >> "$csv"
        note "   CRASH at elem_size=$es rows=$rows cols=$cols batch=$batch: recorded, resuming after it"
        resume=(--resume) ;;
      *) note "   the bench stopped before its first cell"; break ;;
    esac
  done
fi

# The summary (plain Python, no matplotlib); the pictures only with PLOT=1.
if [ -s "$csv" ]; then
  t0=$SECONDS
  PYTHONPATH=tools/python timeout 120 python3 -m memlab_tools.transpose_shapes summary "$csv" -o "$out/summary.md" \
    >> "$log" 2>&1
  note "== summary: rc=$? $((SECONDS - t0)) s"
  if [ "${PLOT:-0}" = 1 ]; then
    PYTHONPATH=tools/python timeout 120 python3 -m memlab_tools.transpose_shapes heatmap "$csv" -o "$out" \
      --no-summary >> "$log" 2>&1
    note "== plot: rc=$?"
  fi
fi
note "== done in $((SECONDS - t_start)) s: $(ls "$out" | tr '\n' ' ')"
[ -s "$out/summary.md" ] && head -12 "$out/summary.md"
exit 0
