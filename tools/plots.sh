#!/usr/bin/env bash
# Redraws every committed picture from the committed H100 results (the files each lab page links):
#   bash tools/plots.sh            (needs matplotlib: pip install ./tools/python)
# One memlab-plot call per lab page, each over the runs of one machine session, so no figure mixes
# two runs of the same case.
set -euo pipefail
cd "$(dirname "$0")/.."
h=docs/results/h100
plot() { local out=$1; shift; rm -rf "$out"; PYTHONPATH=tools/python python3 -m memlab_tools.plot "$@" -o "$out"; }
lab() { plot "$@" --only size,sweep,points,table; }
lab $h/plots/copy $h/peers/copy_f16.json $h/peers/peers_copy_f16.json \
  $h/peers/copy_f16_misaligned.json $h/peers/peers_copy_f16_misaligned.json
lab $h/plots/stride $h/stride_f16.json $h/stride_f32.json $h/stride_offsets_f32.json
lab $h/plots/gather $h/gather_f32.json
lab $h/plots/tile $h/tile_f32.json $h/tile_f16.json
# Every lab under the roofs: one run of each.
plot $h/plots/roofline --only roofline $h/peers/copy_f16.json $h/peers/peers_copy_f16.json $h/stride_f32.json \
  $h/gather_f32.json $h/tile_f32.json
