"""The Python studies in tools/studies/, without a GPU: copy_floor.py (small copies against the launch floor) and
layout_claim.py (torch.matmul of a transposed view), and the timing helper they share (memlab_tools.gpu_timing:
rounds interleaved sample by sample, paired verdicts): their statistics, verdicts, tables, tolerance checks, usage
errors, and that their records validate against the schema. The timing runs on the H100
(tools/gpu/measure_python_edges.sh)."""

import json
import math
import os
import sys
import types

import pytest

from memlab_tools import gpu_timing, runfile

from conftest import REPO, SCHEMA

sys.path.insert(0, os.path.join(REPO, "tools", "studies"))
import copy_floor  # noqa: E402
import layout_claim  # noqa: E402

TICK = 0.000032  # 32 ns in ms: the H100 event timer's step


def ticks(*counts):
    return [c * TICK for c in counts]


# ---- the timing helper and copy_floor.py ---------------------------------------------------------------------------------------------------

def test_the_measured_tick_is_the_smallest_step_between_samples():
    assert gpu_timing.tick_ms(ticks(125, 125, 126, 129, 125)) == pytest.approx(TICK)
    assert gpu_timing.tick_ms(ticks(125, 125)) == 0.0
    assert gpu_timing.tick_ms([]) == 0.0


def test_paired_difference_and_its_interval():
    a = ticks(*([129] * 30))
    b = ticks(*([125] * 30))
    d, lo, hi = gpu_timing.paired_difference(a, b)
    assert d == pytest.approx(4 * TICK) and lo == pytest.approx(4 * TICK) and hi == pytest.approx(4 * TICK)
    # Differences of both signs around 0: the interval holds 0.
    mixed = [(-1) ** i * TICK for i in range(40)]
    d, lo, hi = gpu_timing.paired_difference(mixed, [0.0] * 40)
    assert lo < 0 < hi
    # The interval's ranks: n/2 -+ 1.96 sqrt(n)/2, inside the sample.
    d, lo, hi = gpu_timing.paired_difference(list(range(100)), [0] * 100)
    assert (lo, hi) == (40, 59) and d == pytest.approx(49.5)


def test_verdicts_against_torch():
    slower = gpu_timing.judge(ticks(*([129] * 30)), ticks(*([125] * 30)), TICK)
    assert slower.word == "SLOWER" and slower.ticks == pytest.approx(4) and slower.inside_documented
    assert slower.speed == pytest.approx(125 / 129)
    faster = gpu_timing.judge(ticks(*([120] * 30)), ticks(*([125] * 30)), TICK)
    assert faster.word == "FASTER" and faster.speed > 1
    same = gpu_timing.judge(ticks(*([125, 126] * 20)), ticks(*([126, 125] * 20)), TICK)
    assert same.word == "SAME" and same.speed == pytest.approx(1)
    far = gpu_timing.judge([0.010] * 30, [0.009] * 30, TICK)
    assert far.word == "SLOWER" and not far.inside_documented  # 1 us apart: beyond CUDA's 0.5 us


def _row(n, memlab, torch_, empty=60, grid=32):
    s = {"memlab_copy_": ticks(*([memlab] * 30)), "torch_copy_": ticks(*([torch_] * 30)),
         "cuda_memcpy_async": ticks(*([torch_] * 30)), "empty_kernel": ticks(*([empty] * 30)),
         "empty_kernel_memlab_grid": ticks(*([empty + 2] * 30))}
    return {"n": n, "grid": grid, "samples": s, "host_us": {"memlab_copy_": 6.5, "torch_copy_": 4.1},
            "verdict": gpu_timing.judge(s["memlab_copy_"], s["torch_copy_"], TICK)}


def test_the_table_names_the_floor_the_verdict_and_the_acceptance():
    rows = [_row(1 << 12, 110, 110), _row(1 << 16, 129, 125), _row(1 << 23, 1000, 1001)]
    text = copy_floor.markdown(rows, TICK, "f16")
    assert "| 2^16 | 1.920 | 1.984 (32 CTAs) | 4.000 | 4.000 | 4.128 | - | 2.080 / 2.208 | 0.969 |" in text
    assert "SLOWER (inside CUDA's 0.5 us, 4.0 ticks)" in text
    assert "SAME (inside CUDA's 0.5 us, 0.0 ticks)" in text
    assert "speed below 0.99 at 1 (2^16); below 1.00 from 2^23 at 0." in text
    assert "32 ns (one tick)" in text
    host = copy_floor.host_markdown(rows)
    assert "| 2^12 | 6.50 | 4.10 |" in host


@pytest.mark.parametrize("argv, needle", [
    (["--samples", "29"], "--samples: at least 30"),
    (["--dtype", "f128"], "--dtype: 'f128'"),
    (["--sizes", "lots"], "--sizes"),
    (["--out", "x.csv"], "--out: x.csv: writes JSON"),
])
def test_copy_floor_usage_errors_before_any_gpu_work(argv, needle, capsys):
    assert copy_floor.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_without_torch_or_a_gpu_the_studies_exit_3(monkeypatch, capsys):
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is here: the studies would run")
    except ImportError:
        pass
    assert copy_floor.main([]) == 3
    assert layout_claim.main([]) == 3
    err = capsys.readouterr().err
    assert "copy_floor.py:" in err and "layout_claim.py:" in err


# ---- layout_claim.py -------------------------------------------------------------------------------------------------

