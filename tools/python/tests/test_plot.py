"""memlab-plot on committed H100 results: the files exist, are not empty, and hold the series."""
import os

import pytest

from memlab_tools import plot
from memlab_tools.results import records

from conftest import FIXTURES


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots")
    files = [os.path.join(FIXTURES, "peers", "copy_f16.json"), os.path.join(FIXTURES, "peers", "peers_copy_f16.json"),
             os.path.join(FIXTURES, "stride_f32.json"), os.path.join(FIXTURES, "gather_f32.json"),
             os.path.join(FIXTURES, "tile_f32.json")]
    assert plot.main(files + ["-o", str(out)]) == 0
    recs = records(files)
    made = plot.size_plots(recs, str(out)) + plot.sweep_plots(recs, str(out))
    made += plot.point_plots(recs, str(out), skip_labs={m["lab"] for m in made})
    return out, {m["file"]: m for m in made + plot.roofline(recs, str(out)) + plot.time_tables(recs, str(out))}


def test_every_listed_file_exists_and_is_not_empty(made):
    out, manifest = made
    assert len(manifest) >= 5
    for name in manifest:
        assert os.path.getsize(os.path.join(out, name)) > 1000, name
    index = (out / "index.md").read_text()
    for name in manifest:
        assert f"]({name})" in index


def test_the_copy_plot_has_every_variant_and_peer(made):
    _, manifest = made
    size = [m for m in manifest.values() if m["kind"] == "size" and m["lab"] == "copy"]
    assert len(size) == 1  # one figure: the Triton block is part of its line's label, not a figure of its own
    assert {"scalar", "vec8", "vec16", "vec16_unroll", "auto", "memcpy [peer]", "cub [peer]", "thrust [peer]",
            "torch_copy_ [torch]", "torch_clone [torch]", "triton_copy (block=1024) [triton]"} <= set(size[0]["series"])


def test_a_lab_of_few_points_gets_bars(made):
    _, manifest = made
    bars = [m for m in manifest.values() if m["kind"] == "points"]
    assert [m["lab"] for m in bars] == ["tile"]
    assert {"ldgsts16", "cute_universal"} <= set(bars[0]["series"])


def test_the_stride_sweep_shows_the_three_strided_variants(made):
    _, manifest = made
    sweeps = [m for m in manifest.values() if m["kind"] == "sweep" and m["lab"] == "stride"]
    assert sweeps and {"strided", "strided_write", "strided_rw"} <= set(sweeps[0]["series"])


def test_the_time_table_has_the_reference_studys_shape(made):
    out, _ = made
    lines = (out / "times_copy_f16.md").read_text().splitlines()
    header = next(l for l in lines if l.startswith("| N |"))
    assert "vec16" in header and "memcpy [peer]" in header and "triton_copy (block=1024) [triton]" in header
    rows = [l for l in lines if l.startswith("| 4096 |") or l.startswith("| 2147483648 |")]
    assert len(rows) == 2


def test_refuses_a_file_that_is_not_results(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("[1]")
    assert plot.main([str(bad), "-o", str(tmp_path / "o")]) == 2


def test_an_fp32_lab_is_drawn_in_gflops_with_its_ladder_in_order_and_its_peers_marked(tmp_path):
    recs = records([os.path.join(FIXTURES, "matmul_f32.json")])  # written before results carried `peer`
    assert not plot.size_plots(recs, str(tmp_path)), "4096, 4100, 8192: bars, not a line against size"
    (bars,) = plot.point_plots(recs, str(tmp_path))
    assert "GFLOP/s" in bars["sentence"]
    assert bars["series"][0] == "naive" and bars["series"][-2:] == ["cublas_sgemm [peer]", "cublas_tf32 [peer]"]
    gemm = next(r for r in recs if r.variant == "double_buffered")
    assert plot._value(gemm, "fp32") == pytest.approx(gemm.data["flops"] / gemm.data["cold"]["median_ms"] / 1e6)


def test_a_lab_under_another_roof_draws_that_roof_not_dram():
    import matplotlib.pyplot as plt

    recs = records([os.path.join(FIXTURES, "smem_f32.json")])
    assert plot._lab_roof(recs) == "smem"
    fig, ax = plt.subplots()
    plot._lab_roof_lines(ax, recs)
    labels = [l.get_label() for l in ax.get_lines()]
    plt.close(fig)
    assert len(labels) == 1 and labels[0].startswith("shared-memory roof") and "GB/s" in labels[0]
