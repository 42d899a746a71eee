"""memlab-report on a check: the page of the committed 4 x H100 check with a load on GPU 3 (memlab.check/1), of the
memlab.check/2 fields; one line and exit 2 for every bad input. The page is self-contained: no script, nothing fetched.
(test_report_labs.py: lab results; test_report_browser.py opens the pages in Chromium.)"""
import copy
import json
import os
import re

import pytest

from memlab_tools import checkfile, report

from conftest import FIXTURES, REPO, exit_code

CHECKS = os.path.join(REPO, "docs", "results", "h100x4", "check")
LOAD = os.path.join(CHECKS, "load.json")


@pytest.fixture
def no_picture(monkeypatch):
    """The band picture left out (memlab-plot-check's figure costs 2.5 s of CPU a page; the load page draws it)."""
    monkeypatch.setattr(report, "bands", lambda c: "")


def _page(tmp_path, *args):
    out = tmp_path / "page.html"
    assert exit_code(report.main, [*args, "-o", str(out)]) == 0
    return out.read_text()


def assert_self_contained(text):
    """No script, no stylesheet or picture from elsewhere: only inline SVG and the page's own style."""
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", text), "a reference out of the page"
    assert "@import" not in text and "url(http" not in text
    assert "default-src 'none'" in text


@pytest.fixture(scope="module")
def load_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("load") / "load.html"
    assert report.main([LOAD, "-o", str(out)]) == 0
    return out.read_text()


def test_the_check_with_a_load_on_gpu3_fails_gpu3_in_words_first(load_page):
    head = re.search(r'<h1 id="verdict-text">(.*?)</h1>', load_page).group(1)
    assert head == "FAIL: GPU 3 failed; the node&#x27;s all_reduce failed"
    assert load_page.index("verdict-text") < load_page.index("<table")
    assert "GPUs 0, 1 and 2 passed every row of their own." in load_page
    assert "GPU 3: fail on l2_latency 160.5 ns against 141.2; hbm_latency 940.0 ns against 345.5" in load_page


def test_the_grid_has_a_row_a_gpu_coloured_by_its_worst_verdict(load_page):
    rows = re.findall(r'<tr class="gpu-row" data-gpu="(\d)" data-verdict="(\w+)">', load_page)
    assert rows == [("0", "pass"), ("1", "pass"), ("2", "pass"), ("3", "fail")]
    # the pairs as a matrix: GPU 3's copies into 0, 1 and 2 failed, the other nine passed
    pairs = load_page[load_page.index("<table class=\"grid pairs\">"):]
    pairs = pairs[:pairs.index("</table>")]
    assert pairs.count('class="v-fail"') == 3 and pairs.count('class="v-pass"') == 9


def test_failing_rows_carry_the_command_that_measures_them_again(load_page):
    failing = load_page[load_page.index('id="failing-rows"'):]
    failing = failing[:failing.index("</table>")]
    assert failing.count("<tr>") == 1 + 7  # header, 6 fail and 1 sibling
    assert "memlab run hierarchy --variant chase_l2 --dtype f32 --sizes 2^20 --device 3" in failing
    assert "memlab run transfer --variant peer_ce --dtype u8 --sizes 256MiB --peer 0 --device 3" in failing
    assert "--gpus 4 --placement out_of_place" in failing and "$" not in failing
    # a memlab.check/1 file records no fault code: the page says so, it does not make one up
    assert "not recorded (memlab.check/1)" in failing


def test_v1_says_what_it_does_not_record(load_page):
    note = re.search(r'<p class="note" id="missing">(.*?)</p>', load_page).group(1)
    assert "GPU serials" in note and "fault codes and actions" in note


def test_the_page_is_self_contained_with_the_band_picture_inline(load_page):
    assert_self_contained(load_page)
    assert load_page.count("<svg") == 1 and 'data-figure="bands"' in load_page
    ids = re.findall(r'\bid="([^"]+)"', load_page)
    assert len(ids) == len(set(ids)), "an id twice on the page"


def test_the_replayed_load_names_fault_codes_and_actions(tmp_path, no_picture):
    text = _page(tmp_path, os.path.join(CHECKS, "replayed", "load.json"))
    assert "Action: drain" in text and 'id="replay"' in text
    failing = text[text.index('id="failing-rows"'):]
    failing = failing[:failing.index("</table>")]
    for code in ("l2_latency", "hbm_latency", "nvlink_bandwidth", "collective_bandwidth", "pcie_bandwidth"):
        assert f"<code>{code}</code>" in failing
    assert failing.count("--device") == 7 and "--device 3 --device" not in failing  # commands kept whole


