"""plot_hierarchy on the committed H100 hierarchy runs: every picture is drawn without a warning and names the GPU,
the Little's-law line uses the DRAM latency of the data (not the L2's), the histograms hold every level, the roofline
and the bandwidth picture have one point per rung and size, from the case's latest machine session only (the stream
kernels changed between the two sessions of 2026-11-25), a grid smaller than the GPU is marked as such, the per-SM
map is each SM against the median, and the translation picture's series are the hops they say."""
import glob
import os
import statistics
import warnings

import pytest

from memlab_tools import plot_hierarchy as ph

from conftest import FIXTURES

RUNS = sorted(glob.glob(os.path.join(FIXTURES, "hierarchy", "hierarchy_*.json")))
PICTURES = ["hierarchy_latency_ws.png", "hierarchy_latency_histograms.png", "hierarchy_per_sm_map.png",
            "hierarchy_tlb.png", "hierarchy_bandwidth_ws.png", "hierarchy_loaded_latency.png",
            "hierarchy_littles_law.png", "hierarchy_roofline_add.png"]


@pytest.fixture(scope="module")
def runs():
    assert len(RUNS) >= 10
    return ph.load(RUNS)


# Each picture is encoded by one of two module fixtures (the shards, conftest.py, run each fixture's tests in a
# ctest of their own: the eight pictures in one took 12 s on CI's two cores), split about evenly in time.
FIRST = ["hierarchy_per_sm_map.png", "hierarchy_tlb.png", "hierarchy_loaded_latency.png", "hierarchy_roofline_add.png"]
SECOND = [p for p in PICTURES if p not in FIRST]


def _draw(runs, tmp_path_factory, encoded):
    """Every picture drawn from every committed run by one plot_hierarchy call, with the warnings raised, the notes
    and each figure's titles kept; only the pictures in `encoded` are laid out and written (the others are built,
    titled and closed, and their path returned as save would)."""
    records, device = runs
    out = tmp_path_factory.mktemp("hierarchy_pictures")
    notes, titles = [], {}
    save = ph.save

    def keep_titles(f, where, name, *args, **kw):
        texts = [f._suptitle.get_text() if f._suptitle else ""] + [ax.get_title() for ax in f.axes] + \
            [t.get_text() for t in f.texts]
        titles[name] = " ".join(texts)
        if name in encoded:
            return save(f, where, name, *args, **kw)
        ph.plt.close(f)
        return os.path.join(where, name)

    mp = pytest.MonkeyPatch()
    mp.setattr(ph, "save", keep_titles)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            made = ph.plot_hierarchy(records, str(out), device, notes)
    finally:
        mp.undo()
    return made, notes, titles, device, encoded


@pytest.fixture(scope="module")
def drawn_first(runs, tmp_path_factory):
    return _draw(runs, tmp_path_factory, FIRST)


@pytest.fixture(scope="module")
def drawn_second(runs, tmp_path_factory):
    return _draw(runs, tmp_path_factory, SECOND)


def _every_picture_from_every_committed_run(drawn):
    made, notes, _, _, encoded = drawn
    assert [os.path.basename(p) for p in made] == PICTURES
    written = [p for p in made if os.path.basename(p) in encoded]  # not blank (encoded at conftest.TEST_DPI):
    assert len(written) == len(encoded) and all(os.path.getsize(p) > 1000 for p in written)
    assert notes == []  # every histogram level is in the committed records


def _every_title_names_the_gpu(drawn):
    _, _, titles, device, _ = drawn
    assert sorted(titles) == sorted(PICTURES)
    for name, text in titles.items():
        assert device["name"] == "NVIDIA H100 80GB HBM3" and device["name"] in text, name
        # what a reader sees: no run stamps, sessions or flags (the bandwidth picture's footer printed all three)
        assert not any(w in text for w in ("UTC", "session", "--ilp", "--ctas")), (name, text)


def test_every_picture_from_every_committed_run_first(drawn_first):
    _every_picture_from_every_committed_run(drawn_first)


def test_every_picture_from_every_committed_run_second(drawn_second):
    _every_picture_from_every_committed_run(drawn_second)


def test_every_title_names_the_gpu_first(drawn_first):
    _every_title_names_the_gpu(drawn_first)


def test_every_title_names_the_gpu_second(drawn_second):
    _every_title_names_the_gpu(drawn_second)


def test_the_per_sm_map_sets_each_sm_against_the_median(runs):
    records, _ = runs
    rows = ph.per_sm_points(records)
    # The defaults' 32 KiB, 16 MiB and 256 MiB, the per-SM run's 8 MiB and 2 GiB: 132 SMs each.
    assert sorted(rows) == [32 << 10, 8 << 20, 16 << 20, 256 << 20, 2 << 30]
    assert all(len(sms) == 132 for sms in rows.values())
    eight = rows[8 << 20]
    med = statistics.median(eight.values())
    assert 270 < med < 290 and max(eight.values()) / med - 1 < 0.1  # a spread of a few percent, drawn as such


