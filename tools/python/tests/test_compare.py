"""memlab-compare's verdicts on crafted pairs: same, faster, slower, and slower-but-noisy."""
import json
import math
import os

import pytest

from memlab_tools import compare

from conftest import BAD_FILES, DATA, FIXTURES, bad_file, exit_code


def _summary(median, spread):
    return {"median_ms": median, "min_ms": median, "max_ms": median, "p25_ms": median * (1 - spread / 2),
            "p75_ms": median * (1 + spread / 2), "samples": 50, "rel_spread": spread, "mean_ms": median}


def _doc(cases):
    results = [{"lab": "copy", "variant": v, "params": {"dtype": "f16", "n": n}, "policy": {}, "bytes": 2 * n,
                "flops": 0, "cold": _summary(ms, spread), "batch": _summary(ms, spread), "gbps": 0.0, "pct_peak": 0.0,
                "l2_resident": False, "verified": True, "status": "ok"} for v, n, ms, spread in cases]
    return {"schema": "memlab.results/1", "memlab_version": "t", "git_sha": "t", "created": "t",
            "device": {"name": "GPU"}, "results": results}


def _write(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize("b_ms, spread, verdict, fails", [
    (1.004, 0.01, "SAME", False),    # within the noise: sqrt(2) x 1%
    (0.90, 0.01, "FASTER", False),
    (1.10, 0.01, "SLOWER", True),    # 10% slower, noise 1.5%, threshold 5%
    (1.03, 0.01, "SLOWER", False),   # slower beyond the noise, within the threshold
    (1.10, 0.20, "SAME", False),     # 10% slower but the runs are 20% noisy
])
def test_verdicts(b_ms, spread, verdict, fails):
    ratio, noise, v, f = compare.judge(_summary(1.0, spread), _summary(b_ms, spread), 0.05)
    assert v == verdict and f == fails
    assert ratio == pytest.approx(b_ms)
    assert noise == pytest.approx(math.hypot(spread, spread * b_ms))


def test_both_runs_spreads_count():
    # A quiet run (0.1%) against a noisy one (4%): 3% slower is within the noisy run's spread.
    _, noise, verdict, _ = compare.judge(_summary(1.0, 0.001), _summary(1.03, 0.04), 0.02)
    assert verdict == "SAME" and noise == pytest.approx(math.hypot(0.001, 0.04 * 1.03))
    _, _, verdict, _ = compare.judge(_summary(1.03, 0.04), _summary(1.0, 0.001), 0.02)
    assert verdict == "SAME"


def test_the_event_timers_resolution_is_the_least_noise():
    # Launch-bound: 3.8 us against 4.0 us, both distributions a few 32 ns ticks wide (IQR 0 here). The
    # difference, 0.2 us, is under the 0.5 us CUDA documents for its events: the same.
    ratio, noise, verdict, fails = compare.judge(_summary(0.0038, 0.0), _summary(0.0040, 0.0), 0.05)
    assert verdict == "SAME" and not fails and ratio == pytest.approx(1.0526, abs=1e-4)
    assert noise == pytest.approx(compare.FLOOR_MS / 0.0038) and compare.FLOOR_MS == pytest.approx(0.5e-3)
    # 0.7 us slower is beyond the floor: 18% of 3.8 us, a regression.
    assert compare.judge(_summary(0.0038, 0.0), _summary(0.0045, 0.0), 0.05)[2:] == ("SLOWER", True)


def test_exit_status_and_table(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("vec16", 1024, 1.0, 0.01), ("auto", 1024, 1.0, 0.01), ("cub", 1024, 1.0, 0.01)]))
    b = _write(tmp_path, "b.json", _doc([("vec16", 1024, 1.0, 0.01), ("auto", 1024, 1.2, 0.01), ("memcpy", 1024, 1.0, 0.01)]))
    assert compare.main([a, b]) == 1
    out = capsys.readouterr().out
    assert "| copy | auto | dtype=f16 n=1024 | 1 | 1.2 | 1.200 | 1.6% | SLOWER (beyond threshold) |" in out
    assert "1 case(s) only in A: copy cub" in out and "1 case(s) only in B: copy memcpy" in out
    assert compare.main([a, b, "--threshold", "25"]) == 0
    assert compare.main([a, a]) == 0


