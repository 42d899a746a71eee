"""memlab-plot on committed H100 results: every lab gets its ladder, merged files lose no chart, peers join
the points they share, each bad input is one line and exit 2, and the style map keeps series apart."""
import glob
import json
import os
import re
import warnings

import pytest

from memlab_tools import plot, table
from memlab_tools.results import records

from conftest import BAD_FILES, FIXTURES, bad_file, document, exit_code, result

LABS = ("copy", "stride", "gather", "tile", "smem", "async", "transpose", "layout", "stencil", "matmul")


def fx(*names):
    return [os.path.join(FIXTURES, n) for n in names]


def _draw(tmp_path, files, kinds=plot.KINDS):
    """Draws `files` with every warning an error: a picture that makes matplotlib warn fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return plot.draw(records(files), str(tmp_path), kinds)


def _one(made, kind, lab):
    (m,) = [m for m in made if m["kind"] == kind and m["lab"] == lab]
    return m


def _plot_files(tmp_path_factory, *names):
    """memlab-plot on `names` (committed files) with every warning an error: the folder and what it made, by file."""
    out = tmp_path_factory.mktemp("plots")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return out, {m["file"]: m for m in plot.plot_files(fx(*names), str(out)).made}


# One module fixture per lab, each drawn once for the tests of that lab: the shards (conftest.py) keep a fixture's
# tests together, so one fixture drawing the four labs (~8 s on CI's two cores) made one shard run past 10 s.
@pytest.fixture(scope="module")
def copy_drawn(tmp_path_factory):
    return _plot_files(tmp_path_factory, "copy/copy_f16_with_peers.json", "copy/peers_copy_f16.json")


@pytest.fixture(scope="module")
def stride_drawn(tmp_path_factory):
    return _plot_files(tmp_path_factory, "stride/stride_f32.json")


@pytest.fixture(scope="module")
def gather_drawn(tmp_path_factory):
    return _plot_files(tmp_path_factory, "gather/gather_f32.json", "gather/peers_gather_f32.json")


@pytest.fixture(scope="module")
def tile_drawn(tmp_path_factory):
    return _plot_files(tmp_path_factory, "tile/tile_f32.json")


def _every_listed_file_exists_and_is_not_empty(drawn, pictures):
    out, made = drawn
    assert len(made) >= pictures
    index = (out / "index.md").read_text()
    for name in made:
        assert os.path.getsize(os.path.join(out, name)) > 1000, name
        assert f"]({name})" in index


def _the_lab_gets_a_ladder(drawn, lab):
    _, made = drawn
    assert [m["lab"] for m in made.values() if m["kind"] == "ladder"] == [lab]


# Each lab's files, drawn alone: the ladder, its size or sweep pictures, the roofline (and copy's time table).
def test_every_listed_file_exists_and_is_not_empty_copy(copy_drawn):
    _every_listed_file_exists_and_is_not_empty(copy_drawn, 4)


def test_every_listed_file_exists_and_is_not_empty_stride(stride_drawn):
    _every_listed_file_exists_and_is_not_empty(stride_drawn, 3)


def test_every_listed_file_exists_and_is_not_empty_gather(gather_drawn):
    _every_listed_file_exists_and_is_not_empty(gather_drawn, 4)


def test_every_listed_file_exists_and_is_not_empty_tile(tile_drawn):
    _every_listed_file_exists_and_is_not_empty(tile_drawn, 2)


def test_every_lab_gets_a_ladder_copy(copy_drawn):
    _the_lab_gets_a_ladder(copy_drawn, "copy")


def test_every_lab_gets_a_ladder_stride(stride_drawn):
    _the_lab_gets_a_ladder(stride_drawn, "stride")


def test_every_lab_gets_a_ladder_gather(gather_drawn):
    _the_lab_gets_a_ladder(gather_drawn, "gather")


def test_every_lab_gets_a_ladder_tile(tile_drawn):
    _the_lab_gets_a_ladder(tile_drawn, "tile")


def test_the_copy_sizes_split_rungs_from_peers_and_keep_every_series(copy_drawn):
    _, made = copy_drawn
    size = [m for m in made.values() if m["kind"] == "size" and m["lab"] == "copy"]
    assert len(size) == 1  # one figure: the Triton block is part of its line's label, not a figure of its own
    series = {"scalar", "vec8", "vec16", "vec16_unroll", "auto", "memcpy [peer]", "cub [peer]", "thrust [peer]",
              "torch_copy_ [torch]", "torch_clone [torch]", "triton_copy (block=1024) [triton]"}
    assert series <= set(size[0]["series"])
    panels = size[0]["panels"]
    assert len(panels) == 2 and all(len(p) <= plot.MAX_SERIES for p in panels)
    assert "memcpy [peer]" not in panels[0] and {"auto", "memcpy [peer]"} <= set(panels[1])


def test_the_gather_picture_has_the_committed_peers(gather_drawn):
    _, made = gather_drawn
    ladder = _one(made.values(), "ladder", "gather")
    assert {"random", "sorted", "torch_index_select_random [torch]", "torch_take_sorted [torch]"} <= \
        set(ladder["series"])
    assert {p["table_bytes"] for p in ladder["points"]} == {8 << 20, 200 << 20}  # where the peers were measured


def test_the_stride_sweep_is_drawn_beside_its_sector_model(stride_drawn):
    _, made = stride_drawn
    sweeps = [m for m in made.values() if m["kind"] == "sweep" and m["lab"] == "stride"]
    assert sweeps and {"strided", "strided_write", "strided_rw"} <= set(sweeps[0]["series"])
    assert sweeps[0]["modelled"]


def test_the_time_table_has_the_reference_studys_shape(copy_drawn):
    out, _ = copy_drawn
    lines = (out / "times_copy_f16.md").read_text().splitlines()
    header = next(l for l in lines if l.startswith("| N |"))
    assert "vec16" in header and "memcpy [peer]" in header and "triton_copy (block=1024) [triton]" in header
    rows = [l for l in lines if l.startswith("| 4096 |") or l.startswith("| 2147483648 |")]
    assert len(rows) == 2


def test_transpose_with_its_peers(tmp_path):
    # Peers have no band: they join every band of their shape (it was KeyError: 'band').
    assert plot.main(fx("transpose/transpose_f32.json", "transpose/peers_transpose_f32.json") + ["-o", str(tmp_path)]) == 0
    p = _draw(tmp_path, fx("transpose/transpose_f32.json", "transpose/peers_transpose_f32.json"))
    ladder = _one(p.made, "ladder", "transpose")
    assert {"naive", "smem_vec_rows", "cublas [peer]", "copy [peer]", "torch_t_contiguous [torch]",
            "triton_transpose [triton]"} <= set(ladder["series"])
    assert len(ladder["points"]) == 2 and not p.notes


def test_a_peers_file_alone(tmp_path):
    # Only framework peers, one with a param of its own (a Triton block): it was KeyError: 'block'.
    p = _draw(tmp_path, fx("copy/peers_copy_f16.json"))
    assert {m["kind"] for m in p.made} >= {"ladder", "size"} and not p.notes


def test_a_band_sweep_draws_peers_without_the_axis_as_level_lines(tmp_path):
    p = _draw(tmp_path, fx("transpose/transpose_band.json", "transpose/peers_transpose_f32.json"), kinds=("sweep",))
    (sweep,) = p.made
    assert sweep["series"] == ["smem_padded", "smem_vec", "smem_vec_rows"]
    assert "2 peer(s) as level lines" in sweep["sentence"] and "axes from zero" in sweep["sentence"]


@pytest.mark.parametrize("main_file, sweep_file, axis", [
    pytest.param("transpose/transpose_f32.json", "transpose/transpose_band.json", "band",
                 marks=pytest.mark.shard_weight(2)),
    pytest.param("async/async_f32.json", "async/async_stages.json", "stages", marks=pytest.mark.shard_weight(4)),
])
def test_a_main_file_merged_with_its_sweep_keeps_the_ladder(tmp_path, main_file, sweep_file, axis):
    lab = os.path.basename(main_file).split("_")[0]
    p = _draw(tmp_path, fx(main_file, sweep_file))
    ladder = _one(p.made, "ladder", lab)
    (tmp_path / "alone").mkdir()
    alone = plot.draw(records(fx(main_file)), str(tmp_path / "alone"), ("ladder",))
    assert set(_one(alone.made, "ladder", lab)["series"]) <= set(ladder["series"])  # nothing lost to the merge
    assert any(m["kind"] == "sweep" and f"_{axis}_" in m["file"] for m in p.made)


def test_every_committed_results_file_in_one_call(tmp_path, capsys, monkeypatch):
    # Every committed JSON file, as `memlab-plot docs/results/h100/*/*.json` gives them: every lab, runs of several
    # sessions, --profile runs, and files that are not results (check runs, check references, a study's own
    # schema). Exit 0, a ladder per lab, no warning; stderr holds only memlab-plot's own lines: one per file
    # skipped (naming it and why), what was not drawn (once per reason), the count. The PNGs are not encoded here
    # (that takes a minute on two cores; the other tests encode theirs).
    def is_results(path):
        with open(path, encoding="utf-8") as f:
            return '"schema": "memlab.results/1"' in f.read(4096)

    every = sorted(glob.glob(os.path.join(FIXTURES, "**", "*.json"), recursive=True))
    others = [f for f in every if not is_results(f)]
    assert len(every) - len(others) >= 70 and others  # the check's files are among them
    saved = []
    monkeypatch.setattr(plot.plt.Figure, "savefig", lambda self, path, **kw: saved.append(os.path.basename(path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plot.main(every + ["-o", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("memlab-plot: ") for line in err), err
    skipped = [line for line in err if line.startswith("memlab-plot: skipped ")]
    assert sorted(line.split(" ")[2].rstrip(":") for line in skipped) == others
    assert all("not a memlab.results/1 file" in line for line in skipped), skipped
    assert f" files in {tmp_path} from {len(every) - len(others)} results file(s) (index.md lists them" in err[-1]
    assert f"; {len(others)} file(s) skipped)" in err[-1]
    assert all(line.startswith(("memlab-plot: not drawn: ", "memlab-plot: skipped ")) for line in err[:-1])
    assert len(err) == len(set(err))  # each reason once
    assert any("a --profile run" in line for line in err)
    for lab in LABS:
        assert any(name.startswith(f"ladder_{lab}_") for name in saved), lab
    assert "roofline.png" in saved
    index = (tmp_path / "index.md").read_text()
    assert "## Not drawn" in index and "## Files skipped" in index
    assert all(f"- {o}: not a memlab.results/1 file" in index for o in others)


@pytest.mark.shard_weight(0.25)
@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_every_bad_file_is_skipped_in_one_line_and_alone_is_exit_2(tmp_path, capsys, kind):
    # The good file beside the bad one: one record as memlab writes it (a committed file's ladder took 0.5 s a kind).
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document([result()])))
    good = str(good)
    bad = bad_file(tmp_path, kind)
    assert plot.main([good, bad, "-o", str(tmp_path / "o"), "--only", "ladder"]) == 0  # the good file is drawn
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"memlab-plot: skipped {bad}: ") and BAD_FILES[kind][1] in err[0], err
    assert len([line for line in err if bad in line]) == 1 and "1 file(s) skipped" in err[-1]
    assert plot.main([bad, "-o", str(tmp_path / "o2")]) == 2  # nothing left to draw
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.startswith(f"memlab-plot: skipped {bad}: ") and BAD_FILES[kind][1] in err
    assert "memlab-plot: nothing to draw: none of the 1 file(s) given is a memlab results file\n" in err
    assert not (tmp_path / "o2").exists()


@pytest.mark.shard_weight(0.25)
def test_results_with_nothing_a_picture_can_show_exit_2(tmp_path, capsys):
    r = result()
    r.update(status="skipped", note="needs two GPUs")
    doc = document([r])
    path = tmp_path / "skipped.json"
    path.write_text(json.dumps(doc))
    assert plot.main([str(path), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("memlab-plot: nothing drawn from the 1 results file(s): no result a picture can show")


@pytest.mark.shard_weight(0.25)
def test_help_says_what_is_skipped_and_when_the_exit_is_not_0(capsys):
    assert exit_code(plot.main, ["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "are skipped, each named on stderr with why in one line" in text
    assert "0 something was drawn, whatever was skipped; 2 nothing could be drawn" in text


@pytest.mark.shard_weight(0.25)
def test_an_out_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    for out in (str(a_file), str(a_file / "sub"), "/proc/memlab-plot-test"):
        assert plot.main(fx("gather/gather_f32.json") + ["-o", out]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"memlab-plot: -o {out}: cannot write there"), err


def test_lab_draws_one_lab_of_a_file_of_all(tmp_path, capsys):
    files = fx("all_labs/defaults.json", "matmul/peers_matmul_f32.json")
    assert plot.main(files + ["-o", str(tmp_path), "--lab", "matmul", "--only", "ladder"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["index.md", "ladder_matmul_f32.png"]
    assert plot.main(files + ["-o", str(tmp_path), "--lab", "fft"]) == 2
    assert "--lab: no results of fft in these files (they hold async, copy," in capsys.readouterr().err


@pytest.mark.shard_weight(0.25)
def test_flags_and_a_missing_matplotlib(tmp_path, capsys, monkeypatch):
    assert plot.main(fx("gather/gather_f32.json") + ["-o", str(tmp_path), "--only", "pie"]) == 2
    assert "--only: 'pie' is not one of" in capsys.readouterr().err
    assert exit_code(plot.main, ["-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    monkeypatch.setattr(plot, "MISSING", "matplotlib")
    assert plot.main(fx("gather/gather_f32.json") + ["-o", str(tmp_path)]) == 3
    assert capsys.readouterr().err == "memlab-plot: matplotlib is not installed (pip install ./tools/python)\n"


@pytest.mark.shard_weight(2)
def test_matmul_bars_are_linear_with_values_and_tf32_has_its_own_roof(tmp_path):
    p = _draw(tmp_path, fx("matmul/matmul_f32.json", "matmul/peers_matmul_f32.json"))
    ladder = _one(p.made, "ladder", "matmul")
    assert ladder["measure"] == "gflops" and len(ladder["points"]) == 3
    assert {"naive", "double_buffered", "cublas_sgemm [peer]", "cublas_tf32 [peer]", "torch_matmul [torch]"} <= \
        set(ladder["series"])
    assert "axis from zero" in ladder["sentence"] and "best peer" in ladder["sentence"]
    roof = _one(p.made, "roofline", "*")
    assert "TF32" in roof["roofs"] and "FP32" in roof["roofs"]
    v, text = plot.tf32_roof([r for r in p.recs if r.variant == "cublas_tf32"])
    assert v > 0 and "2048 FLOP/clock" in text
    assert all(plot.value(r, "gflops") < v for r in p.recs if plot.is_tf32(r))


def test_the_roofline_draws_no_tf32_roof_without_a_tf32_point(tmp_path):
    p = _draw(tmp_path, fx("matmul/matmul_f32.json", "smem/smem_f32.json"), kinds=("roofline",))
    recs = [r for r in records(fx("matmul/matmul_f32.json")) if not plot.is_tf32(r)]
    assert plot.tf32_roof(recs) == (0.0, "")
    roofs = _one(p.made, "roofline", "*")["roofs"]
    assert "TF32" in roofs  # matmul_f32.json holds cublas_tf32
    assert "shared memory" in roofs


def test_the_stencil_splits_1d_from_3d(tmp_path):
    p = _draw(tmp_path, fx("stencil/stencil_1d_sizes.json", "stencil/stencil_3d_sizes.json"), kinds=("size",))
    (size,) = p.made
    one, three = size["panels"]
    assert all(s.startswith("1d_") for s in one) and all(s.startswith("3d_") for s in three)
    assert max(len(one), len(three)) <= plot.MAX_SERIES


def test_the_smem_sweep_is_drawn_beside_its_wavefront_model(tmp_path):
    p = _draw(tmp_path, fx("smem/smem_f32.json"), kinds=("sweep", "ladder"))
    sweep = _one(p.made, "sweep", "smem")
    assert sweep["modelled"] and "load_stride" in sweep["series"]
    # The model panel plots what its axis says: wavefronts per warp request. 4-byte accesses take gcd(stride, 32);
    # 8- and 16-byte ones 2 and 4 at the least and 32 at a stride of 32 (not 16 and 8: their bytes per useful byte).
    assert sweep["model_label"].startswith("wavefronts per warp request")
    model = {s: dict(pts) for s, pts in sweep["model"].items()}
    assert [round(model["load_stride"][x]) for x in (1, 2, 4, 8, 16, 32)] == [1, 2, 4, 8, 16, 32]
    assert [round(model["load_vec8"][x]) for x in (1, 32)] == [2, 32]
    assert [round(model["load_vec16"][x]) for x in (1, 8, 32)] == [4, 32, 32]
    # The file's axis "stride" is today's lane_stride: drawn and titled by today's name, and said so.
    assert sweep["axis"] == "lane stride"
    assert [pt["stride"] for pt in _one(p.made, "ladder", "smem")["points"]] == [1, 32]


@pytest.mark.shard_weight(0.25)
def test_a_lab_under_another_roof_draws_that_roof_not_dram():
    recs = records(fx("smem/smem_f32.json"))
    assert plot.lab_roof(recs) == "smem"
    (roof,) = plot.roof_lines(recs, "gbps")
    assert roof[1].startswith("shared memory roof") and "GB/s" in roof[1]


# ---- the style map ---------------------------------------------------------------------------------------------

@pytest.mark.shard_weight(0.25)
def test_every_copy_series_has_its_own_style_and_peers_are_dashed():
    from memlab_tools import table
    from memlab_tools.peers import PEERS
    rungs = table.rungs("copy")  # the ladder and the peers as the table and memlab-peers name them
    peers = table.peers("copy") + [p.variant for p in PEERS if p.lab == "copy"]
    assert "auto" in rungs and {"memcpy", "torch_copy_", "triton_copy"} <= set(peers)
    styles = [plot.style("copy", v, False) for v in rungs] + [plot.style("copy", v, True) for v in peers]
    assert len({(s["color"], s["marker"]) for s in styles}) == len(styles)
    assert plot.style("copy", "auto", False)["color"] != plot.style("copy", "triton_copy", True)["color"]
    assert all(s["ls"] == "--" for s in styles[len(rungs):]) and all(s["ls"] == "-" for s in styles[:len(rungs)])
    for s in styles:  # no series is drawn like a roof (black or grey)
        assert s["color"].lower() not in ("#000000", "black", "#7f7f7f", "gray", "grey")
    assert plot.style("stencil", "1d_ldgsts", False) == plot.style("stencil", "3d_ldgsts", False)
    assert plot.style("copy", "auto", False) == plot.style("copy", "auto", False)


@pytest.mark.shard_weight(0.25)
def test_panel_styles_never_repeat_a_colour():
    series = [("newlab", f"v{i}", False) for i in range(8)]  # hashed names may collide: the panel moves them
    colours = [s["color"] for s in plot.panel_styles(series).values()]
    assert len(set(colours)) == len(colours)


# ---- a lab the plotter does not know --------------------------------------------------------------------------

def _lab_file(tmp_path, name, recs, roof=None):
    doc = document(recs)
    doc["device"] = {"name": "GPU", "cc": "9.0", "sm_count": 132, "peak_gbps": 3352.0, "measured_peak_gbps": 3000.0}
    if roof:
        doc["labs"] = {recs[0]["lab"]: {"roof": roof, "params": ["dtype", "n"]}}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_an_unknown_latency_lab_gets_a_ladder_and_a_size_picture_of_time(tmp_path):
    recs = []
    for n in (1 << 10, 1 << 14, 1 << 18, 1 << 22):
        for v, ms in (("chase_default", 0.001), ("chase_cg", 0.002)):
            r = result(v, n, ms * (1 + n / 2**22), lab="hierarchy")
            r["bytes"] = 0  # a pointer chase counts accesses, not bytes
            recs.append(r)
    path = _lab_file(tmp_path, "hierarchy.json", recs)
    p = _draw(tmp_path, [path])
    ladder = _one(p.made, "ladder", "hierarchy")
    assert ladder["measure"] == "time" and set(ladder["series"]) == {"chase_default", "chase_cg"}
    assert "µs" in ladder["sentence"]
    size = _one(p.made, "size", "hierarchy")
    assert size["panels"] == [["chase_default", "chase_cg"]] and "time per case" in size["sentence"]
    assert not p.notes


def test_an_unknown_bandwidth_lab_with_its_own_roof(tmp_path):
    recs = [result(v, n, ms, lab="transfer") for v, n, ms in
            (("ce_pinned", 1 << 20, 0.1), ("ce_pageable", 1 << 20, 0.3), ("sm_zero_copy", 1 << 20, 0.2))]
    for r in recs:
        r["roof"] = {"name": "pcie", "value": 63.0, "unit": "GB/s"}
    path = _lab_file(tmp_path, "transfer.json", recs, roof="pcie")
    assert plot.main([path, "-o", str(tmp_path)]) == 0
    p = _draw(tmp_path, [path])
    ladder = _one(p.made, "ladder", "transfer")
    assert ladder["measure"] == "gbps" and "under the PCIe roof 63 GB/s" in ladder["sentence"]
    assert "roofline.png" in {m["file"] for m in p.made}


# ---- memlab's own library, the transfer lab's pictures ----------------------------------------------------------

def test_memlabs_library_from_python_is_memlabs_not_a_hatched_peer(tmp_path):
    p = _draw(tmp_path, fx("transpose/one_process_transpose.json"), kinds=("ladder",))
    recs = [r for r in p.recs if r.variant == "memlab_transpose"]
    assert recs and not any(plot.hatched(r) for r in recs) and all(plot.is_peer(r) for r in recs)
    assert all(plot.hatched(r) for r in p.recs if r.variant == "triton_transpose")
    assert any("memlab_transpose [memlab's library]" in m["series"] for m in p.made)


def test_transfer_pictures_hold_no_blank_slot_and_bidir_has_two_directions_roof(tmp_path):
    from memlab_tools import plot_transfer
    from memlab_tools.results import load

    files = fx("transfer/gib_pageable.json", "transfer/gib_pinned.json", "transfer/sweep_ce_pinned.json")
    rows = [r for f in files for r in load(f)["results"] if r["status"] == "ok"]
    big = max(r["params"]["n"] for r in rows)
    panels = plot_transfer.panels([r for r in rows if r["params"]["n"] == big])
    assert panels["pageable"] == ["ce"] and len(panels["pinned"]) == 3
    bidir = [r for r in rows if r["params"]["direction"] == "bidir"]
    one_way = [r for r in rows if r["params"]["direction"] != "bidir"]
    assert {plot_transfer._ways(r) for r in bidir} == {2} and {plot_transfer._ways(r) for r in one_way} == {1}
    assert min(r["roof"]["value"] for r in bidir) == pytest.approx(2 * max(r["roof"]["value"] for r in one_way))
    assert plot_transfer.main(files + ["-o", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["transfer_gib.png", "transfer_sweep.png"]


def test_the_transfer_bars_are_the_1_gib_runs_the_page_cites(monkeypatch, tmp_path):
    """The 1 GiB bars come from the 1 GiB runs alone (plots.sh: --only gib): pinned ce at 53.5 and 55.3 GB/s, as the
    page says, not the sweep's 1 GiB point of another run; --only gib draws no sweep."""
    from memlab_tools import plot_transfer
    drawn, sweeps = {}, []

    def gib(records, out, device, skipped=()):
        drawn.update({(r["variant"], r["params"]["host_memory"], r["params"]["direction"]): r["gbps"] for r in records})

    monkeypatch.setattr(plot_transfer, "gib_picture", gib)
    monkeypatch.setattr(plot_transfer, "sweep_picture", lambda *a: sweeps.append(a))
    files = glob.glob(os.path.join(FIXTURES, "transfer", "gib_*.json"))
    assert plot_transfer.main(files + ["-o", str(tmp_path), "--only", "gib"]) == 0
    assert round(drawn[("ce", "pinned", "h2d")], 1) == 53.5 and round(drawn[("ce", "pinned", "d2h")], 1) == 55.3
    assert sweeps == []