def test_the_translation_series_are_the_hops_they_name(runs):
    records, device = runs
    s = ph.translation_points(records, device)
    # DRAM hops: chase_l2 over chains whose lines are 8x the L2 or more. The line: 2^24 nodes (one per line at 2 GiB),
    # spaced out over 2-64 GiB (1024-32768 pages): only the pages change along it, at the DRAM plateau.
    assert sorted(s["dram"]) == [1 << k for k in range(10, 16)]
    assert all(660 < c < 720 for c, _, _ in s["dram"].values())
    assert s["dram"][1024][1] == 2  # the 2 GiB chain of the latency sweep is the same case: the median of both
    assert s["dram"][32768][2] == "hierarchy_tlb_dram_64GiB.json"
    # The other DRAM chains (one node per line, 512 MiB, 1 GiB, 4 GiB): points beside the line, not on it.
    assert sorted(s["dram_other"]) == [256, 512, 2048]
    assert all(660 < c < 720 for c, _, _ in s["dram_other"].values())
    # L2 hits: one node per 2 MiB page, 4-32768 pages (at most 4 MiB of lines), each hop an L2 hit.
    assert sorted(s["l2"]) == [1 << k for k in range(2, 16)]
    assert all(260 < c < 300 for c, _, _ in s["l2"].values())
    # The stride chase at one node per 2 MiB page (or per 4 MiB), past the L1: L2 hits on 2048 and 4096 pages;
    # fewer lines than the L1 keeps are L1 hits, not in any series.
    assert sorted(s["l2_address_order"]) == [2048, 4096]
    assert all(270 < c < 300 for c, _, _ in s["l2_address_order"].values())
    rise, a, b = ph.largest_rise(s["l2"])
    assert b == 2 * a and 0 < rise < 20


def test_the_littles_law_line_uses_the_dram_plateau_of_the_data(runs):
    records, device = runs
    m = ph.littles_law_model(records, device)
    lat = m["latency"]
    # The chase_l2 plateau at >= 1 GiB, read from the records: the median over every such record.
    dram = [r for r in records if r["variant"] == "chase_l2" and ph.bytes_of(r) >= ph.GIB and ph.stride_of(r) == 128]
    assert len(dram) == lat["records"] >= 3
    assert lat["ns"] == statistics.median(ph.measured(r, "ns_per_load") for r in dram)
    assert "hierarchy_latency_ws.json" in lat["files"]
    # Not the L2's latency (the first drawing used ~143 ns): the H100's DRAM is ~350 ns, 690 cycles.
    l2 = statistics.median(ph.measured(r, "ns_per_load") for r in records
                           if r["variant"] == "chase_l2" and ph.bytes_of(r) == 8 << 20)
    assert l2 < 200 < 330 < lat["ns"] < 370 and 660 < lat["cycles"] < 720
    # Little's law at that latency: 90% of 3352 GB/s x 350 ns / 132 SMs = 7.8 KiB per SM.
    assert m["law_bytes_per_sm"] == pytest.approx(0.9 * m["peak_gbps"] * lat["ns"] / m["sms"])
    assert 7 * 1024 < m["law_bytes_per_sm"] < 9 * 1024


def test_the_bytes_in_flight_for_90_percent_of_dram(runs):
    records, device = runs
    m = ph.littles_law_model(records, device)
    assert len(m["points"]) == 16  # ILP 1, 2, 4, 8 x CTAs per SM 1, 2, 4, 8: one point each
    assert m["earlier"] == set() and m["earlier_note"] is None  # every point of today's stream kernels
    b, gbps, (ilp, ctas) = m["first_reached"]
    assert b == 32 * 1024 and gbps >= m["target_gbps"] and (ilp, ctas) == (1, 4)
    assert all(g < m["target_gbps"] for bb, g, _ in m["points"].values() if bb < b)


def test_the_histograms_hold_shared_memory_and_l1(runs):
    records, _ = runs
    levels = {lv["variant"] + "@" + str(lv["bytes"]): lv for lv in ph.histogram_levels(records)}
    assert all("buckets" in lv for lv in levels.values())
    shared, l1 = levels["chase_shared@32768"], levels["chase_l1@32768"]
    # One 16-cycle bucket each: the first drawing stepped over a single point and showed nothing.
    assert list(shared["buckets"]) == [(16, 32)] and list(l1["buckets"]) == [(32, 48)]
    assert shared["loads"] == 512 * shared["records"] and 20 < shared["mean_cycles"] < 26
    assert 30 < l1["mean_cycles"] < 34
    hbm = levels[f"chase_l2@{ph.GIB}"]
    assert len(hbm["buckets"]) > 20 and 650 < hbm["mean_cycles"] < 720


