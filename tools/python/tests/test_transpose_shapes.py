"""memlab-transpose-shapes summary and heatmap on a small synthetic sweep (made up here, not a measurement): the
CSV is read with its device line, the summary names each element size's worst cell, counts the cells below 0.5 and
0.8 and the unverified ones (failed or crashed), reports where the crossover's other path was faster; one picture
per element size is written; bad input is one line and exit 2. tools/gpu/measure_transpose_heatmap.sh with a stand-in
bench that crashes once: the crashed cell is recorded and the sweep resumes after it. (accept needs a GPU.)"""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO
from memlab_tools import transpose_shapes as ts

HEADER = ("# memlab::transpose against cudaMemcpyAsync of the same bytes, cold medians of 3 samples\n"
          "# device: NVIDIA H100 80GB HBM3 (132 SMs), L2 52428800 bytes\n"
          "elem_size,rows,cols,batch,bytes_moved,path,unit,transpose_ms,copy_ms,fraction,gbps,verified,alt_path,alt_ms,"
          "alt_fraction\n")


def sweep(tmp_path, rows):
    p = tmp_path / "shapes.csv"
    p.write_text(HEADER + "".join(rows) + "# 4 cases, 0 wrong, 0 cut by the 150 s budget, 0 skipped\n")
    return str(p)


ROWS = ["1,3,5,1000,30000,small_matrices,1,0.02,0.018,0.9000,1500.0,ok,,,\n",
        "1,40000003,3,1,240000018,few_cols,1,0.10,0.085,0.8500,2400.0,ok,realign_both,0.5,0.1700\n",
        "4,67,67,1000,35912000,realign_both,0,0.03,0.012,0.4000,1200.0,ok,small_matrices,0.014,0.8571\n",
        "4,3,40000003,1,960000072,few_rows,4,0.35,0.33,0.9428,2742.0,WRONG,,,\n"]


CRASHED = "8,131,131,245,,,,,,nan,,CRASH,,,\n"  # as tools/gpu/measure_transpose_heatmap.sh records a crash


def test_summary_names_the_worst_cells_and_counts(tmp_path):
    header, rows = ts.read_sweep(sweep(tmp_path, ROWS + [CRASHED]))
    assert header["device"].startswith("NVIDIA H100")
    assert len(rows) == 5 and rows[1]["alt_fraction"] == pytest.approx(0.17)
    text = ts.summarize(header, rows)
    assert "| 1-byte (u8) | 2 | 0.875 | 1 x 40000003 x 3: 0.850 | few_cols | 0 | 0 |" in text
    # The WRONG 4-byte cell is no measurement: the worst and the median come from the verified one alone.
    assert "| 4-byte (f32) | 1 | 0.400 | 1000 x 67 x 67: 0.400 | realign_both | 1 | 1 |" in text
    assert "| 4 B | realign_both | 1 | 0.400 | 1000 x 67 x 67: 0.400 | 1 | 1 |" in text
    assert "8-byte" not in text.split("By path")[0]  # its only cell crashed
    assert "Unverified cells (failed verification, or a CUDA error stopped the bench there): 2." in text
    assert "- 8-byte 245 x 131 x 131 (-): CRASH" in text and "(few_rows): WRONG" in text
    assert "in 1 it was > 3% faster" in text and "| small_matrices | 0.857 |" in text


def test_a_resumed_cell_keeps_its_last_row(tmp_path):
    again = "4,67,67,1000,35912000,realign_both,0,0.02,0.012,0.6000,1800.0,ok,,,\n"
    _, rows = ts.read_sweep(sweep(tmp_path, ROWS + [again]))
    assert len(rows) == 4
    assert [r["fraction"] for r in rows if (r["rows"], r["cols"]) == (67, 67)] == [0.6]


