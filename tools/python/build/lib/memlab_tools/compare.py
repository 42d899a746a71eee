"""memlab-compare A.json B.json: every case the two runs share, B against A, judged against noise.

As NVBench's compare does, a difference counts only when it is larger than the noise of the runs:
for each case, noise = the larger of the two runs' relative spreads ((p75 - p25) / median of the
timing compared), and at least one CUDA event tick (32 ns) over the median. Then

  SAME    |B / A - 1| <= noise
  FASTER  B's time is lower by more than the noise
  SLOWER  B's time is higher by more than the noise

The exit status is 1 when some case is SLOWER by more than --threshold (default 5%) as well: so a
script can guard performance without failing on noise. Cases only one run has are listed.

With --pair A_VARIANT:B_VARIANT the variants differ: each case of A_VARIANT in A against each case of
B_VARIANT in B at the same point (one side may have parameters of its own, such as a Triton peer's
block); `*` on either side is every variant of that run. That is how memlab's `auto` is held against
the PyTorch and Triton peers of the same machine, failing where it is slower than any of them:

  memlab-compare peers_copy_f16.json copy_f16.json --pair '*:auto'
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from .results import Record, ResultsError, records

EVENT_TICK_MS = 32e-6


@dataclass
class Verdict:
    key: tuple
    a_ms: float
    b_ms: float
    ratio: float  # B / A, time
    noise: float  # relative
    verdict: str  # SAME, FASTER, SLOWER
    fails: bool   # SLOWER beyond the threshold too


def judge(a: dict, b: dict, threshold: float) -> tuple[float, float, str, bool]:
    """(B/A, noise, verdict, fails) for two timing summaries of one case."""
    a_ms, b_ms = a["median_ms"], b["median_ms"]
    noise = max(a.get("rel_spread", 0.0), b.get("rel_spread", 0.0), EVENT_TICK_MS / min(a_ms, b_ms))
    ratio = b_ms / a_ms
    diff = ratio - 1.0
    if abs(diff) <= noise:
        return ratio, noise, "SAME", False
    if diff < 0:
        return ratio, noise, "FASTER", False
    return ratio, noise, "SLOWER", diff > threshold


def compare(a: list[Record], b: list[Record], metric: str = "cold", threshold: float = 0.05,
            pairs: list[tuple[str, str]] | None = None):
    """Verdicts for the cases both runs measured, and the keys only one of them has."""
    if pairs:
        return _compare_pairs(a, b, metric, threshold, pairs)
    index_a = {r.key(): r for r in a if r.ok and r.data.get(metric, {}).get("samples", 0)}
    index_b = {r.key(): r for r in b if r.ok and r.data.get(metric, {}).get("samples", 0)}
    out = []
    for key, ra in index_a.items():
        rb = index_b.get(key)
        if rb is None:
            continue
        ratio, noise, verdict, fails = judge(ra.data[metric], rb.data[metric], threshold)
        out.append(Verdict(key, ra.data[metric]["median_ms"], rb.data[metric]["median_ms"], ratio, noise, verdict, fails))
    only_a = sorted(set(index_a) - set(index_b))
    only_b = sorted(set(index_b) - set(index_a))
    return out, only_a, only_b


def _same_point(pa: dict, pb: dict) -> bool:
    """One run's params are the other's plus, at most, parameters of its own (a peer's Triton block)."""
    small, large = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return all(k in large and large[k] == v for k, v in small.items())


def _compare_pairs(a, b, metric, threshold, pairs):
    measured = lambda r: r.ok and r.data.get(metric, {}).get("samples", 0)  # noqa: E731
    out, only_a = [], set()
    for va, vb in pairs:
        for ra in (r for r in a if (va == "*" or r.variant == va) and measured(r)):
            matches = [rb for rb in b if rb.lab == ra.lab and measured(rb) and (vb == "*" or rb.variant == vb)
                       and rb.variant != ra.variant and _same_point(ra.params, rb.params)]
            if not matches:
                only_a.add(ra.key())
            for rb in matches:
                ratio, noise, verdict, fails = judge(ra.data[metric], rb.data[metric], threshold)
                key = (ra.lab, f"{ra.variant} vs {rb.variant}", tuple(sorted({**ra.params, **rb.params}.items())))
                out.append(Verdict(key, ra.data[metric]["median_ms"], rb.data[metric]["median_ms"], ratio, noise,
                                   verdict, fails))
    return out, sorted(only_a), []


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """'auto:*,auto:cub' -> [('auto', '*'), ('auto', 'cub')]; ValueError naming the flag otherwise."""
    pairs = []
    for item in text.split(","):
        va, sep, vb = item.partition(":")
        if not sep or not va or not vb:
            raise ValueError(f"--pair: {item!r} is not A_VARIANT:B_VARIANT (either may be *)")
        pairs.append((va, vb))
    return pairs


def _params(key: tuple) -> str:
    return " ".join(f"{k}={v}" for k, v in key[2])


def markdown(verdicts: list[Verdict], only_a, only_b, metric: str, threshold: float) -> str:
    lines = [f"| lab | variant | params | A {metric} (ms) | B {metric} (ms) | B/A | noise | verdict |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for v in verdicts:
        mark = " (beyond threshold)" if v.fails else ""
        lines.append(f"| {v.key[0]} | {v.key[1]} | {_params(v.key)} | {v.a_ms:.6g} | {v.b_ms:.6g} | {v.ratio:.3f} | "
                     f"{100 * v.noise:.1f}% | {v.verdict}{mark} |")
    counts = {k: sum(v.verdict == k for v in verdicts) for k in ("SAME", "FASTER", "SLOWER")}
    failing = sum(v.fails for v in verdicts)
    lines.append("")
    lines.append(f"{len(verdicts)} cases compared: {counts['SAME']} same, {counts['FASTER']} faster, "
                 f"{counts['SLOWER']} slower ({failing} beyond the {100 * threshold:g}% threshold).")
    for label, keys in (("only in A", only_a), ("only in B", only_b)):
        if keys:
            lines.append(f"{len(keys)} case(s) {label}: " + "; ".join(f"{k[0]} {k[1]} {_params(k)}" for k in keys[:10])
                         + (" ..." if len(keys) > 10 else ""))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="memlab-compare",
        description="Compare two memlab results files case by case (same lab, variant and params): B against A, "
                    "SAME / FASTER / SLOWER judged against both runs' noise.",
        epilog="Exit codes: 0 nothing slower beyond the threshold; 1 some case slower beyond the threshold and "
               "the noise; 2 usage error (a file that is not a memlab results file).")
    ap.add_argument("a", help="the baseline results (.json)")
    ap.add_argument("b", help="the results to judge (.json)")
    ap.add_argument("--metric", choices=("cold", "batch", "graph"), default="cold", help="the timing compared")
    ap.add_argument("--threshold", type=float, default=5.0, help="percent slower that fails (default 5)")
    ap.add_argument("--pair", help="A_VARIANT:B_VARIANT list: compare different variants (* = every variant "
                                   "of that run), e.g. '*:auto' with a peers file as A")
    ap.add_argument("--out", help="also write the Markdown table to this file")
    args = ap.parse_args(argv)
    if not args.threshold >= 0:
        print(f"memlab-compare: --threshold: a percentage >= 0 (got {args.threshold})", file=sys.stderr)
        return 2
    try:
        pairs = parse_pairs(args.pair) if args.pair else None
    except ValueError as e:
        print(f"memlab-compare: {e}", file=sys.stderr)
        return 2
    try:
        a, b = records([args.a]), records([args.b])
    except ResultsError as e:
        print(f"memlab-compare: {e}", file=sys.stderr)
        return 2
    verdicts, only_a, only_b = compare(a, b, args.metric, args.threshold / 100, pairs)
    text = markdown(verdicts, only_a, only_b, args.metric, args.threshold / 100)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if not verdicts:
        print("memlab-compare: the two files share no measured case", file=sys.stderr)
        return 2
    return 1 if any(v.fails for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
