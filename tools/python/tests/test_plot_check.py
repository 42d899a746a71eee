"""plot_check draws a check (memlab.check/1) without a warning, a panel per metric with a number, and refuses a file
that is not one with exit 2."""
import json
import warnings

from memlab_tools import plot_check as pc


def check(verdicts=None):
    verdicts = verdicts or {}
    rows = []
    for g in range(4):
        for metric, unit, hib, v, m in (("hbm_copy", "GB/s", True, 3000, 3000), ("l2_latency", "ns", False, 250, 250),
                                        ("ecc_volatile", "errors", False, 0, 0)):
            value = v * (0.5 if g == 3 and hib else 2 if g == 3 else 1)
            rows.append({"metric": metric, "scope": "gpu", "gpu": g, "peer": None, "unit": unit,
                         "higher_is_better": hib, "value": value, "reference": m,
                         "warn_at": m * (0.95 if hib else 1.05), "fail_at": m * (0.9 if hib else 1.1),
                         "verdict": verdicts.get(g, "pass")})
    rows.append({"metric": "all_reduce", "scope": "node", "gpu": None, "peer": None, "unit": "GB/s",
                 "higher_is_better": True, "value": None, "reference": None, "warn_at": None, "fail_at": None,
                 "verdict": "skip"})
    return {"schema": "memlab.check/1", "created": "2026-11-27T10:00:00Z", "link": "NVSwitch",
            "gpus": [{"name": "NVIDIA H100 80GB HBM3"}] * 4, "reference": None, "counts": {"pass": 9},
            "rows": rows}


def test_panels_leave_nvml_counts_in_the_table():
    assert [m for m, _ in pc.panels(check())] == ["hbm_copy", "l2_latency", "all_reduce"]


def test_a_check_is_drawn(tmp_path):
    src = tmp_path / "check.json"
    src.write_text(json.dumps(check({3: "fail"})))
    out = tmp_path / "check.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pc.main([str(src), "-o", str(out)]) == 0
    assert out.stat().st_size > 10000


def test_not_a_check_is_exit_2(tmp_path, capsys):
    src = tmp_path / "r.json"
    src.write_text(json.dumps({"schema": "memlab.results/1"}))
    assert pc.main([str(src)]) == 2
    assert "not a memlab.check/1 or /2 file" in capsys.readouterr().err
    assert pc.main([str(tmp_path / "none.json")]) == 2
