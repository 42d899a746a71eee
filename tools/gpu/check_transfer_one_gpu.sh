#!/usr/bin/env bash
# The transfer lab on ONE GPU, from a memlab built beforehand (it builds nothing): every one-GPU rung run and
# verified, its figures set against the committed ones of docs/results/h100/transfer/, and NCCL loaded on first
# use from where the machine has it. What it shows: the lab's split by route (host.cpp, peer.cu,
# collectives.cpp, ranks.cpp, engines.cu, checks.cu) and NCCL's loading changed no one-GPU case: the same cases
# run or are refused, each verified, with the same bytes, launch policy and roof, and figures within the
# noise of the committed ones (tools/gpu/compare_transfer_one_gpu.py: host <-> device copies move by several
# percent between machines, so the ratios are printed for reading; what must not move makes a step fail).
#
#   OUT=/dir [BIN=build/dev/bin/memlab] [LIMIT=85] bash tools/gpu/check_transfer_one_gpu.sh
#
# Needs build/dev/bin/memlab (dev preset); uses memlab_gpu_tests and memlab_cli_tests beside it when they are
# built (cmake --build --preset dev --target memlab_cli memlab_gpu_tests memlab_cli_tests). Steps, in order, with
# the seconds expected on an H100 (LIMIT caps the whole, default 85 s; a step that would start past it is
# recorded as not run):
#   nccl        ~4 s  readelf: memlab needs no libnccl; a ce run opens no NCCL (LD_DEBUG=files); the loader's own
#                     choice (RUNPATH, then the loader's path) and the python wheels' libnccl.so.2 (nvidia-nccl,
#                     the one torch loads) each run a one-rank all-reduce, verified; an unloadable library: exit 4
#                     with the loader's reason
#   defaults   ~13 s  memlab run transfer (the short tour: every host rung, direction and host memory at 64 MiB),
#                     against defaults.json and the transfer cases of all_labs/defaults_this_memlab.json
#   gpu_tests  ~15 s  memlab_gpu_tests, the transfer lab's (every rung at edge sizes, verified; peers refused)
#   nccl_one   ~10 s  the five collectives at one rank, 8 B .. 1 GiB (the command of nccl_one_rank.json)
#   gib_pinned ~15 s  ce, sm, auto at 1 GiB, every direction, pinned (the command of gib_pinned.json)
#   sweep      ~12 s  ce pinned 4 KiB .. 1 GiB, every direction (the command of sweep_ce_pinned.json)
#   cli_tests   ~3 s  memlab_cli_tests' NCCL-on-first-use cases (on a GPU they reach the GPU paths)
# Writes ONE file, $OUT/multi/transfer_one_gpu.tar.gz (summary.txt, logs, JSON, comparisons), and prints the
# summary last.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT to the folder the results go to}/multi
bin=${BIN:-$root/build/dev/bin/memlab}
limit=${LIMIT:-85}
committed=$root/docs/results/h100/transfer
mkdir -p "$out"
w=$(mktemp -d /tmp/transfer-one-gpu.XXXX)
summary=$w/summary.txt
t_start=$SECONDS
if [ ! -x "$bin" ]; then
  echo "check_transfer_one_gpu: no memlab at $bin (build it first, or set BIN)" | tee "$summary"
  tar -czf "$out/transfer_one_gpu.tar.gz" -C "$w" . && exit 2
fi
bindir=$(cd "$(dirname "$bin")" && pwd)
memlab=$bindir/$(basename "$bin")
printf '%-12s %4s %5s  %s\n' step rc secs note > "$summary"

# step NAME SECONDS COMMAND: COMMAND (bash -c, in $w) into $w/NAME.log, at most SECONDS and never past LIMIT.
step() {
  local name=$1 want=$2 cmd=$3 t0=$SECONDS
  local left=$((limit - (SECONDS - t_start)))
  if [ "$left" -lt 5 ]; then
    printf '%-12s %4s %5s  %s\n' "$name" - 0 "NOT RUN: the ${limit} s limit is spent" >> "$summary"
    return
  fi
  (cd "$w" && timeout "$((want < left ? want : left))" bash -c "$cmd") > "$w/$name.log" 2>&1
  local rc=$?
  local note=ok
  [ "$rc" = 124 ] && note="TIMED OUT"
  [ "$rc" != 0 ] && [ "$rc" != 124 ] && note="FAILED (see $name.log)"
  printf '%-12s %4s %5s  %s\n' "$name" "$rc" "$((SECONDS - t0))" "$note" >> "$summary"
  echo "== $name rc=$rc ($((SECONDS - t0)) s, total $((SECONDS - t_start)) s)"
  tail -n 2 "$w/$name.log" | cut -c1-200
}
compare="python3 '$root/tools/gpu/compare_transfer_one_gpu.py'"

{
  echo "commit: ${MEMLAB_GIT_SHA:-$(git -C "$root" log --oneline -1 2>/dev/null)} (the tree's; the binary's own below)"
  "$memlab" --version 2>&1
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm --format=csv
  nvidia-smi -L
} > "$w/machine.log" 2>&1