@pytest.mark.shard_weight(0.25)
def test_an_axis_value_with_a_meaning_is_titled_by_it():
    # From the lab's table: a shape's extents together, a value the axis gives a meaning by that meaning, one that
    # means "the same as n" joined to n, a count with its unit; never ctas=0, m=0 or n=2^12.
    tile = [("n", 1 << 28), ("rows", 128), ("cols", 128), ("ctas", 0), ("src_offset", 0)]
    assert plot.fmt_point(tile, "tile") == "n=2^28, tile 128 \u00d7 128, CTAs: one per tile of the whole matrix, src offset 0 B"
    assert plot.fmt_param("ctas", 1, "tile") == "1 CTA"
    assert plot.fmt_point([("n", 4096), ("m", 0), ("k", 0)], "matmul") == "n = m = k = 4096"
    assert plot.fmt_point([("n", 4096), ("m", 1024), ("k", 0)], "matmul") == "n = k = 4096, m=1024"
    assert plot.fmt_point([("rows", 16384), ("cols", 16384)], "transpose") == "shape 16384 \u00d7 16384"
    assert plot.fmt_point([("table_bytes", 8 << 20)], "gather") == "table 8 MiB"
    assert plot.fmt_point([("n", 1 << 20), ("stride", 4)], "smem") == "n=2^20, lane stride 4 accesses"
    assert plot.fmt_point([("n", 4096), ("ctas", 0)]) == "n=4096, ctas=0"  # no lab: as the file says
    # What every panel shares goes into the figure's title once; each panel says the rest.
    shared, own = plot.split_points([tile, tile[:3] + [("ctas", 1), ("src_offset", 0)]], "tile")
    assert shared == "n=2^28, tile 128 \u00d7 128, src offset 0 B"
    assert own == ["CTAs: one per tile of the whole matrix", "1 CTA"]


