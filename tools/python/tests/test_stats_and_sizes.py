"""The Python tools summarise and stop exactly as memlab's C++ harness does, and read --sizes alike."""
import itertools

import numpy as np
import pytest

from memlab_tools.sizes import parse_counts, parse_sizes
from memlab_tools.stats import StoppingRule, quantile, summarize


def test_quantiles_are_type_7_as_numpy_and_the_harness():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 10, 101):
        v = sorted(rng.random(n).tolist())
        for q in (0, 0.25, 0.5, 0.75, 1):
            assert quantile(v, q) == pytest.approx(np.percentile(v, 100 * q))


def test_summary_fields_and_relative_spread():
    s = summarize([1.0, 2.0, 3.0, 4.0])
    assert s["median_ms"] == 2.5 and s["min_ms"] == 1.0 and s["max_ms"] == 4.0 and s["samples"] == 4
    assert s["rel_spread"] == pytest.approx((3.25 - 1.75) / 2.5)
    assert summarize([5.0])["rel_spread"] == 0.0
    assert summarize([])["samples"] == 0


class FakeClock:
    def __init__(self, step):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


def test_stops_once_the_spread_is_small_after_ten_samples():
    rule = StoppingRule(max_time_s=10, clock=FakeClock(0.001))
    assert rule.run(lambda: 1.0)["samples"] == 10


def test_stops_at_the_budget_with_at_least_three_samples():
    noisy = itertools.cycle([1.0, 2.0, 3.0])
    out = StoppingRule(max_time_s=0.01, clock=FakeClock(0.004)).run(lambda: next(noisy))
    assert 3 <= out["samples"] <= 5


def test_dropped_samples_are_counted_not_kept():
    values = iter([None, 1.0, None] + [1.0] * 20)
    out = StoppingRule(max_time_s=10, clock=FakeClock(0.001)).run(lambda: next(values))
    assert out["dropped"] == 2 and out["samples"] == 10


def test_sizes_as_memlab_reads_them():
    assert [s.text for s in parse_sizes("2^12..2^14")] == ["2^12", "2^13", "2^14"]
    assert parse_sizes("64MiB")[0].elements(2) == 32 << 20
    assert [s.value for s in parse_sizes("1M,4K")] == [1 << 20, 4096]
    assert [s.value for s in parse_sizes("2^10..2^16:*4")] == [1024, 4096, 16384, 65536]
    assert parse_counts("0..3,8", "--x") == [0, 1, 2, 3, 8]
    for bad in ("", "2^x", "10..1", "1..4:*1", "1KiB..4K", "-1"):
        with pytest.raises(ValueError):
            parse_sizes(bad)
    with pytest.raises(ValueError, match="--src-offset"):
        parse_counts("4KiB", "--src-offset")