def test_refuses_what_is_not_a_results_file(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert compare.main([str(bad), str(bad)]) == 2
    assert "not a memlab.results/1 file" in capsys.readouterr().err


def test_two_committed_runs_of_the_same_binary():
    a = os.path.join(DATA, "copy_f16_run_a.json")
    b = os.path.join(DATA, "copy_f16_run_b.json")
    o = compare.compare(compare.records([a]), compare.records([b]))
    assert len(o.verdicts) == 160 and not o.only_a and not o.only_b and not o.unmeasured
    big = [v for v in o.verdicts if dict(v.key[2])["n"] >= 1 << 24]
    assert all(abs(v.ratio - 1) < 0.01 for v in big)


def test_pairs_hold_one_variant_against_others(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("auto", 1024, 1.0, 0.01), ("auto", 2048, 2.0, 0.01), ("vec16", 1024, 5.0, 0.01)]))
    peers = _doc([("torch_copy", 1024, 1.0, 0.01), ("triton_copy", 1024, 0.8, 0.01), ("torch_copy", 2048, 2.5, 0.01)])
    peers["results"][1]["params"]["block"] = 1024  # a peer's own parameter does not stop the match
    b = _write(tmp_path, "b.json", peers)
    o = compare.compare(compare.records([a]), compare.records([b]), pairs=[("auto", "*")])
    got = {(v.key[1], dict(v.key[2])["n"]): v.verdict for v in o.verdicts}
    assert got == {("auto vs torch_copy", 1024): "SAME", ("auto vs triton_copy", 1024): "FASTER",
                   ("auto vs torch_copy", 2048): "SLOWER"}
    assert not o.only_a  # vec16 was not asked for
    assert compare.main([a, b, "--pair", "auto:*"]) == 1  # torch_copy 25% slower than auto at 2048
    assert "| copy | auto vs triton_copy | block=1024 dtype=f16 n=1024 |" in capsys.readouterr().out
    # The guard the docs use: the peers as the baseline, auto judged; it fails where auto is slower.
    assert compare.main([b, a, "--pair", "*:auto"]) == 1  # triton_copy at 1024: auto 25% slower
    assert "| copy | triton_copy vs auto | block=1024 dtype=f16 n=1024 |" in capsys.readouterr().out
    assert compare.main([a, b, "--pair", "auto"]) == 2
    assert "--pair: 'auto' is not A_VARIANT:B_VARIANT" in capsys.readouterr().err


# ---- the committed launch-bound pair ------------------------------------------------------------------------

RUN1 = os.path.join(DATA, "copy_f16_earlier_run.json")
RUN0 = os.path.join(FIXTURES, "copy", "copy_f16.json")


def test_two_committed_runs_of_unchanged_kernels_are_the_same(capsys):
    # Two runs of one binary: the launch-bound cases (2^13..2^18, ~4 us) differ by up to 0.26 us, a
    # few event ticks; with one run's spread alone six of them were "slower beyond the threshold".
    assert compare.main([RUN1, RUN0]) == 0
    out = capsys.readouterr().out
    assert "(0 beyond the 5% threshold)" in out and "at least 0.5 us" in out
    o = compare.compare(compare.records([RUN1]), compare.records([RUN0]))
    small = [v for v in o.verdicts if v.a_ms < 0.01]
    assert len(small) > 40 and all(v.verdict == "SAME" for v in small)
    assert all(not v.fails for v in o.verdicts)


def test_min_time_leaves_launch_bound_cases_out(capsys):
    assert compare.main([RUN1, RUN0, "--min-time", "20us"]) == 0
    out = capsys.readouterr().out
    o = compare.compare(compare.records([RUN1]), compare.records([RUN0]), min_ms=0.02)
    assert all(min(v.a_ms, v.b_ms) >= 0.02 for v in o.verdicts) and len(o.short) == 140 - len(o.verdicts)
    assert f"{len(o.short)} case(s) left out by --min-time (under 20 us in A or B)" in out
    assert compare.parse_time_ms("0.05ms", "--min-time") == pytest.approx(0.05)
    assert compare.parse_time_ms("2e-5", "--min-time") == pytest.approx(0.02)


# ---- bad input: exit 2, one line naming the file and what is wrong ------------------------------------------

@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("side", ["a", "b"])
def test_every_bad_file_is_one_line_and_exit_2(tmp_path, capsys, kind, side):
    good = _write(tmp_path, "good.json", _doc([("vec16", 1024, 1.0, 0.01)]))
    bad = bad_file(tmp_path, kind)
    argv = [bad, good] if side == "a" else [good, bad]
    assert compare.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"memlab-compare: {bad}: ") and BAD_FILES[kind][1] in err, err


