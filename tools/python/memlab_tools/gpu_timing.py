"""Timing a PyTorch or Triton launch the way memlab's C++ harness times its kernels
(src/harness/timing.hpp; docs/results-schema.md, "Timing"):

  cold   the L2 flushed (a fill of twice its size), then a GPU-side wait holds the stream while the
         host enqueues the start event, one launch and the stop event: the host's launch cost (tens
         of microseconds for a Python launch) is not timed.
  batch  k launches enqueued behind the wait: GPU time per launch, L2 warm, no host gap.
  graph  the same k launches captured once in torch.cuda.CUDAGraph and replayed behind the wait.

memlab holds the stream with a kernel spinning on a host flag; PyTorch has none, so the wait is
torch.cuda._sleep(cycles), calibrated to milliseconds at start-up. If the host took longer to
enqueue than the wait lasted (the GPU could have gone idle between the events), the sample is
dropped and the wait doubled: the host never leaks into a kept sample.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from .stats import StoppingRule, quantile

CUDA_DOCUMENTED_RESOLUTION_US = 0.5  # cudaEventElapsedTime: "a resolution of around 0.5 microseconds"


class Timer:
    def __init__(self, torch, l2_bytes: int, max_time_s: float):
        self.torch = torch
        self.flush_buf = torch.empty(max(2 * l2_bytes, 1), dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        self.max_time_s = max_time_s
        self.hold_ms = 1.0
        self.dropped_host_bound = 0
        self.cycles_per_ms = self._calibrate()

    def _calibrate(self) -> float:
        torch = self.torch
        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # load the kernel
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            self.start.record()
            torch.cuda._sleep(cycles)
            self.stop.record()
            self.stop.synchronize()
            best = min(best, self.start.elapsed_time(self.stop))
        return cycles / best

    def _hold(self, host_ms_expected: float) -> float:
        ms = max(self.hold_ms, 2 * host_ms_expected)
        self.torch.cuda._sleep(int(self.cycles_per_ms * ms))
        return ms

    def _held_sample(self, enqueue: Callable[[], None], launches: int, host_ms: float) -> float | None:
        """Milliseconds per launch of `enqueue()` (which makes `launches` launches, expected to take
        `host_ms` of host time), or None when the wait ended before the host was done."""
        held = self._hold(host_ms + 0.2)
        t0 = time.perf_counter()
        self.start.record()
        enqueue()
        self.stop.record()
        spent = (time.perf_counter() - t0) * 1e3
        self.stop.synchronize()
        if spent > 0.8 * held:  # the wait may have ended before the host was done
            self.hold_ms = min(2 * self.hold_ms, 1000.0)
            self.dropped_host_bound += 1
            return None
        return self.start.elapsed_time(self.stop) / launches

    def _host_ms(self, fn: Callable[[], None]) -> float:
        """Host time of one launch, for sizing the wait."""
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        self.torch.cuda.synchronize()
        return ms

    def rule(self, fraction: float) -> StoppingRule:
        return StoppingRule(self.max_time_s * fraction)

    def cold(self, fn: Callable[[], None]) -> dict:
        fn()  # warm-up: compilation, allocation, autotuning
        self.torch.cuda.synchronize()
        host = self._host_ms(fn)
        value = 0

        def sample():
            nonlocal value
            value = (value + 1) % 255
            self.flush_buf.fill_(value)
            self.torch.cuda.synchronize()
            return self._held_sample(fn, 1, host)

        return self.rule(0.5).run(sample)

    def held_sample(self, fn: Callable[[], None], flush: bool = True, host_ms: float = 0.2) -> float | None:
        """One sample of one launch of `fn`, as cold() takes them (flush=False: the same without the L2 flush,
        "warm"); None when the host outlasted the hold (the hold is then doubled). For tools that interleave
        several launches sample by sample instead of sampling one until the stopping rule ends."""
        if flush:
            self._flush_value = (getattr(self, "_flush_value", 0) + 1) % 255
            self.flush_buf.fill_(self._flush_value)
        self.torch.cuda.synchronize()
        return self._held_sample(fn, 1, host_ms)

    def launches_for(self, estimate_ms: float, cap: int = 256, target_ms: float = 1.0) -> int:
        return 100 if estimate_ms <= 0 else int(min(max(round(target_ms / estimate_ms + 0.5), 1), cap))

    def batch(self, fn: Callable[[], None], estimate_ms: float) -> dict:
        k = self.launches_for(estimate_ms)
        for _ in range(k):
            fn()
        self.torch.cuda.synchronize()
        host = self._host_ms(fn)

        def enqueue():
            for _ in range(k):
                fn()

        return self.rule(0.25).run(lambda: self._held_sample(enqueue, k, host * k))

    def graph(self, fn: Callable[[], None], estimate_ms: float) -> tuple[dict, str]:
        torch = self.torch
        k = self.launches_for(estimate_ms, cap=2000)
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    fn()
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(k):
                    fn()
        except Exception as e:  # noqa: BLE001 - any failure to capture is reported, not fatal
            torch.cuda.synchronize()
            return {"median_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "p25_ms": 0.0, "p75_ms": 0.0, "samples": 0,
                    "rel_spread": 0.0, "mean_ms": 0.0}, f"cannot be captured in a CUDA graph: {type(e).__name__}: {e}"
        g.replay()
        torch.cuda.synchronize()
        host = self._host_ms(g.replay)
        return self.rule(0.25).run(lambda: self._held_sample(g.replay, k, host)), ""


# ---- contenders raced in one process, sample by sample (the studies in tools/studies/, transpose_shapes accept) ----

def interleaved(timer, launches: dict, samples: int, flush: bool = True) -> dict:
    """`samples` cold samples (flush=False: warm) of every launch, in rounds: each round one sample of each, the
    order rotating by one from round to round. A sample whose host enqueue outlasted the hold is dropped and taken
    again (gpu_timing.Timer.held_sample). {name: [ms, ...]}, the i-th sample of each from the same round."""
    names = list(launches)
    out = {name: [] for name in names}
    for rnd in range(samples):
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            ms = None
            while ms is None:
                ms = timer.held_sample(launches[name], flush=flush)
            out[name].append(ms)
    return out


def tick_ms(samples: list[float]) -> float:
    """The timer's measured step: the smallest difference between two distinct sample values (0 if there are not
    two). Event times come in whole ticks of the GPU's timer (32 ns on an H100)."""
    values = sorted(set(samples))
    steps = [b - a for a, b in zip(values, values[1:]) if b - a > 1e-9]
    return min(steps) if steps else 0.0