def test_heatmap_writes_one_picture_per_element_size_and_the_summary(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    assert ts.main(["heatmap", sweep(tmp_path, ROWS + [CRASHED]), "-o", str(out)]) == 0
    for name in ("u8", "f32", "f64"):  # f64: only a crashed cell, still drawn (black)
        assert os.path.getsize(out / f"transpose_heatmap_{name}.png") > 1000  # not blank (at conftest.TEST_DPI)
    assert not (out / "transpose_heatmap_f16.png").exists()
    assert "worst cell" in (out / "transpose_shapes.md").read_text()
    assert ts.main(["summary", sweep(tmp_path, ROWS), "-o", str(tmp_path / "s.md")]) == 0
    assert "worst cell" in (tmp_path / "s.md").read_text()


def test_heatmap_of_a_grid_labels_every_side_and_bands_at_half_and_eight_tenths():
    assert 0.5 in ts.BANDS and 0.8 in ts.BANDS and len(ts.BAND_COLOURS) == len(ts.BANDS) - 1
    # Below the bar (0.8) and above it never share a colour; below 0.5 has its own.
    under = ts.BAND_COLOURS[:ts.BANDS.index(0.8)]
    assert not set(under) & set(ts.BAND_COLOURS[ts.BANDS.index(0.8):])
    assert ts.BAND_COLOURS.count(ts.BAND_COLOURS[0]) == 1


FAKE_BENCH = textwrap.dedent("""\
    #!/usr/bin/env python3
    # Stands in for transpose_shapes_bench: without --resume it writes two cells and "crashes" in the third
    # (a CUDA error: exit 1, the progress file still naming the cell); with --resume it adds the rest.
    import sys
    a = sys.argv[1:]
    out, progress, resume = a[a.index("--out") + 1], a[a.index("--progress") + 1], "--resume" in a
    assert "--budget" in a and "--crossover" in a
    if not resume:
        with open(out, "w") as f:
            f.write("# device: Stand-in GPU (1 SMs), L2 1 bytes\\n"
                    "elem_size,rows,cols,batch,bytes_moved,path,unit,transpose_ms,copy_ms,fraction,gbps,verified,"
                    "alt_path,alt_ms,alt_fraction\\n"
                    "1,3,5,1000,30000,small_matrices,1,0.02,0.018,0.9000,1500.0,ok,,,\\n"
                    "2,3,5,1000,30000,small_matrices,2,0.02,0.019,0.9500,1500.0,ok,,,\\n")
        open(progress, "w").write("running 4 3 5 2237")
        sys.exit(1)
    with open(out) as f:
        assert "4,3,5,2237,,,,,,nan,,CRASH" in f.read()
    with open(out, "a") as f:
        f.write("8,3,5,1000,30000,small_matrices,8,0.02,0.017,0.8500,1500.0,ok,,,\\n# 1 cases\\n")
    open(progress, "w").write("done")
""")


def test_measure_script_records_a_crash_and_resumes_after_it(tmp_path):
    bench = tmp_path / "transpose_shapes_bench"
    bench.write_text(FAKE_BENCH.replace("#!/usr/bin/env python3", "#!" + sys.executable))
    bench.chmod(0o755)
    env = dict(os.environ, OUT=str(tmp_path / "out"), BIN=str(tmp_path), BUILD=str(tmp_path / "work"),
               SWEEP_BUDGET="60", GPU="0")
    r = subprocess.run(["bash", os.path.join(REPO, "tools", "gpu", "measure_transpose_heatmap.sh")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    heat = tmp_path / "out" / "heat"
    log = (heat / "log.txt").read_text()
    assert "CRASH at elem_size=4 rows=3 cols=5 batch=2237" in log and "sweep attempt 2: rc=0" in log
    _, rows = ts.read_sweep(str(heat / "shapes.csv"))
    assert sorted((r["elem_size"], r["verified"]) for r in rows) == [(1, "ok"), (2, "ok"), (4, "CRASH"), (8, "ok")]
    summary = (heat / "summary.md").read_text()
    assert "4-byte 2237 x 3 x 5 (-): CRASH" in summary
    assert sorted(os.listdir(heat)) == ["log.txt", "shapes.csv", "summary.md"]  # three files come back


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert ts.main(["heatmap", str(tmp_path / "missing.csv"), "-o", str(tmp_path)]) == 2
    empty = tmp_path / "empty.csv"
    empty.write_text("# nothing\n")
    assert ts.main(["heatmap", str(empty), "-o", str(tmp_path)]) == 2
    assert "no rows" in capsys.readouterr().err


def test_acceptance_cases_cover_the_issue():
    cases = ts.acceptance_cases()
    skinny = [c for c in cases if c[0] == 1]
    assert {(c[3], min(c[1], c[2])) for c in skinny} == {(es, a) for es in (1, 2, 4, 8) for a in (1, 2, 3, 4, 5, 7, 8)}
    assert all(c[1] * c[2] * c[3] >= 128 << 20 for c in skinny)  # >= 256 MiB moved
    assert len(skinny) == 4 * 7 * 2  # both ways round (1 x N and N x 1 are both copies)
    assert sorted({(c[1], c[2]) for c in cases if c[0] == 10**6}) == [(3, 3), (4, 4), (8, 8), (16, 16)]


def _accept_record(batch, vs_torch, word, pct=99.0, verified="ok"):
    mine_ms = 1.0
    return {"batch": batch, "rows": 1, "cols": 64, "elem_size": 1, "path": "copy", "bytes": 2 << 20,
            "pct_of_copy": pct, "torch": "torch out.copy_(x.t())", "vs_torch": vs_torch,
            "vs_torch_paired": {"diff_ms": 0.0004, "low_ms": -0.0003 if word == "SAME" else 0.0001, "high_ms": 0.0011,
                                "word": word},
            "candidates": {"memlab.transpose": {"verified": verified, "median_ms": mine_ms, "gbps": 2.1},
                           "torch out.copy_(x.t())": {"verified": "ok", "median_ms": mine_ms * vs_torch, "gbps": 2.0}}}


def test_torch_bar_counts_a_tie_only_where_the_paired_interval_holds_zero():
    assert ts.torch_bar(_accept_record(1, 1.02, "FASTER")) == (True, "")
    assert ts.torch_bar(_accept_record(1, 0.998, "SAME")) == (True, "same as torch")
    assert ts.torch_bar(_accept_record(1, 0.998, "SLOWER")) == (False, "")
    assert ts.torch_bar(_accept_record(10**6, 0.5, "SLOWER")) == (True, "")  # batches: torch shown, not judged


def test_accept_markdown_names_each_verdict():
    text = ts.accept_markdown({"device": "NVIDIA H100 80GB HBM3"}, [
        _accept_record(1, 0.998, "SAME"), _accept_record(1, 0.990, "SLOWER"),
        _accept_record(1, 1.5, "FASTER", pct=79.0),
        _accept_record(1, 1.5, "FASTER", verified="WRONG"),
        {"batch": 1, "rows": 3, "cols": 5, "elem_size": 8, "skipped": "budget"}])
    rows = [line for line in text.splitlines() if line.startswith("| 1 x ")]
    assert rows[0].endswith("| 0.998 (paired +0.4 us, [-0.3, +1.1]) | met (same as torch) |")
    assert rows[1].endswith("| 0.99 | MISSED |")
    assert rows[2].endswith("| 1.50 | MISSED |")  # under 80% of a copy
    assert rows[3].endswith("| MISSED (WRONG) |")
    assert "skipped (budget)" in rows[4]
    assert "NVIDIA H100 80GB HBM3" in text.splitlines()[0]
