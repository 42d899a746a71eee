#!/usr/bin/env bash
# Typed axes and roofs on a real GPU (about 1 minute on an H100 after a ~2 minute build; one GPU, ${GPU:-0}):
#   1. cuBLAS's TF32 GEMM is held to the TF32 roof (roof "tf32", % under 100), its SGEMM to FP32's
#   2. a transfer rung's ignored axes are JSON null (not "-") and the file validates against the schema
#   3. smem's --lane-stride and the hierarchy's --node-stride run; --ilp 3 and --stride on smem are exit 2
#   4. memlab-compare reads the committed smem baseline (param "stride") against the new run with
#      --rename-param smem:stride=lane_stride
#   5. `memlab list --format json` equals tools/python/memlab_tools/labs.json (tools/docs/update_lab_table.py)
# Usage: OUT=/some/folder bash tools/gpu/check_typed_axes_gpu.sh      (BIN=path/to/memlab to skip the build)
# Writes $OUT/axes/{*.json,*.log,summary.txt}; every step logs and the script goes on after a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH CUDA_VISIBLE_DEVICES=${GPU:-0}
out=${OUT:-/tmp/check-typed-axes}/axes
mkdir -p "$out"
summary=()
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, records PASS/FAIL
  local name=$1; shift
  if timeout 300 "$@" > "$out/$name.log" 2>&1; then summary+=("PASS $name"); else summary+=("FAIL $name (rc $?)"); fi
  printf '%s\n' "${summary[@]}" > "$out/summary.txt"
}
bin=${BIN:-build/bin/memlab}
if [ -z "${BIN:-}" ]; then
  step build bash -c "cmake --preset dev > /dev/null && cmake --build build -j \$(nproc) --target memlab_cli"
fi
step tf32_roof bash -c "$bin run matmul --variant cublas_sgemm,cublas_tf32 --sizes 4096 --max-time 0.5 --quiet \
  --out $out/matmul_roofs.json && python3 - $out/matmul_roofs.json <<'EOF'
import json, sys
rs = {r['variant']: r for r in json.load(open(sys.argv[1]))['results']}
for v, roof in (('cublas_sgemm', 'fp32'), ('cublas_tf32', 'tf32')):
    r = rs[v]
    print(v, r['roof'], round(r['pct_roof'], 1), '% of its roof,', round(r['gflops']), 'GFLOP/s')
    assert r['roof']['name'] == roof and r['roof']['value'] > 0 and 0 < r['pct_roof'] < 100, r
EOF"
step null_params bash -c "$bin run transfer --variant ce,nccl_all_reduce --gpus 1 --direction h2d --host-memory pinned \
  --sizes 1MiB --max-time 0.2 --quiet --out $out/transfer_null.json --out $out/transfer_null.csv && \
  python3 tests/harness/validate_results.py docs/results.schema.json $out/transfer_null.json && \
  python3 - $out/transfer_null.json <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))['results']:
    print(r['variant'], r['params'], r['status'])
    assert '-' not in r['params'].values(), r['params']
    if r['variant'] == 'ce':
        assert r['params']['peer'] is None and r['params']['gpus'] is None and r['params']['direction'] == 'h2d'
    else:
        assert r['params']['direction'] is None and r['params']['host_memory'] is None
EOF"
step renamed_flags bash -c "$bin run smem --variant load_stride --lane-stride 1,32 --sizes 2^20 --max-time 0.3 \
  --out $out/smem_lane_stride.json && $bin run hierarchy --variant chase_l1 --node-stride 128 --sizes 1MiB \
  --max-time 0.3 --out $out/hierarchy_node_stride.json"
step usage_errors bash -c "$bin run hierarchy --ilp 3; a=\$?; $bin run smem --stride 2; b=\$?; \
  echo \"exit \$a and \$b\"; test \$a = 2 -a \$b = 2"
step compare_renamed bash -c "PYTHONPATH=tools/python python3 -m memlab_tools.compare \
  docs/results/h100/smem/smem_f32.json $out/smem_lane_stride.json --rename-param smem:stride=lane_stride; \
  test \$? -le 1"
step lab_table python3 tools/docs/update_lab_table.py --memlab "$bin"
printf '%s\n' "${summary[@]}"
