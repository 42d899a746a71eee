#!/usr/bin/env bash
# A rank killed in the middle of a run of one process per GPU: the others must stop with an error that
# names it, within their --rank-timeout (30 s here), and rank 0's results file must hold what was
# measured before. Plain environment variables as the launcher; rank 2 is killed (SIGKILL) 15 s in.
#   tools/gpu/kill_one_rank.sh MEMLAB RANKS RESULTS.json LOGDIR
set -u
M=$1 N=$2 OUTJSON=$3 LOGS=$4
pids=()
for r in $(seq 0 $((N - 1))); do
  RANK=$r WORLD_SIZE=$N "$M" run transfer --variant nccl_all_reduce,nccl_all_gather --placement out_of_place \
    --sizes 64MiB..8GiB:*2 --max-time 3 --rank-timeout 30 --out "$OUTJSON" > "$LOGS/fault_rank$r.log" 2>&1 &
  pids+=($!)
done
sleep 15
t0=$(date +%s)
kill -9 "${pids[2]}" && echo "killed rank 2 (pid ${pids[2]}) at 15 s"
for r in $(seq 0 $((N - 1))); do
  wait "${pids[$r]}"
  echo "rank $r: exit $? after $(($(date +%s) - t0)) s"
done
for r in $(seq 0 $((N - 1))); do
  echo "--- rank $r's last lines"
  tail -n 2 "$LOGS/fault_rank$r.log"
done
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print('rank 0 file: valid JSON,', len(d['results']), 'results, ended:', d['ended'])" "$OUTJSON"