def test_every_committed_check_file_reads(tmp_path):
    import glob

    files = glob.glob(os.path.join(REPO, "docs", "results", "*", "check", "**", "*.json"), recursive=True)
    checks = [checkfile.load(f) for f in files if "reference" not in os.path.basename(f)]
    assert {c.version for c in checks} == {1, 2} and len(checks) >= 9


def test_a_passing_check_says_pass(tmp_path, no_picture):
    text = _page(tmp_path, os.path.join(CHECKS, "run1.json"))
    assert '<h1 id="verdict-text">PASS: every GPU' in text
    assert len(re.findall(r'class="gpu-row"', text)) == 4
    one = _page(tmp_path, os.path.join(REPO, "docs", "results", "h100", "check", "run1.json"))
    assert len(re.findall(r'class="gpu-row"', one)) == 1 and "PASS" in one


def _v2(doc):
    """The load run as memlab.check/2 would hold it: identities, fault codes and actions, a process on GPU 3."""
    d = copy.deepcopy(doc)
    d["schema"] = "memlab.check/2"
    d.update(interrupted=False, interrupted_by=None, busy=True, action="rerun")
    for g in d["gpus"]:
        g.update(serial=f"165200000000{g['ordinal']}", uuid=f"GPU-0000-{g['ordinal']}", driver="580.95.05",
                 runtime_version=13000, busy=g["ordinal"] == 3,
                 processes=[{"pid": 4242, "name": "python3", "used_mib": 2048.0, "seen": "during"}]
                 if g["ordinal"] == 3 else [])
    for r in d["rows"]:
        flagged = r["verdict"] not in ("pass", "skip")
        if flagged and r["gpu"] == 3:
            r.update(verdict="busy", fault="gpu_busy", action="rerun", points_at="another process (pid 4242 python3)",
                     reason=f"GPU 3 {r['metric']} busy: run the check again when the GPU is idle")
        elif flagged:
            r.update(fault="nvlink_slow", action="drain", points_at=r["level"], reason=f"node {r['metric']} slow")
        else:
            r.update(fault=None, action=None, points_at=None, reason=None)
    return d


def test_v2_fields_are_shown_fault_codes_actions_processes(tmp_path, no_picture):
    with open(LOAD) as f:
        doc = _v2(json.load(f))
    src = tmp_path / "v2.json"
    src.write_text(json.dumps(doc))
    c = checkfile.load(str(src))
    assert c.version == 2 and c.missing == [] and c.gpu(3).processes[0]["pid"] == 4242
    text = _page(tmp_path, str(src))
    assert "Action: rerun" in text and "pid 4242 python3 holding 2048 MiB, during the check" in text
    assert "<code>gpu_busy</code>" in text and "<code>nvlink_slow</code>" in text
    assert "1652000000003" in text and 'id="missing"' not in text
    doc["interrupted"], doc["interrupted_by"] = True, "SIGTERM"
    src.write_text(json.dumps(doc))
    assert '<h1 id="verdict-text">INTERRUPTED' in _page(tmp_path, str(src))


@pytest.mark.parametrize("content,message", [
    (b"", "empty, not a memlab check file"),
    (b'{"schema": "memlab.check/1", "rows": [', "truncated: its JSON ends after"),
    (b'{"schema": "nvbench/1"}', "neither a memlab check file nor a memlab results file (schema 'nvbench/1')"),
    (b'{"schema": "memlab.check/9", "rows": [], "gpus": []}', "schema memlab.check/9 is newer than this reader"),
    (b'{"schema": "memlab.check/1", "created": "2026-11-27T10:00:00Z", "gpus": [], "rows": [{"metric": 3}]}',
     "rows[0]: 'metric' is 3, not text"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    src = tmp_path / "bad.json"
    src.write_bytes(content)
    assert exit_code(report.main, [str(src), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith(f"memlab-report: {src}")
    assert not (tmp_path / "x.html").exists()


def test_mixed_or_missing_inputs_are_one_line_and_exit_2(tmp_path, capsys):
    out = str(tmp_path / "x.html")
    cases = [([LOAD, os.path.join(FIXTURES, "copy", "copy_f16.json")], "one check file a page"),
             ([LOAD, "--baseline", os.path.join(FIXTURES, "copy", "copy_f16.json")], "--baseline: compares lab"),
             ([str(tmp_path / "none.json")], "no such file"),
             ([LOAD, "--bogus"], "unrecognized arguments")]
    for args, message in cases:
        assert exit_code(report.main, [*args, "-o", out]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert exit_code(report.main, [LOAD, "-o", str(tmp_path / "no" / "dir" / "x.html")]) == 2
    assert "cannot write there" in capsys.readouterr().err
