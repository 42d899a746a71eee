"""memlab-compare's verdicts on crafted pairs: same, faster, slower, and slower-but-noisy."""
import copy
import json
import os

import pytest

from memlab_tools import compare

from conftest import FIXTURES


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
    (1.004, 0.01, "SAME", False),    # within 1% noise
    (0.90, 0.01, "FASTER", False),
    (1.10, 0.01, "SLOWER", True),    # 10% slower, noise 1%, threshold 5%
    (1.03, 0.01, "SLOWER", False),   # slower beyond the noise, within the threshold
    (1.10, 0.20, "SAME", False),     # 10% slower but the runs are 20% noisy
])
def test_verdicts(b_ms, spread, verdict, fails):
    ratio, noise, v, f = compare.judge(_summary(1.0, spread), _summary(b_ms, spread), 0.05)
    assert v == verdict and f == fails
    assert ratio == pytest.approx(b_ms)
    assert noise == pytest.approx(max(spread, 32e-6 / min(1.0, b_ms)))


def test_event_tick_is_the_least_noise():
    # 32 ns on a 3.8 us launch is 0.84%: a 0.8% difference is one tick, not a regression.
    _, noise, verdict, _ = compare.judge(_summary(0.0038, 0.0), _summary(0.00383, 0.0), 0.05)
    assert verdict == "SAME" and noise == pytest.approx(32e-6 / 0.0038)


def test_exit_status_and_table(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("vec16", 1024, 1.0, 0.01), ("auto", 1024, 1.0, 0.01), ("cub", 1024, 1.0, 0.01)]))
    b = _write(tmp_path, "b.json", _doc([("vec16", 1024, 1.0, 0.01), ("auto", 1024, 1.2, 0.01), ("memcpy", 1024, 1.0, 0.01)]))
    assert compare.main([a, b]) == 1
    out = capsys.readouterr().out
    assert "| copy | auto | dtype=f16 n=1024 | 1 | 1.2 | 1.200 | 1.0% | SLOWER (beyond threshold) |" in out
    assert "1 case(s) only in A: copy cub" in out and "1 case(s) only in B: copy memcpy" in out
    assert compare.main([a, b, "--threshold", "25"]) == 0
    assert compare.main([a, a]) == 0


def test_refuses_what_is_not_a_results_file(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert compare.main([str(bad), str(bad)]) == 2
    assert "not a memlab.results/1 file" in capsys.readouterr().err


def test_two_committed_runs_of_the_same_binary():
    a = os.path.join(FIXTURES, "timing", "copy_f16_run_a.json")
    b = os.path.join(FIXTURES, "timing", "copy_f16_run_b.json")
    verdicts, only_a, only_b = compare.compare(compare.records([a]), compare.records([b]))
    assert len(verdicts) == 160 and not only_a and not only_b
    big = [v for v in verdicts if dict(v.key[2])["n"] >= 1 << 24]
    assert all(abs(v.ratio - 1) < 0.01 for v in big)


def test_pairs_hold_one_variant_against_others(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _doc([("auto", 1024, 1.0, 0.01), ("auto", 2048, 2.0, 0.01), ("vec16", 1024, 5.0, 0.01)]))
    peers = _doc([("torch_copy", 1024, 1.0, 0.01), ("triton_copy", 1024, 0.8, 0.01), ("torch_copy", 2048, 2.5, 0.01)])
    peers["results"][1]["params"]["block"] = 1024  # a peer's own parameter does not stop the match
    b = _write(tmp_path, "b.json", peers)
    verdicts, only_a, _ = compare.compare(compare.records([a]), compare.records([b]), pairs=[("auto", "*")])
    got = {(v.key[1], dict(v.key[2])["n"]): v.verdict for v in verdicts}
    assert got == {("auto vs torch_copy", 1024): "SAME", ("auto vs triton_copy", 1024): "FASTER",
                   ("auto vs torch_copy", 2048): "SLOWER"}
    assert not only_a  # vec16 was not asked for
    assert compare.main([a, b, "--pair", "auto:*"]) == 1  # torch_copy 25% slower than auto at 2048
    assert "| copy | auto vs triton_copy | block=1024 dtype=f16 n=1024 |" in capsys.readouterr().out
    # The guard the docs use: the peers as the baseline, auto judged; it fails where auto is slower.
    assert compare.main([b, a, "--pair", "*:auto"]) == 1  # triton_copy at 1024: auto 25% slower
    assert "| copy | triton_copy vs auto | block=1024 dtype=f16 n=1024 |" in capsys.readouterr().out
    assert compare.main([a, b, "--pair", "auto"]) == 2
    assert "--pair: 'auto' is not A_VARIANT:B_VARIANT" in capsys.readouterr().err
