"""memlab-report on lab results: each lab's ladder (memlab-plot's picture, inline SVG) with its roofs and peers and its
table; with --baseline, memlab-compare's verdicts beside them."""
import os
import re

from memlab_tools import report

from conftest import DATA, FIXTURES, exit_code
from test_report import assert_self_contained


def _page(tmp_path, *args):
    out = tmp_path / "page.html"
    assert exit_code(report.main, [*args, "-o", str(out)]) == 0
    return out.read_text()


def test_lab_results_show_each_ladder_with_its_roofs_and_peers(tmp_path):
    text = _page(tmp_path, os.path.join(FIXTURES, "copy", "copy_f16.json"),
                 os.path.join(FIXTURES, "transpose", "transpose_f32.json"))
    assert_self_contained(text)
    assert text.count("<svg") == 2
    assert re.findall(r'<h2 data-lab="(\w+)">', text) == ["copy", "transpose"]
    assert text.count("DRAM theoretical 3352 GB/s") >= 2 and "measured ceiling" in text
    ladders = re.findall(r'<table class="ladder">(.*?)</table>', text, re.S)
    assert len(ladders) == 2
    for variant in ("scalar", "vec16", "memcpy", "cub"):
        assert f"<code>{variant}</code>" in ladders[0]
    assert "<code>cublas</code>" in ladders[1] and "<code>smem_padded</code>" in ladders[1]
    assert ">peer<" in ladders[0] and ">rung<" in ladders[1]


def test_a_baseline_adds_memlab_compares_verdicts(tmp_path):
    text = _page(tmp_path, os.path.join(DATA, "copy_f16_run_b.json"), "--baseline",
                 os.path.join(DATA, "copy_f16_run_a.json"))
    summary = re.search(r'<p id="compare-summary">(.*?)</p>', text).group(1)
    assert re.match(r"\d+ cases in both runs: \d+ same, \d+ faster, \d+ slower", summary)
    assert '<table class="compare">' in text