def test_a_zero_median_is_listed_not_compared(tmp_path, capsys):
    doc = _doc([("vec16", 1024, 1.0, 0.01), ("auto", 1024, 1.0, 0.01)])
    a = _write(tmp_path, "a.json", doc)
    doc["results"][1]["cold"]["median_ms"] = 0.0
    b = _write(tmp_path, "b.json", doc)
    assert compare.main([a, b]) == 0
    out = capsys.readouterr().out
    assert "1 cases compared" in out and "1 case(s) of B not timed (cold), so not compared: copy auto" in out
    assert "(a cold median of zero)" in out


def test_files_of_different_labs_say_so_in_one_line(capsys):
    assert compare.main([RUN0, os.path.join(FIXTURES, "stride", "stride_f32.json")]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err.count("\n") == 1
    assert "holds copy and" in captured.err and "holds stride: no lab in common" in captured.err


def test_files_that_share_no_case_say_so_in_one_line(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("vec16", 1024, 1.0, 0.01)]))
    b = _write(tmp_path, "b.json", _doc([("vec16", 2048, 1.0, 0.01)]))
    assert compare.main([a, b]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err.count("\n") == 1 and "share no case" in captured.err


@pytest.mark.parametrize("where", ["missing_folder", "a_folder", "read_only_folder"])
def test_an_out_that_cannot_be_written_is_exit_2(tmp_path, capsys, where):
    a = _write(tmp_path, "a.json", _doc([("vec16", 1024, 1.0, 0.01)]))
    if where == "missing_folder":
        out = str(tmp_path / "no" / "such" / "t.md")
    elif where == "a_folder":
        out = str(tmp_path)
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        if os.access(str(ro), os.W_OK):
            pytest.skip("running as a user who writes anywhere (root)")
        out = str(ro / "t.md")
    assert compare.main([a, a, "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"memlab-compare: --out {out}: cannot be written")


def test_the_out_file_holds_the_table(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("vec16", 1024, 1.0, 0.01)]))
    assert compare.main([a, a, "--out", str(tmp_path / "t.md")]) == 0
    assert (tmp_path / "t.md").read_text() == capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["--threshold", "-1"], "--threshold: a percentage >= 0"),
    (["--threshold", "nan"], "--threshold: a percentage >= 0"),
    (["--min-time", "fast"], "--min-time: 'fast' is not a time"),
    (["--metric", "warm"], "--metric: invalid choice"),
    (["--pair", "auto"], "--pair: 'auto' is not A_VARIANT:B_VARIANT"),
])
def test_bad_flags_are_one_line_and_exit_2(argv, needle, capsys):
    assert exit_code(compare.main, [RUN0, RUN0] + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


# ---- --race: memlab's own library against the best of each other library, one process -------------------------

def _peer(variant, library, n, ms, spread=0.01, lab="copy", **params):
    r = {"lab": lab, "variant": variant, "params": {"dtype": "f16", "n": n, "src_offset": 0, "dst_offset": 0, **params},
         "policy": {}, "bytes": 4 * n, "flops": 0, "cold": _summary(ms, spread), "batch": _summary(ms, spread),
         "gbps": 0.0, "pct_peak": 0.0, "l2_resident": False, "verified": True, "status": "ok", "peer": True}
    if library:
        r["library"] = library
    return r


def _peers_doc(results):
    return {"schema": "memlab.results/1", "memlab_version": "t", "git_sha": "t", "created": "t",
            "device": {"name": "GPU"}, "results": results}


def _same_process(tmp_path):
    n1, n2 = 1 << 20, 1 << 24
    return _write(tmp_path, "peers.json", _peers_doc([
        _peer("torch_copy_", "torch 2.11.0", n1, 0.0060), _peer("torch_clone", "torch 2.11.0", n1, 0.0058),
        _peer("triton_copy", "triton 3.6.0", n1, 0.0061, block=1024),
        _peer("triton_copy", "triton 3.6.0", n1, 0.0057, block=4096),
        _peer("memlab_copy_", "memlab 0.1.0", n1, 0.0058),
        _peer("torch_copy_", "torch 2.11.0", n2, 0.0300), _peer("torch_clone", "torch 2.11.0", n2, 0.0301),
        _peer("triton_copy", "triton 3.6.0", n2, 0.0250, block=1024),
        _peer("memlab_copy_", "memlab 0.1.0", n2, 0.0270),
    ]))


def test_race_holds_memlab_against_the_fastest_of_each_library(tmp_path):
    recs = compare.records([_same_process(tmp_path)])
    rc = compare.race(recs)
    assert rc.libraries == {"copy": ["torch", "triton"]}
    small, big = rc.rows
    assert small.contender.variant == "memlab_copy_" and small.contender.params["n"] == 1 << 20
    # The best of torch_copy_ and torch_clone; the best Triton block.
    assert small.entries["torch"].record.variant == "torch_clone"
    assert small.entries["triton"].record.params["block"] == 4096
    assert small.entries["torch"].verdict.verdict == "SAME"          # 5.8 us each
    assert small.entries["triton"].verdict.verdict == "SAME"         # 0.1 us apart: under the 0.5 us floor
    assert big.entries["torch"].verdict.verdict == "FASTER"          # 27 us against 30
    assert big.entries["triton"].verdict.verdict == "SLOWER" and big.entries["triton"].verdict.fails  # 8% behind
    assert not any(e.other_process for row in rc.rows for e in row.entries.values())
    assert not rc.unmeasured and not rc.alone


def test_race_rows_group_the_offsets_sizes_in_run_order(tmp_path):
    rs = [_peer(v, lib, n, 0.01, src_offset=so) for n in (1 << 16, 1 << 17) for so in (0, 10, 2)
          for v, lib in (("torch_copy_", "torch 2.11.0"), ("memlab_copy_", "memlab 0.1.0"))]
    rc = compare.race(compare.records([_write(tmp_path, "p.json", _peers_doc(rs))]))
    assert [(r.contender.params["src_offset"], r.contender.params["n"]) for r in rc.rows] == [
        (0, 1 << 16), (0, 1 << 17), (2, 1 << 16), (2, 1 << 17), (10, 1 << 16), (10, 1 << 17)]


def test_race_table_and_exit_status(tmp_path, capsys):
    path = _same_process(tmp_path)
    assert compare.main([path, "--race"]) == 1  # Triton 8% ahead at 2^24
    out = capsys.readouterr().out
    assert "copy: memlab_copy_ (memlab's library, cold median) against the fastest of each library" in out
    assert "| params | memlab_copy_ (ms) | GB/s | torch (ms) | memlab/torch | triton (ms) | memlab/triton |" in out
    assert ("| dtype=f16 n=2^24 src_offset=0 dst_offset=0 | 0.027 | 2485.5 | 0.03 torch_copy_ | 0.900 ±1.7% FASTER "
            "| 0.025 triton_copy block=1024 | 1.080 ±2.0% SLOWER (beyond threshold) |")  # noise: the 0.5 us floor in out
    assert "- against triton: 2 point(s), memlab's library 1 same, 0 faster, 1 slower (1 beyond the 5% threshold)" in out
    assert "†" not in out
    assert compare.main([path, "--race", "--against", "torch"]) == 0
    out = capsys.readouterr().out
    assert "triton" not in out.split("memlab/LIB")[0]
    assert compare.main([path, "--race", "--threshold", "10", "--out", str(tmp_path / "race.md")]) == 0
    assert (tmp_path / "race.md").read_text() == capsys.readouterr().out


def test_race_marks_a_library_from_another_process(tmp_path, capsys):
    # The transpose: torch and Triton in the peers' process, cuBLAS from the lab's run (another file, no
    # `library`: a lab's own peer, known by its variant); the lab's rungs are memlab, not raced.
    shape = {"rows": 12289, "cols": 3001}
    peers_file = _write(tmp_path, "peers.json", _peers_doc([
        _peer("torch_t_contiguous", "torch 2.11.0", 1, 0.45, lab="transpose", **shape),
        _peer("triton_transpose", "triton 3.6.0", 1, 0.16, lab="transpose", **shape),
        _peer("memlab_transpose", "memlab 0.1.0", 1, 0.15, lab="transpose", **shape)]))
    lab = _peers_doc([_peer("cublas", "", 1, 0.155, lab="transpose", band=1, **shape),
                      _peer("copy", "", 1, 0.12, lab="transpose", band=1, **shape),
                      dict(_peer("auto", "", 1, 0.10, lab="transpose", band=1, **shape), peer=False)])
    lab_file = _write(tmp_path, "lab.json", lab)
    assert compare.main([peers_file, lab_file, "--race", "--against", "torch,triton,cublas"]) == 0
    out = capsys.readouterr().out
    assert "| torch (ms) | memlab/torch | triton (ms) | memlab/triton | cublas † (ms) | memlab/cublas |" in out
    assert "| 0.155 cublas band=1 | 0.968 ±1.4% FASTER |" in out  # the lab's own axis follows its time
    assert "† from another file than memlab's record, so another process" in out
    assert "auto" not in out and "| copy" not in out
    assert compare.main([peers_file, lab_file, "--race"]) == 1  # the lab's copy of the same bytes is 20% ahead


def test_race_says_what_it_could_not_race(tmp_path, capsys):
    skipped = _peer("memlab_copy_", "memlab", 4096, 0.0)
    skipped.update(status="skipped", note="import memlab failed (No module named 'memlab')")
    skipped["cold"]["samples"] = 0
    only_skipped = _write(tmp_path, "s.json", _peers_doc([_peer("torch_copy_", "torch 2.11.0", 4096, 0.004), skipped]))
    assert compare.main([only_skipped, "--race"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memlab's library has no point where another library was timed" in err
    assert "1 case(s) not timed" in err
    none = _write(tmp_path, "none.json", _peers_doc([_peer("torch_copy_", "torch 2.11.0", 4096, 0.004)]))
    assert compare.main([none, "--race"]) == 2
    assert "no record of memlab's own library" in capsys.readouterr().err
    alone = _write(tmp_path, "alone.json", _peers_doc([_peer("torch_copy_", "torch 2.11.0", 4096, 0.004),
                                                       _peer("memlab_copy_", "memlab 0.1.0", 4096, 0.004),
                                                       _peer("memlab_copy_", "memlab 0.1.0", 8192, 0.005), skipped]))
    assert compare.main([alone, "--race"]) == 0
    out = capsys.readouterr().out
    assert "1 point(s) of memlab's library with no other library measured there: copy memlab_copy_" in out
    assert "1 case(s) not timed (cold), so not raced: copy memlab_copy_" in out and "No module named" in out


@pytest.mark.parametrize("argv, needle", [
    (["--race", "--pair", "auto:*"], "--pair: not with --race"),
    (["--against", "torch"], "--against: only with --race"),
    (["--race", "--against", "torch,,triton"], "--against: 'torch,,triton' is not a comma-separated list"),
])
def test_race_flags_are_one_line_and_exit_2(argv, needle, capsys):
    assert exit_code(compare.main, [RUN0, RUN0] + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


def test_without_race_it_takes_two_files(capsys):
    assert exit_code(compare.main, [RUN0]) == 2
    assert "takes two files, A and B (1 given); --race takes one or more" in capsys.readouterr().err
    assert exit_code(compare.main, [RUN0, RUN0, RUN0]) == 2


# ---- a baseline written before an axis was renamed, or before "not applicable" was null -------------------------

def test_a_renamed_param_of_one_lab_is_read_as_its_new_name(tmp_path, capsys):
    a_doc = _doc([("store_stride", 1024, 1.0, 0.01), ("chase_l1", 1024, 1.0, 0.01)])
    b_doc = _doc([("store_stride", 1024, 1.0, 0.01), ("chase_l1", 1024, 1.0, 0.01)])
    for doc, names in ((a_doc, ("stride", "stride")), (b_doc, ("lane_stride", "node_stride"))):
        doc["results"][0]["lab"], doc["results"][1]["lab"] = "smem", "hierarchy"
        doc["results"][0]["params"][names[0]] = 2
        doc["results"][1]["params"][names[1]] = 128
    a, b = _write(tmp_path, "a.json", a_doc), _write(tmp_path, "b.json", b_doc)
    assert compare.main([a, b]) == 2  # no case in common under the old names
    capsys.readouterr()
    assert compare.main([a, b, "--rename-param", "smem:stride=lane_stride",
                         "--rename-param", "hierarchy:stride=node_stride"]) == 0
    out = capsys.readouterr().out
    assert "lane_stride=2" in out and "node_stride=128" in out
    assert compare.main([a, b, "--rename-param", "stride"]) == 2
    assert "--rename-param: 'stride' is not [LAB:]OLD=NEW" in capsys.readouterr().err


def test_a_not_applicable_param_matches_whether_null_or_the_old_dash():
    old = compare.Record({"lab": "transfer", "variant": "x", "params": {"peer": "-"}}, {}, "a")
    new = compare.Record({"lab": "transfer", "variant": "x", "params": {"peer": None}}, {}, "b")
    assert old.key() == new.key()
    # A file from before the lab had the axis: the param is missing, where today's file says null.
    older = compare.Record({"lab": "transfer", "variant": "x", "params": {}}, {}, "c")
    newer = compare.Record({"lab": "transfer", "variant": "x", "params": {"placement": None}}, {}, "d")
    assert older.key() == newer.key()
    # A param that applies is part of the key.
    assert older.key() != compare.Record({"lab": "transfer", "variant": "x", "params": {"placement": "in_place"}},
                                         {}, "e").key()