def _product(n, seed=1):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    at = a.T.astype(np.float64)
    return np, a, b, at @ b.astype(np.float64), np.abs(at) @ np.abs(b.astype(np.float64))


def test_the_tolerances_pass_a_right_product_and_catch_a_wrong_layout():
    np, a, b, ref, mag = _product(256)
    right = (a.T @ b).astype(np.float64)  # float32 arithmetic, any order
    assert layout_claim.tolerance_problem("f32", 256, right, ref, mag) == ""
    assert layout_claim.tolerance_problem("tf32", 256, right, ref, mag) == ""
    wrong = (a @ b).astype(np.float64)  # A instead of Aᵀ: the mistake a layout bug makes
    assert layout_claim.tolerance_problem("f32", 256, wrong, ref, mag).startswith("C[")
    assert layout_claim.tolerance_problem("tf32", 256, wrong, ref, mag).startswith("C[")
    assert "relative Frobenius error" in layout_claim.tolerance_problem("bf16", 256, wrong, ref, mag)
    # bf16: the output rounded to 8 bits (a relative 2^-9) passes.
    rounded = ref * (1 + 2.0 ** -9 * np.sign(np.sin(np.arange(ref.size))).reshape(ref.shape))
    assert layout_claim.tolerance_problem("bf16", 256, rounded, ref, mag) == ""
    nan = right.copy()
    nan[3, 4] = float("nan")
    assert layout_claim.tolerance_problem("f32", 256, nan, ref, mag).startswith("C[3, 4]")


def test_the_claims_verdict():
    slow_view = layout_claim.verdict([2.0] * 30, [1.9] * 30)
    assert slow_view[0] == "HOLDS"
    assert layout_claim.verdict([1.8] * 30, [1.9] * 30)[0] == "FAILS"
    assert layout_claim.verdict([1.9, 1.91] * 15, [1.91, 1.9] * 15)[0] == "SAME"


def test_the_claims_table():
    rows = [{"math": "f32", "n": 4096, "verdict": layout_claim.verdict([2.5] * 30, [2.6] * 30),
             "samples": {"torch_matmul_at_view": [2.5] * 30, "torch_matmul_at_contiguous": [2.6] * 30,
                         "memlab_transpose_matmul": [2.55] * 30, "torch_matmul_contiguous": [2.5] * 30,
                         "torch_t_contiguous": [0.09] * 30, "memlab_transpose": [0.05] * 30},
             "kernels": {"torch_matmul_at_view": ["sm90_xmma_gemm_f32f32_tn"]}}]
    text = layout_claim.markdown(rows)
    assert "| f32 | 4096 | 2.5 | 2.6 | 2.55 | 2.5 | 0.09 | 0.05 | -0.1 [-0.1, -0.1] | FAILS |" in text
    assert "The claim holds at 0 of 1 points" in text and "the view is faster at 1" in text
    assert "torch.matmul(A.t(), B): sm90_xmma_gemm_f32f32_tn" in text


@pytest.mark.parametrize("argv, needle", [
    (["--math", "f64"], "--math: 'f64'"),
    (["--sizes", "1024,x"], "--sizes"),
    (["--samples", "3"], "--samples: at least 10"),
])
def test_layout_claim_usage_errors(argv, needle, capsys):
    assert layout_claim.main(argv) == 2
    assert needle in capsys.readouterr().err


# ---- the records ------------------------------------------------------------------------------------------------

def test_the_studies_records_validate_against_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tools/setup.sh installs it)")
    device = {"name": "H100", "cc": "9.0", "sm_count": 132, "l2_bytes": 52428800, "mem_clock_khz": 2619000,
              "bus_width_bits": 5120, "peak_gbps": 3352.3}
    args = types.SimpleNamespace(samples=30, out=str(tmp_path / "r.json"))
    out = runfile.RunFile(args.out, args, device, {"copy": {"roof": "dram", "params": ["dtype", "n", "l2_flush"]},
                                                   "launch": {"roof": "", "params": ["dtype", "n", "l2_flush"]}},
                          {"cold": "interleaved", "min_samples": 30, "max_samples": 30})
    out.add(runfile.finish(runfile.record("copy", "memlab_copy_", {"dtype": "f16", "n": 4096, "l2_flush": 1},
                                          "memlab 0.1.0", ticks(*([125] * 30)), bytes_=16384, verified=True), device,
                           "copy"))
    out.add(runfile.finish(runfile.record("launch", "empty_kernel", {"dtype": "f16", "n": 4096, "l2_flush": 1},
                                          "cuda driver", ticks(*([60] * 30)), verified=False), device, "copy"))
    out.add(runfile.finish(runfile.record("matmul", "torch_matmul_at_view", {"dtype": "f32", "n": 1024, "math": "tf32"},
                                          "torch 2.11", [0.1] * 30, bytes_=3 * 4 << 20, flops=2 * 1024 ** 3,
                                          verified=True), device, "matmul"))
    out.save("complete")
    doc = json.loads((tmp_path / "r.json").read_text())
    with open(SCHEMA) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(doc)
    assert [r["lab"] for r in doc["results"]] == ["copy", "launch", "matmul"]  # the roof borrowed, the lab kept
    assert doc["results"][0]["cold"]["samples"] == 30 and doc["ended"] == "complete"
    assert doc["results"][2]["gflops"] == pytest.approx(2 * 1024 ** 3 / 0.1e-3 / 1e9)
    assert math.isclose(doc["results"][0]["gbps"], 16384 / (125 * TICK * 1e-3) / 1e9)