# NCCL: never linked, loaded on first use. The wheels' libraries: nvidia-nccl-cu12/13 (torch's NCCL) and any
# under torch/lib.
wheels=$(python3 - <<'EOF' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
hits = set()
for r in roots:
    hits.update(glob.glob(os.path.join(r, "nvidia", "nccl", "lib", "libnccl.so.2")))
    hits.update(glob.glob(os.path.join(r, "torch", "lib", "libnccl*.so*")))
print("\n".join(sorted(hits)))
EOF
)
wheels=$(echo $wheels)  # one line, the paths separated by spaces
one_rank="run transfer --variant nccl_all_reduce --gpus 1 --sizes 1MiB --max-time 0.05 --quiet"
nccl_cmd="set -x
readelf -d '$memlab' | grep -E 'NEEDED|RUNPATH|RPATH'
! readelf -d '$memlab' | grep NEEDED | grep -q libnccl || { echo 'FAIL: memlab needs libnccl'; exit 1; }
LD_DEBUG=files '$memlab' run transfer --variant ce --sizes 4KiB --max-time 0.01 --quiet 2> ld_ce.log
! grep -q libnccl ld_ce.log || { echo 'FAIL: a ce run opened NCCL'; exit 1; }
LD_DEBUG=libs '$memlab' $one_rank --out nccl_default.json 2> ld_nccl.log || exit 1
grep -E 'trying file=.*libnccl|calling init: .*libnccl' ld_nccl.log | head -5
python3 -c \"import json; print('default load: NCCL', json.load(open('nccl_default.json')).get('world', {}).get('nccl_version'))\"
echo 'wheels: ${wheels:-none found}'
i=0
for lib in $wheels; do
  i=\$((i + 1))
  MEMLAB_NCCL_LIBRARY=\$lib '$memlab' $one_rank --out nccl_wheel_\$i.json || exit 1
  python3 -c \"import json,sys; d=json.load(open('nccl_wheel_\$i.json')); r=d['results'][0]; print(sys.argv[1], 'NCCL', d.get('world', {}).get('nccl_version'), r['status'], 'verified', r['verified'])\" \$lib
done
MEMLAB_NCCL_LIBRARY=libmemlab_no_such_nccl.so.2 '$memlab' $one_rank; rc=\$?
[ \$rc = 4 ] || { echo \"FAIL: an unloadable NCCL gave exit \$rc, not 4\"; exit 1; }"
step nccl 20 "$nccl_cmd"

# The defaults against the lab's own defaults file, and against the transfer cases of the every-lab defaults run
# of the memlab before the split (docs/results/h100/all_labs/defaults_this_memlab.json, 52c8f3d) where present.
all_labs=$root/docs/results/h100/all_labs/defaults_this_memlab.json
step defaults 30 "'$memlab' run transfer --out defaults.json > defaults.txt && $compare defaults.json '$committed/defaults.json' \
  && { [ ! -f '$all_labs' ] || $compare defaults.json '$all_labs'; }"
if [ -x "$bindir/memlab_gpu_tests" ]; then
  step gpu_tests 40 "'$bindir/memlab_gpu_tests' --gtest_filter='rungs/transfer_gpu.*' --gtest_brief=1"
else
  printf '%-12s %4s %5s  %s\n' gpu_tests - 0 "NOT RUN: $bindir/memlab_gpu_tests not built" >> "$summary"
fi
step nccl_one 30 "'$memlab' run transfer --variant nccl_all_reduce,nccl_all_gather,nccl_reduce_scatter,nccl_broadcast,nccl_all_to_all \
  --gpus 1 --sizes 8,4KiB,1MiB,64MiB,1GiB --out nccl_one_rank.json > nccl_one_rank.txt && \
  $compare nccl_one_rank.json '$committed/nccl_one_rank.json' --committed-axis placement=out_of_place"
step gib_pinned 30 "'$memlab' run transfer --variant ce,sm,auto --sizes 1GiB --direction all --host-memory pinned --max-time 2 \
  --out gib_pinned.json > gib_pinned.txt && $compare gib_pinned.json '$committed/gib_pinned.json'"
step sweep 25 "'$memlab' run transfer --variant ce --sizes 4KiB..1GiB:*4 --direction all --host-memory pinned --max-time 0.2 \
  --out sweep_ce_pinned.json > sweep_ce_pinned.txt && $compare sweep_ce_pinned.json '$committed/sweep_ce_pinned.json'"
if [ -x "$bindir/memlab_cli_tests" ]; then
  step cli_tests 20 "'$bindir/memlab_cli_tests' --gtest_filter='nccl_on_first_use.*' --gtest_brief=1"
else
  printf '%-12s %4s %5s  %s\n' cli_tests - 0 "NOT RUN: $bindir/memlab_cli_tests not built" >> "$summary"
fi

{
  echo
  echo "total $((SECONDS - t_start)) s (limit $limit)"
  grep -h '^default load\|^wheels\|NCCL [0-9]' "$w/nccl.log" 2>/dev/null
  grep -h '^compare ' "$w"/*.log 2>/dev/null
  grep -h 'MOVED' "$w"/*.log 2>/dev/null
  grep -h 'PASSED\|FAILED' "$w/gpu_tests.log" "$w/cli_tests.log" 2>/dev/null | sed 's/^/tests: /'
} >> "$summary"
tar -czf "$out/transfer_one_gpu.tar.gz" -C "$w" .
echo; echo "=== summary ($out/transfer_one_gpu.tar.gz) ==="; cat "$summary"
