#!/usr/bin/env bash
# The heat map's weakest bands again, after the plan's wide-side rule (docs/notes/transpose_skinny.md section 5):
# expected ~40-60 s on one H100 with a build of the bench (nvcc, one file, ~30-40 s), ~15 s with BIN=.
#
#   OUT=/some/dir [GPU=0] [BIN=/path/to/transpose_shapes_bench] [TESTS=/path/to/memlab_gpu_tests] \
#     bash tools/measure_transpose_worst_cells.sh
#
# 1. tools/experiments/transpose_shapes_bench.cu on the bands only: every ordered pair of 20 sides (3, 33, 48, 64,
#    67, 97, 127, 128, 131, 251, 257, 448, 509, 521, 1021, 2039, 4099, 8191, 8192, 65521), 1-, 2- and 4-byte
#    elements, each cell verified on the device and timed against cudaMemcpyAsync of the same bytes (3 cold samples
#    each, >= 64 MiB moved, the heat map's method); --crossover also times the path not taken near the thresholds.
# 2. The cells beside the committed heat map (docs/results/h100/transpose/heatmap/shapes.csv): per path change,
#    before and after, the cells below 0.5 and 0.8, the worst ones.
# 3. The library's transpose GPU tests (TESTS= a prebuilt memlab_gpu_tests; skipped without it), filter
#    *transpose_library*: every path byte-exact at edge shapes and misaligned pointers, the wide sides included.
#
# Results in $OUT/tfix/ (default OUT: /tmp/out), at most 4 files:
#   shapes.csv  the bench's CSV      compare.md  before / after      gpu_tests.txt  gtest's output
#   log.txt     machine, each step's exit status and time
# BIN= a prebuilt bench (a file, or a folder holding transpose_shapes_bench) skips the build; BUILD= the folder a
# build writes to (default /tmp/measure-transpose-worst). Uses GPU ${GPU:-0} only. A failed step is logged, the
# next runs.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
export CUDA_VISIBLE_DEVICES=${GPU:-0}
out=${OUT:-/tmp/out}/tfix
mkdir -p "$out"
work=${BUILD:-/tmp/measure-transpose-worst}
mkdir -p "$work"
log=$out/log.txt
csv=$out/shapes.csv
: > "$log"
note() { echo "$*" | tee -a "$log"; }
t_start=$SECONDS
{
  echo "== machine"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
  git log -1 --format='commit %h %s' 2>/dev/null || true
  echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES BIN=${BIN:-} TESTS=${TESTS:-}"
} >> "$log" 2>&1

bench=""
if [ -n "${BIN:-}" ]; then
  if [ -d "$BIN" ]; then bench=$BIN/transpose_shapes_bench; else bench=$BIN; fi
  [ -x "$bench" ] || { note "BIN=$BIN: no executable transpose_shapes_bench there"; bench=""; }
  [ -n "$bench" ] && note "== build: skipped (BIN: $bench)"
fi
if [ -z "$bench" ]; then
  t0=$SECONDS
  bench=$work/transpose_shapes_bench
  timeout --kill-after=10 200 nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -Iinclude \
    tools/experiments/transpose_shapes_bench.cu -o "$bench" > "$work/build.log" 2>&1
  rc=$?
  note "== build: rc=$rc $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || { tail -30 "$work/build.log" >> "$log"; bench=""; }
fi

sides=3,33,48,64,67,97,127,128,131,251,257,448,509,521,1021,2039,4099,8191,8192,65521
if [ -n "$bench" ]; then
  t0=$SECONDS
  timeout --kill-after=10 150 "$bench" --out "$csv" --budget 90 --samples 3 --crossover --es 1,2,4 \
    --sides "$sides" >> "$log" 2>&1
  note "== bands: rc=$? $((SECONDS - t0)) s (rc 1: a cell failed verification, its row says WRONG)"
fi

if [ -s "$csv" ]; then
  timeout 60 python3 - "$csv" docs/results/h100/transpose/heatmap/shapes.csv > "$out/compare.md" 2>> "$log" <<'PY'
import csv, sys, collections
def load(p):
    return {(r['elem_size'], r['rows'], r['cols']): r
            for r in csv.DictReader(l for l in open(p) if l[:1] not in ('#', ''))}
new, old = load(sys.argv[1]), load(sys.argv[2])
print('# The heat map\'s bands after the wide-side rule: fraction of a copy, before (committed map) / after\n')
wrong = [k for k, r in new.items() if r['verified'] != 'ok']
print(f'cells: {len(new)}, not verified: {len(wrong)} {wrong[:5]}\n')
for es in ('1', '2', '4'):
    cells = [k for k in new if k[0] == es]
    f = lambda rs: sum(1 for r in rs if float(r['fraction'] or 0) < 0.5)
    g = lambda rs: sum(1 for r in rs if float(r['fraction'] or 0) < 0.8)
    a = [new[k] for k in cells]; b = [old[k] for k in cells if k in old]
    worst = min(a, key=lambda r: float(r['fraction'] or 0))
    print(f'- {es}-byte: {len(a)} cells; < 0.5: before {f(b)}, after {f(a)}; < 0.8: before {g(b)}, after {g(a)}; '
          f'worst after {worst["batch"]} x {worst["rows"]} x {worst["cols"]} {worst["path"]} {worst["fraction"]}')
print('\n| elem | path before -> after | cells | median before | median after | min after | < 0.5 after |')
print('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
groups = collections.defaultdict(list)
for k, r in new.items():
    if k in old: groups[(k[0], old[k]['path'], r['path'])].append((float(old[k]['fraction']), float(r['fraction'] or 0)))
med = lambda v: sorted(v)[len(v) // 2]
for (es, p0, p1), v in sorted(groups.items()):
    print(f'| {es} | {p0} -> {p1} | {len(v)} | {med([x for x, _ in v]):.3f} | {med([y for _, y in v]):.3f} | '
          f'{min(y for _, y in v):.3f} | {sum(1 for _, y in v if y < 0.5)} |')
print('\nThe 15 lowest cells after:\n\n| elem | batch x rows x cols | path | after | before (path) | alt path: fraction |')
print('| --- | --- | --- | ---: | --- | --- |')
for r in sorted(new.values(), key=lambda r: float(r['fraction'] or 0))[:15]:
    k = (r['elem_size'], r['rows'], r['cols']); o = old.get(k)
    print(f'| {r["elem_size"]} | {r["batch"]} x {r["rows"]} x {r["cols"]} | {r["path"]} | {r["fraction"]} | '
          f'{o["fraction"] + " (" + o["path"] + ")" if o else "-"} | {r["alt_path"]}: {r["alt_fraction"]} |')
PY
  note "== compare: rc=$?"
fi

if [ -n "${TESTS:-}" ] && [ -x "${TESTS}" ]; then
  t0=$SECONDS
  timeout 120 "$TESTS" --gtest_filter='*transpose_library*' --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1
  note "== gpu tests: rc=$? $((SECONDS - t0)) s: $(grep -E 'PASSED|FAILED' "$out/gpu_tests.txt" | head -3 | tr '\n' ' ')"
else
  note "== gpu tests: skipped (TESTS= a prebuilt memlab_gpu_tests)"
fi
note "== done in $((SECONDS - t_start)) s: $(ls "$out" | tr '\n' ' ')"
[ -s "$out/compare.md" ] && head -8 "$out/compare.md"
exit 0