@pytest.mark.shard_weight(0.25)
def test_every_value_meaning_of_the_table_reads_as_words():
    """Each "V = words" of an axis's meaning gives words without the next value's ("128 = one per cache line, 32 =
    one per sector" is two meanings)."""
    for entry in table.labs():
        for a in entry["axes"]:
            for v in (int(x) for x in re.findall(r"(?:^|[;:,(] ?)(\d+) = ", a["meaning"])):
                said = plot.value_meaning(entry["name"], a["name"], v)
                assert said and not re.search(r"\d+ = ", said), (entry["name"], a["name"], v, said)


def test_the_tile_ladder_titles_its_panels_by_meaning_and_names_rungs_as_today(tmp_path):
    p = _draw(tmp_path, fx("tile/tile_f32.json"), kinds=("ladder",))
    ladder = _one(p.made, "ladder", "tile")
    assert ladder["title"] == "n=2^28, src offset 0 B"
    assert sorted(ladder["panel_titles"]) == sorted(
        [f"tile 128 \u00d7 {c}, {w}" for c in (128, 256) for w in ("CTAs: one per tile of the whole matrix", "1 CTA")])
    # The file's rung of an earlier name is drawn under today's, and the picture says so.
    (old,) = {r.variant for r in records(fx("tile/tile_f32.json"))} - set(table.rungs("tile"))
    now = table.variant_now("tile", old)
    assert now != old and now in table.rungs("tile") and now in ladder["series"] and old not in ladder["series"]
    assert ladder["renamed"] == f"today's names: {now} ({old} in the file)"


def test_the_matmul_ladder_says_its_square_sizes(tmp_path):
    p = _draw(tmp_path, fx("matmul/matmul_f32.json"), kinds=("ladder",))
    ladder = _one(p.made, "ladder", "matmul")
    assert ladder["title"] == "" and ladder["panel_titles"] == [f"n = m = k = {pt['n']}" for pt in ladder["points"]]
    assert {pt["n"] for pt in ladder["points"]} >= {4096, 4100}


def test_percent_of_a_variant_labels_the_ladder_by_it(tmp_path):
    p = plot.draw(records(fx("transpose/transpose_f32.json")), str(tmp_path), ("ladder",), percent_of="copy")
    assert p.made and p.percent_of == "copy"
    assert plot.main(fx("transpose/transpose_f32.json") + ["-o", str(tmp_path / "o"), "--percent-of", "fft"]) == 2
