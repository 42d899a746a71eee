#!/usr/bin/env bash
# Redraws every committed picture from the committed H100 results (the files each lab page links):
#   bash tools/plots.sh            (needs matplotlib: pip install ./tools/python)
# One memlab-plot call per lab page, each over the runs of one machine session (and the committed
# peers of the same points, docs/results/h100/peers/), so no figure mixes two runs of the same case.
# Every lab gets its ladder; labs measured over sizes or axes get those figures too.
set -euo pipefail
cd "$(dirname "$0")/.."
h=docs/results/h100
plot() { local out=$1; shift; rm -rf "$out"; PYTHONPATH=tools/python python3 -m memlab_tools.plot "$@" -o "$out"; }
lab() { plot "$@" --only ladder,size,sweep,table; }
lab $h/plots/copy $h/peers/copy_f16.json $h/peers/peers_copy_f16.json \
  $h/peers/copy_f16_misaligned.json $h/peers/peers_copy_f16_misaligned.json
lab $h/plots/stride $h/stride_f16.json $h/stride_f32.json $h/stride_offsets_f32.json
lab $h/plots/gather $h/gather_f32.json $h/peers/peers_gather_f32.json
lab $h/plots/tile $h/tile_f32.json $h/tile_f16.json
lab $h/plots/smem $h/smem_f32.json
lab $h/plots/async $h/async_f32.json
lab $h/plots/async_offsets $h/async_src_offsets.json $h/async_smem_offsets.json
lab $h/plots/async_stages $h/async_stages.json $h/async_tiles.json
lab $h/plots/transpose $h/transpose_f32.json $h/transpose_f16_f64.json $h/peers/peers_transpose_f32.json
lab $h/plots/transpose_band $h/transpose_band.json $h/peers/peers_transpose_f32.json
lab $h/plots/layout $h/layout_f32.json $h/layout_fields.json
lab $h/plots/stencil $h/stencil/stencil_1d_sizes.json $h/stencil/stencil_3d_sizes.json
lab $h/plots/stencil_stages $h/stencil/stencil_3d_stages.json $h/stencil/stencil_3d_planes.json
lab $h/plots/matmul $h/matmul_f32.json $h/peers/peers_matmul_f32.json
# Every lab under the roofs: one run of each.
plot $h/plots/roofline --only roofline $h/peers/copy_f16.json $h/peers/peers_copy_f16.json $h/stride_f32.json \
  $h/gather_f32.json $h/tile_f32.json $h/smem_f32.json $h/async_f32.json $h/transpose_f32.json $h/layout_f32.json \
  $h/stencil/stencil_3d_sizes.json $h/matmul_f32.json $h/peers/peers_matmul_f32.json $h/peers/peers_transpose_f32.json \
  $h/peers/peers_gather_f32.json
