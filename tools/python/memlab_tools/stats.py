"""Summaries and the stopping rule of memlab's C++ harness (src/harness/stats.cpp, timing.cu), so
that a peer timed from Python and a memlab variant are summarised the same way."""

from __future__ import annotations

import math
import time
from typing import Callable

from . import table


def quantile(sorted_values: list[float], q: float) -> float:
    """Type 7 (R, NumPy's default): linear between order statistics at h = q (n - 1)."""
    if not sorted_values:
        raise ValueError("quantile of no samples")
    h = q * (len(sorted_values) - 1)
    lo = math.floor(h)
    if lo + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[lo] + (h - lo) * (sorted_values[lo + 1] - sorted_values[lo])


def summarize(ms: list[float]) -> dict:
    """The fields of a results file's cold / batch / graph object."""
    if not ms:
        return {"median_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "p25_ms": 0.0, "p75_ms": 0.0, "samples": 0,
                "rel_spread": 0.0, "mean_ms": 0.0}
    s = sorted(ms)
    med = quantile(s, 0.5)
    p25, p75 = quantile(s, 0.25), quantile(s, 0.75)
    return {"median_ms": med, "min_ms": s[0], "max_ms": s[-1], "p25_ms": p25, "p75_ms": p75, "samples": len(s),
            "rel_spread": (p75 - p25) / med if len(s) >= 2 and med > 0 else 0.0, "mean_ms": sum(s) / len(s)}


class StoppingRule:
    """Sample until (p75 - p25) / median < target with at least min_samples (checked every 5), or the
    budget ends after at least floor_samples, or max_samples: the C++ harness's rule, with its defaults
    from memlab's table (`memlab list --format json`, "timing")."""

    def __init__(self, max_time_s: float, target_rel_spread: float | None = None, min_samples: int | None = None,
                 max_samples: int | None = None, floor_samples: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        defaults = table.timing()
        self.max_time_s = max_time_s
        self.target = defaults["target_rel_spread"] if target_rel_spread is None else target_rel_spread
        self.min_samples = defaults["min_samples"] if min_samples is None else min_samples
        self.max_samples = defaults["max_samples"] if max_samples is None else max_samples
        self.floor = defaults["floor_samples"] if floor_samples is None else floor_samples
        self.clock = clock

    def run(self, sample: Callable[[], float | None]) -> dict:
        """`sample()` returns milliseconds, or None for a sample it dropped (counted in "dropped")."""
        ms: list[float] = []
        dropped = 0
        t0 = self.clock()
        for taken in range(1, self.max_samples + 1):
            v = sample()
            if v is None:
                dropped += 1
            else:
                ms.append(v)
            n = len(ms)
            if v is not None and n >= self.min_samples and n % 5 == 0 and summarize(ms)["rel_spread"] < self.target:
                break
            if n >= self.floor and self.clock() - t0 > self.max_time_s:
                break
            if self.clock() - t0 > 4 * self.max_time_s + 1:  # every sample dropped: stop anyway
                break
        out = summarize(ms)
        out["dropped"] = dropped
        return out
