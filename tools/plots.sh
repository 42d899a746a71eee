#!/usr/bin/env bash
# Redraws every committed picture from the committed H100 results (the files each lab page links):
#   bash tools/plots.sh            (needs matplotlib: pip install ./tools/python)
# One memlab-plot call per lab page, each over the runs of one machine session, so no figure mixes
# two sessions: the PyTorch and Triton peers (docs/results/h100/peers/) are drawn with the memlab run
# of their own session. Every lab gets its ladder; labs measured over sizes or axes get those too.
set -euo pipefail
cd "$(dirname "$0")/.."
h=docs/results/h100
plot() { local out=$1; shift; rm -rf "$out"; PYTHONPATH=tools/python python3 -m memlab_tools.plot "$@" -o "$out"; }
lab() { plot "$@" --only ladder,size,sweep,table; }
lab $h/plots/copy $h/peers/copy_f16.json $h/peers/peers_copy_f16.json \
  $h/peers/copy_f16_misaligned.json $h/peers/peers_copy_f16_misaligned.json
lab $h/plots/stride $h/stride_f16.json $h/stride_f32.json $h/stride_offsets_f32.json
lab $h/plots/gather $h/gather_f32.json
lab $h/plots/tile $h/tile_f32.json $h/tile_f16.json
lab $h/plots/smem $h/smem_f32.json
lab $h/plots/async $h/async_f32.json
lab $h/plots/async_offsets $h/async_src_offsets.json $h/async_smem_offsets.json
lab $h/plots/async_stages $h/async_stages.json $h/async_tiles.json
lab $h/plots/transpose $h/transpose_f32.json $h/transpose_f16_f64.json
lab $h/plots/transpose_band $h/transpose_band.json
lab $h/plots/layout $h/layout_f32.json $h/layout_fields.json
lab $h/plots/stencil $h/stencil/stencil_1d_sizes.json $h/stencil/stencil_3d_sizes.json
lab $h/plots/stencil_stages $h/stencil/stencil_3d_stages.json $h/stencil/stencil_3d_planes.json
lab $h/plots/matmul $h/matmul_f32.json
# The labs beside their PyTorch and Triton peers: the defaults run and memlab-peers --like it, one machine
# session (the copy's peers are in plots/copy, of their own session).
d=$h/verification/defaults_0aa6be0.json
for l in gather transpose matmul; do lab $h/plots/${l}_peers --lab $l $d $h/peers/peers_${l}_f32.json; done
# Every lab under the roofs, with its peers: that one session.
plot $h/plots/roofline --only roofline $d $h/peers/peers_gather_f32.json $h/peers/peers_transpose_f32.json \
  $h/peers/peers_matmul_f32.json
# The transfer lab: host <-> device at 1 GiB per host memory kind, and the copy engine against size.
rm -rf $h/plots/transfer
PYTHONPATH=tools/python python3 -m memlab_tools.plot_transfer $h/transfer/gib_*.json $h/transfer/sweep_ce_pinned.json \
  -o $h/plots/transfer
# Issue 22: the races in one process (tools/device_issue22.sh peers1), once their files are committed.
o=$h/peers1
if [ -f $o/peers1_copy_f16.json ]; then lab $h/plots/copy_one_process $o/peers1_copy_f16.json; fi
if [ -f $o/peers1_transpose.json ]; then lab $h/plots/transpose_one_process $o/peers1_transpose.json; fi
