"""memlab-transpose-shapes heatmap on a small synthetic sweep: the CSV is read with its device line, the summary
names each element size's worst cell, counts the cells below 0.5 and 0.8 and the unverified ones, reports where the
crossover's other path was faster; the picture is written; bad input is one line and exit 2. (accept needs a GPU.)"""
import os

import pytest

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


def test_summary_names_the_worst_cells_and_counts(tmp_path):
    header, rows = ts.read_sweep(sweep(tmp_path, ROWS))
    assert header["device"].startswith("NVIDIA H100")
    assert len(rows) == 4 and rows[1]["alt_fraction"] == pytest.approx(0.17)
    text = ts.summarize(header, rows)
    assert "| 1-byte (u8) | 2 | 0.875 | 1 x 40000003 x 3: 0.850 | few_cols | 0 | 0 |" in text
    assert "| 4-byte (f32) | 2 | 0.671 | 1000 x 67 x 67: 0.400 | realign_both | 1 | 1 |" in text
    assert "Unverified cells: 1." in text
    assert "in 1 it was > 3% faster" in text and "| small_matrices | 0.857 |" in text


def test_heatmap_writes_the_picture_and_summary(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    assert ts.main(["heatmap", sweep(tmp_path, ROWS), "-o", str(out)]) == 0
    assert os.path.getsize(out / "transpose_shapes.png") > 10_000
    assert "worst cell" in (out / "transpose_shapes.md").read_text()


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
