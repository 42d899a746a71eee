#!/usr/bin/env bash
# Redraws every committed picture and comparison table from the committed results (the files each lab page
# links):
#   bash tools/docs/plots.sh            (needs matplotlib: pip install ./tools/python)
# One memlab-plot call per picture folder, each over the runs of one machine session, so no figure mixes
# two sessions: the PyTorch and Triton peers are drawn with the memlab run of their own session. Every lab
# gets its ladder; labs measured over sizes or axes get those too. The pictures go into the lab's folder
# (docs/results/h100/<lab>/plots*/); each folder's manifest.csv lists them (tools/docs/results_catalogue.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
h=docs/results/h100
plot() { local out=$1; shift; rm -rf "$out"; PYTHONPATH=tools/python python3 -m memlab_tools.plot "$@" -o "$out"; }
lab() { plot "$@" --only ladder,size,sweep,table; }
lab $h/copy/plots $h/copy/copy_f16_with_peers.json $h/copy/peers_copy_f16.json \
  $h/copy/copy_f16_misaligned_with_peers.json $h/copy/peers_copy_f16_misaligned.json
lab $h/stride/plots $h/stride/stride_f16.json $h/stride/stride_f32.json $h/stride/stride_offsets_f32.json
lab $h/gather/plots $h/gather/gather_f32.json
lab $h/tile/plots $h/tile/tile_f32.json $h/tile/tile_f16.json
lab $h/smem/plots $h/smem/smem_f32.json
lab $h/async/plots $h/async/async_f32.json
lab $h/async/plots_offsets $h/async/async_src_offsets.json $h/async/async_smem_offsets.json
lab $h/async/plots_stages $h/async/async_stages.json $h/async/async_tiles.json
# The transpose lab's percentages are of a copy of the same bytes at each point (its `copy` peer), as its page says.
lab $h/transpose/plots --percent-of copy $h/transpose/transpose_f32.json $h/transpose/transpose_f16_f64.json
lab $h/transpose/plots_band $h/transpose/transpose_band.json
lab $h/layout/plots $h/layout/layout_f32.json $h/layout/layout_fields.json
lab $h/stencil/plots $h/stencil/stencil_1d_sizes.json $h/stencil/stencil_3d_sizes.json
lab $h/stencil/plots_stages $h/stencil/stencil_3d_stages.json $h/stencil/stencil_3d_planes.json
lab $h/matmul/plots $h/matmul/matmul_f32.json
# The labs beside their PyTorch and Triton peers: the defaults run and memlab-peers --like it, one machine
# session (the copy's peers are in copy/plots, of their own session).
d=$h/all_labs/defaults.json
for l in gather matmul; do lab $h/$l/plots_peers --lab $l $d $h/$l/peers_${l}_f32.json; done
lab $h/transpose/plots_peers --lab transpose --percent-of copy $d $h/transpose/peers_transpose_f32.json
# Every lab under the roofs, with its peers: that one session.
plot $h/all_labs/plots_roofline --only roofline $d $h/gather/peers_gather_f32.json \
  $h/transpose/peers_transpose_f32.json $h/matmul/peers_matmul_f32.json
# The races in one process (tools/gpu/device_library.sh peers1).
lab $h/copy/plots_one_process $h/copy/one_process_copy_f16.json
lab $h/transpose/plots_one_process $h/transpose/one_process_transpose.json
# The hierarchy and transfer labs' own pictures, each from every committed run of its lab.
rm -rf $h/hierarchy/plots
PYTHONPATH=tools/python python3 -m memlab_tools.plot_hierarchy $h/hierarchy/hierarchy_*.json -o $h/hierarchy/plots
# The transfer lab's 1 GiB bars from the 1 GiB runs the page's table cites, the sweep from the sweep (its 1 GiB point
# is another run: drawn in one picture, the last file given would set the bars).
rm -rf $h/transfer/plots
PYTHONPATH=tools/python python3 -m memlab_tools.plot_transfer $h/transfer/gib_*.json -o $h/transfer/plots --only gib
PYTHONPATH=tools/python python3 -m memlab_tools.plot_transfer $h/transfer/sweep_ce_pinned.json -o $h/transfer/plots \
  --only sweep
# memlab check on one H100: the idle check, and the check beside another process computing on the GPU.
c=$h/check
PYTHONPATH=tools/python python3 -m memlab_tools.plot_check $c/idle.json -o $c/check_idle.png --note "an idle GPU"
PYTHONPATH=tools/python python3 -m memlab_tools.plot_check $c/busy_compute.json -o $c/check_busy_compute.png \
  --note "another process computing on the GPU (a PyTorch bf16 matmul loop)"
# The transpose heat maps, one per element size, from the sweep's CSV (its summary.md is the sweep's own).
PYTHONPATH=tools/python python3 -m memlab_tools.transpose_shapes heatmap $h/transpose/heatmap/shapes.csv \
  -o $h/transpose/heatmap --no-summary
# Several GPUs of one host (the transfer lab): the pictures, and memlab's figure by nccl-tests' method beside
# nccl-tests' own, point by point, from each run and the nccl-tests logs of the same machine.
gpus() { PYTHONPATH=tools/python python3 -m memlab_tools.plot_gpus "$@"; }
x=docs/results/h100x4/transfer
rm -rf $x/plots
gpus $x/collectives_2gpu.json $x/collectives_4gpu.json $x/pairs.json $x/pairs_latency.json \
  --nccl-tests $x/nccl_tests_2gpu.log $x/nccl_tests_4gpu.log -o $x/plots --table $x/nccl_tests_vs_memlab.md
gpus $x/graph100_memlab.json --nccl-tests $x/graph100_nccl_tests_a.log --only time -o $x/plots/graph100 \
  --also-nccl-tests "nccl-tests -G 10, the same run"=$x/graph10_nccl_tests_a.log
table() { gpus "$1" --nccl-tests "$2" --only table --table "$3" -o "${TMPDIR:-/tmp}"; }
for c in a b; do
  table $x/graph100_memlab.json $x/graph100_nccl_tests_$c.log $x/graph100_vs_nccl_tests_$c.md
  table $x/graph_memlab.json $x/graph_nccl_tests_$c.log $x/graph_vs_nccl_tests_$c.md
  table $x/graph_cudamalloc_memlab.json $x/graph_cudamalloc_nccl_tests_$c.log $x/graph_cudamalloc_vs_nccl_tests_$c.md
  table docs/results/h200x2/transfer/graph_memlab.json docs/results/h200x2/transfer/graph_nccl_tests_$c.log \
    docs/results/h200x2/transfer/graph_vs_nccl_tests_$c.md
done
table $x/host_16MiB_1GiB_memlab.json $x/host_16MiB_1GiB_nccl_tests.log $x/host_16MiB_1GiB_vs_nccl_tests.md
table $x/below_16MiB_memlab.json $x/below_16MiB_nccl_tests.log $x/below_16MiB_vs_nccl_tests.md
