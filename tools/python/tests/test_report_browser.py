"""The pages in a real browser: Debian's headless Chromium (memlab_tools.browser, the DevTools protocol on a pipe) loads
each page from a file:// URL and the test reads the rendered page: the verdict's text, the number of GPU (node) rows, the
pictures drawn, no console error, no request for anything but the file itself; then a screenshot and the page printed
to PDF. Without chromium: skipped, except under CI (tools/setup.sh installs it), where that fails.

One test a page, each its own ctest (python_tools_report_browser_check, _labs, _fleet): a browser starts in about a
second."""
import os
import struct

import pytest

from memlab_tools import browser, fleet, fleet_page, fleet_sim, report

from conftest import FIXTURES, REPO

# The committed 4 x H100 check with a load on GPU 3, judged again by memlab check --replay as memlab.check/2
LOAD = os.path.join(REPO, "docs", "results", "h100x4", "check", "replayed", "load.json")


@pytest.fixture
def chromium():
    if browser.find() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing (Debian's chromium package; tools/setup.sh installs it)")
        pytest.skip("chromium is not installed")
    with browser.Browser(width=1400, height=900) as b:
        yield b


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def loaded_cleanly(b, page):
    loaded = b.load(str(page))
    assert loaded.errors == [], loaded.errors
    # the file itself and the pictures' own inline data (a rasterized scatter is a data: URL in its SVG), nothing else
    assert loaded.requests[0] == loaded.url and loaded.outside == [], loaded.requests
    return loaded


def shot_and_print(b, tmp_path, name, min_height=800):
    png = tmp_path / f"{name}.png"
    b.screenshot(str(png))
    w, h = png_size(png)
    assert w >= 1400 and h >= min_height and png.stat().st_size > 50_000
    pages = browser.pdf_pages(b.pdf(str(tmp_path / f"{name}.pdf")))
    assert 1 <= pages <= 12, pages
    keep = os.environ.get("MEMLAB_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        os.replace(png, os.path.join(keep, png.name))


def test_check_page_in_chromium(chromium, tmp_path):
    page = tmp_path / "check.html"
    assert report.main([LOAD, "-o", str(page)]) == 0
    loaded_cleanly(chromium, page)
    b = chromium
    assert b.evaluate("document.getElementById('verdict-text').textContent") == \
        "FAIL: GPU 3 failed; the node's all_reduce failed"
    assert b.evaluate("document.querySelectorAll('tr.gpu-row').length") == 4
    assert b.evaluate("[...document.querySelectorAll('tr.gpu-row')].map(r => r.dataset.verdict)") == \
        ["pass", "pass", "pass", "fail"]
    assert b.evaluate("document.querySelector('tr.gpu-row[data-gpu=\"3\"] td').innerText").startswith("GPU 3")
    assert "FAIL" in b.evaluate("document.querySelector('tr.gpu-row[data-gpu=\"3\"] td').innerText")
    # the verdict box is tinted red, and the band picture is drawn at the page's width
    assert b.evaluate("getComputedStyle(document.getElementById('verdict')).backgroundColor") == "rgb(246, 213, 209)"
    assert b.evaluate("document.querySelector('[data-figure=bands] svg').getBoundingClientRect().width") > 1000
    rows = b.evaluate("[...document.querySelectorAll('table.failing tbody tr')].map(r => [r.cells[0].innerText, "
                      "r.cells[6].innerText, r.cells[7].innerText])")
    assert [r[0] for r in rows].count("GPU 3") == 3 and len(rows) == 7  # 2 GPU rows and a sibling, 3 pairs, the node
    # GPU 3's rows with their fault codes and actions
    assert {tuple(r[1:]) for r in rows if r[0].startswith("GPU 3")} == {
        ("l2_latency", "drain"), ("hbm_latency", "drain"), ("nvlink_bandwidth", "drain"), ("pcie_bandwidth", "monitor")}
    assert "Fault codes: l2_latency, hbm_latency, nvlink_bandwidth, pcie_bandwidth" in \
        b.evaluate("document.getElementById('verdict').innerText")
    shot_and_print(b, tmp_path, "report_check_load")


def test_labs_page_in_chromium(chromium, tmp_path):
    page = tmp_path / "labs.html"
    assert report.main([os.path.join(FIXTURES, "copy", "copy_f16.json"),
                        os.path.join(FIXTURES, "transpose", "transpose_f32.json"), "-o", str(page)]) == 0
    loaded_cleanly(chromium, page)
    b = chromium
    assert b.evaluate("document.getElementById('verdict-text').textContent").startswith("copy, transpose: 2 ladders")
    widths = b.evaluate("[...document.querySelectorAll('.figure svg')].map(s => s.getBoundingClientRect().width)")
    assert len(widths) == 2 and min(widths) > 600
    assert b.evaluate("document.querySelectorAll('table.ladder tbody tr').length") > 10
    shot_and_print(b, tmp_path, "report_labs_copy_transpose")


def test_fleet_page_in_chromium(chromium, tmp_path):
    sim = fleet_sim.Fleet(fleet_sim.Committed(), seed=2026, nodes=16, weeks=4)
    f = fleet.judge(sim.checks())
    page = tmp_path / "fleet.html"
    page.write_text(fleet_page.page_of(f))
    loaded_cleanly(chromium, page)
    b = chromium
    want = sim.planted()
    assert b.evaluate("document.getElementById('verdict-text').textContent").startswith("OUTLIERS: 2 GPUs, 1 pair; "
                                                                                         "DRIFT: 1 GPU among")
    assert b.evaluate("document.querySelectorAll('tr.node-row').length") == 16
    assert b.evaluate("[...document.querySelectorAll('tr.node-row')].reduce((n, r) => n + +r.dataset.gpus, 0)") == \
        f.gpus
    assert b.evaluate("document.querySelectorAll('tr.finding-row').length") == \
        len(want["outliers"]) + len(want["drifts"])
    assert b.evaluate("document.querySelectorAll('.figure svg').length") == 2
    shot_and_print(b, tmp_path, "fleet_page", min_height=2000)
