"""memlab's Python tools. They read and write the same results files as `memlab run --out FILE.json`
(schema memlab.results/1, docs/results-schema.md):

- memlab-peers: PyTorch and Triton peers of memlab's labs, verified, then timed cold, in batches and
  as a CUDA graph with the definitions of memlab's C++ harness;
- memlab-plot: bandwidth against size, sweeps against their models, rooflines (PNG + index.md);
- memlab-compare: two runs case by case, SAME / FASTER / SLOWER judged against both runs' noise;
- memlab-report: one self-contained HTML page of a `memlab check` run or of lab results;
- memlab-fleet: many nodes' check files judged together: outliers per GPU model, drift per GPU serial.
"""

__version__ = "0.1.0"