def paired_difference(a: list[float], b: list[float], z: float = 1.96) -> tuple[float, float, float]:
    """(median, low, high) of a[i] - b[i]: the median of the paired differences and its ~95% interval from the
    sign test's order statistics (ranks n/2 -+ z sqrt(n)/2; exact enough from n = 20)."""
    d = sorted(x - y for x, y in zip(a, b))
    n = len(d)
    if n == 0:
        return 0.0, 0.0, 0.0
    half = z * math.sqrt(n) / 2
    lo, hi = max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half) - 1)
    return quantile(d, 0.5), d[lo], d[hi]


@dataclass
class Verdict:
    speed: float       # torch's median over memlab's: memlab's speed relative to torch (>= 1: as fast or faster)
    diff_ms: float     # median of memlab - torch, paired by round
    low_ms: float
    high_ms: float
    word: str          # SAME (the interval holds 0), SLOWER or FASTER
    inside_documented: bool  # |diff| under CUDA's documented 0.5 us
    ticks: float       # |diff| in measured ticks


def judge(memlab_ms: list[float], torch_ms: list[float], tick: float) -> Verdict:
    d, lo, hi = paired_difference(memlab_ms, torch_ms)
    m, t = quantile(sorted(memlab_ms), 0.5), quantile(sorted(torch_ms), 0.5)
    word = "SLOWER" if lo > 0 else "FASTER" if hi < 0 else "SAME"
    return Verdict(t / m if m > 0 else 0.0, d, lo, hi, word, abs(d) * 1e3 < CUDA_DOCUMENTED_RESOLUTION_US,
                   abs(d) / tick if tick > 0 else 0.0)


def torch_on_gpu(prog: str):
    """(torch, 0) where PyTorch and a usable CUDA device are here; else (None, the exit code) after the one line that
    says which is missing (exit 3, as every tool's missing dependency). What a study checks before any GPU work."""
    from . import cli

    try:
        import torch
    except ImportError:
        return None, cli.fail(prog, "PyTorch is not installed", cli.MISSING_DEPENDENCY)
    if not torch.cuda.is_available():
        return None, cli.fail(prog, "no usable CUDA device", cli.MISSING_DEPENDENCY)
    return torch, 0