def test_a_missing_level_names_the_command_that_measures_it(runs, tmp_path):
    records, device = runs
    without_shared = [r for r in records if r["variant"] != "chase_shared"]
    notes = []
    path = ph.histograms(without_shared, str(tmp_path), notes)
    assert path and os.path.exists(path)
    (note,) = notes
    assert "shared memory" in note and "memlab run hierarchy --variant chase_shared --sizes 32KiB --steps 4096" in note


def test_the_roofline_has_one_point_per_rung_and_size(runs):
    records, _ = runs
    pts = ph.roofline_points(records)
    keys = [(p["variant"], p["bytes"]) for p in pts]
    assert len(keys) == len(set(keys))
    assert ("add", ph.GIB) in keys and ("triad", ph.GIB) in keys
    # add over 1 GiB arrays was measured three times: the check of the streams and the BabelStream run of one
    # session, and the bandwidth sweep of a later one. One point: the latest session's.
    add = next(p for p in pts if (p["variant"], p["bytes"]) == ("add", ph.GIB))
    assert add["records"] == 1 and add["ai"] == pytest.approx(1 / 12)
    assert add["files"] == "hierarchy_bandwidth_ws.json" and not add["earlier"]
    assert 200 < add["gflops"] < 3352.32 / 12  # under the H100's roof at 1 FLOP per 12 bytes


def test_the_bandwidth_picture_greys_a_grid_smaller_than_the_gpu(runs):
    records, device = runs
    pts = ph.bandwidth_points(records, device)
    assert pts["dot"][64 << 10]["sms_busy"] == 4 and not pts["dot"][64 << 10]["full"]
    assert not pts["dot"][1 << 20]["full"] and pts["dot"][4 << 20]["full"] and pts["dot"][ph.GIB]["full"]
    # dot over 4 MiB arrays is in three files: an earlier session's L1/shared run (before the whole-tile kernels),
    # and the sweep and the L1/shared sweep of the latest session. One point, of the latest session's two: not a
    # median with the earlier kernel (89 B/clk/SM against 120).
    dot4 = pts["dot"][4 << 20]
    assert dot4["records"] == 2 and dot4["files"] == "hierarchy_bandwidth_ws.json, hierarchy_l1bw.json"
    assert not dot4["earlier"] and 118 < dot4["b_per_clk_sm"] < 128
    for v in ("dot", "smem_dot"):  # 8448 KiB: 64 KiB per array and SM, every SM the same whole tiles
        assert 120 < pts[v][8448 << 10]["b_per_clk_sm"] < 128
    # 64 MiB and 1 GiB come from the latest session (dot over 1 GiB at these settings is in its Little's-law sweep
    # too): none of them "earlier".
    assert pts["dot"][64 << 20]["files"] == "hierarchy_bandwidth_ws.json" and not pts["dot"][64 << 20]["earlier"]
    assert pts["dot"][ph.GIB]["files"] == "hierarchy_bandwidth_ws.json, hierarchy_littles_law.json"
    assert not any(pts[v][ph.GIB]["earlier"] for v in ("write", "copy", "mul", "add", "triad"))


def test_a_case_takes_its_latest_session_only():
    def rec(created, gbps, f):
        return {"lab": "hierarchy", "variant": "dot", "params": {"n": 1 << 20}, "gbps": gbps,
                "_created": created, "_file": f}
    old = [rec("2026-11-25T14:36:00Z", 1.0, "a.json"), rec("2026-11-25T15:01:00Z", 2.0, "b.json")]
    new = [rec("2026-11-25T16:03:58Z", 3.0, "c.json"), rec("2026-11-25T16:06:52Z", 4.0, "d.json")]
    assert ph.latest_session(old + new) == new  # 16:06 is 65 minutes after 15:01: another session
    assert ph.latest_session(old) == old  # 25 minutes apart: one session (a machine is held at most 30)
    assert ph.latest_session(old[:1] + new) == new
    undated = [dict(r, _created="") for r in old]
    assert ph.latest_session(undated) == undated  # no times: one session, as before


def test_the_loaded_latency_leaves_out_chains_the_l2_holds(runs):
    records, device = runs
    small = [r for r in records if r["variant"] == "loaded_chase" and ph.bytes_of(r) <= device["l2_bytes"]]
    assert small  # the defaults' 32 KiB and 16 MiB chains: an L2 latency (143 ns), not a DRAM latency under load
    curves = ph.loaded_points(records, device)
    assert sorted(curves) == [256 << 20, ph.GIB]
    assert len(curves[ph.GIB]) == 11 and all(ns > 300 for _, ns, _ in curves[ph.GIB])


def test_the_bandwidth_picture_draws_every_sm_streaming_with_todays_kernels_only(runs):
    records, device = runs
    drawn = ph.drawn_bandwidth_points(records, device)
    assert all(p["full"] and not p["earlier"] for pts in drawn.values() for p in pts.values())
    assert 64 << 10 not in drawn["dot"] and 1 << 20 not in drawn["dot"]  # grids of a part of the GPU
    assert {4 << 20, 16 << 20, 64 << 20, ph.GIB} <= set(drawn["dot"])
