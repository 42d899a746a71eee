"""memlab-compare A.json B.json: every case the two runs share, B against A, judged against noise.

As NVBench's compare does, a difference counts only when it is larger than the noise of the runs.
For each case the noise is, in time,

  noise = max(sqrt(iqr_A^2 + iqr_B^2), floor)      iqr = (p75 - p25) of the timing compared
                                                    (rel_spread x median)
  floor = 0.5 us: the resolution CUDA documents for cudaEventElapsedTime ("around 0.5
          microseconds"); the events count 32 ns ticks, but two processes timing the same
          launch-bound kernel differ by several ticks (docs/notes/timing.md, 2.), and a small
          launch's samples sit a few ticks apart, so their IQR can be 0

and then

  SAME    |B - A| <= noise
  FASTER  B's time is lower by more than the noise
  SLOWER  B's time is higher by more than the noise

Both runs' spreads count, so one quiet run cannot make the other's noise a regression; the floor keeps
a case of a few microseconds (launch-bound: its time is the launch, not the kernel) from failing on a
difference of a few event ticks. `--min-time` leaves such cases out altogether.

The exit status is 1 when some case is SLOWER by more than --threshold (default 5%) as well: so a
script can guard performance without failing on noise. Cases only one run measured are counted.
Exit 2: bad input (a flag, a file that is not a memlab results file, files that share no case, an
--out that cannot be written), with one line saying which and why.

With --pair A_VARIANT:B_VARIANT the variants differ: each case of A_VARIANT in A against each case of
B_VARIANT in B at the same point (one side may have parameters of its own, such as a Triton peer's
block); `*` on either side is every variant of that run. That is how memlab's `auto` is held against
the PyTorch and Triton peers of the same machine, failing where it is slower than any of them:

  memlab-compare peers_copy_f16.json copy_f16.json --pair '*:auto'
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

from . import cli
from .results import Record, ResultsError, records

FLOOR_MS = 0.5e-3  # cudaEventElapsedTime's documented resolution, ~0.5 us


@dataclass
class Verdict:
    key: tuple
    a_ms: float
    b_ms: float
    ratio: float  # B / A, time
    noise: float  # relative to A
    verdict: str  # SAME, FASTER, SLOWER
    fails: bool   # SLOWER beyond the threshold too


def noise_ms(a: dict, b: dict, floor_ms: float = FLOOR_MS) -> float:
    """Both runs' interquartile ranges combined, at least the event timer's resolution."""
    iqr = [t.get("rel_spread", 0.0) * t["median_ms"] for t in (a, b)]
    return max(math.hypot(*iqr), floor_ms)


def judge(a: dict, b: dict, threshold: float, floor_ms: float = FLOOR_MS) -> tuple[float, float, str, bool]:
    """(B/A, noise relative to A, verdict, fails) for two timing summaries of one case."""
    a_ms, b_ms = a["median_ms"], b["median_ms"]
    noise = noise_ms(a, b, floor_ms)
    ratio = b_ms / a_ms
    diff = b_ms - a_ms
    if abs(diff) <= noise:
        return ratio, noise / a_ms, "SAME", False
    if diff < 0:
        return ratio, noise / a_ms, "FASTER", False
    return ratio, noise / a_ms, "SLOWER", ratio - 1.0 > threshold


@dataclass
class Outcome:
    verdicts: list
    only_a: list        # keys measured in A only
    only_b: list
    unmeasured: list    # (side, key, why): a case one run holds but did not time
    short: list         # keys left out by --min-time


def _measured(r: Record, metric: str) -> bool:
    return r.data.get("status", "ok") == "ok" and r.measured(metric)


def compare(a: list[Record], b: list[Record], metric: str = "cold", threshold: float = 0.05,
            pairs: list[tuple[str, str]] | None = None, min_ms: float = 0.0) -> Outcome:
    """Verdicts for the cases both runs measured, and what was not compared, with why."""
    if pairs:
        return _compare_pairs(a, b, metric, threshold, pairs, min_ms)
    out = Outcome([], [], [], [], [])
    index = []
    for side, rs in (("A", a), ("B", b)):
        idx = {}
        for r in rs:
            if _measured(r, metric):
                idx[r.key()] = r
            else:
                t = r.data.get(metric) or {}
                why = r.why_not() if r.data.get("status", "ok") != "ok" else \
                    f"no {metric} samples" if not t.get("samples") else f"a {metric} median of zero"
                out.unmeasured.append((side, r.key(), why))
        index.append(idx)
    index_a, index_b = index
    for key, ra in index_a.items():
        rb = index_b.get(key)
        if rb is None:
            continue
        ta, tb = ra.data[metric], rb.data[metric]
        if min(ta["median_ms"], tb["median_ms"]) < min_ms:
            out.short.append(key)
            continue
        ratio, noise, verdict, fails = judge(ta, tb, threshold)
        out.verdicts.append(Verdict(key, ta["median_ms"], tb["median_ms"], ratio, noise, verdict, fails))
    out.only_a = sorted(set(index_a) - set(index_b), key=_order)
    out.only_b = sorted(set(index_b) - set(index_a), key=_order)
    return out


def _order(key: tuple):
    return (key[0], key[1], tuple((k, (isinstance(v, str), v if not isinstance(v, str) else 0, str(v)))
                                  for k, v in key[2]))


def _same_point(pa: dict, pb: dict) -> bool:
    """One run's params are the other's plus, at most, parameters of its own (a peer's Triton block)."""
    small, large = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return all(k in large and large[k] == v for k, v in small.items())


def _compare_pairs(a, b, metric, threshold, pairs, min_ms) -> Outcome:
    out = Outcome([], [], [], [], [])
    only_a = set()
    for va, vb in pairs:
        for ra in (r for r in a if (va == "*" or r.variant == va) and _measured(r, metric)):
            matches = [rb for rb in b if rb.lab == ra.lab and _measured(rb, metric) and (vb == "*" or rb.variant == vb)
                       and rb.variant != ra.variant and _same_point(ra.params, rb.params)]
            if not matches:
                only_a.add(ra.key())
            for rb in matches:
                ta, tb = ra.data[metric], rb.data[metric]
                key = (ra.lab, f"{ra.variant} vs {rb.variant}", tuple(sorted({**ra.params, **rb.params}.items())))
                if min(ta["median_ms"], tb["median_ms"]) < min_ms:
                    out.short.append(key)
                    continue
                ratio, noise, verdict, fails = judge(ta, tb, threshold)
                out.verdicts.append(Verdict(key, ta["median_ms"], tb["median_ms"], ratio, noise, verdict, fails))
    out.only_a = sorted(only_a, key=_order)
    return out


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """'auto:*,auto:cub' -> [('auto', '*'), ('auto', 'cub')]; ValueError naming the flag otherwise."""
    pairs = []
    for item in text.split(","):
        va, sep, vb = item.partition(":")
        if not sep or not va or not vb:
            raise ValueError(f"--pair: {item!r} is not A_VARIANT:B_VARIANT (either may be *)")
        pairs.append((va, vb))
    return pairs


_UNITS = {"s": 1e3, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}


def parse_time_ms(text: str, flag: str) -> float:
    """'20us', '0.05ms', '2e-5' (seconds, as memlab's --max-time) -> milliseconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\s*", text)
    if not m:
        raise ValueError(f"{flag}: {text!r} is not a time (20us, 0.05ms, 2e-5 = seconds)")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


def _params(key: tuple) -> str:
    return " ".join(f"{k}={v}" for k, v in key[2])


def _cases(keys, limit=10) -> str:
    return "; ".join(f"{k[0]} {k[1]} {_params(k)}" for k in keys[:limit]) + (" ..." if len(keys) > limit else "")


def markdown(o: Outcome, metric: str, threshold: float, min_ms: float = 0.0) -> str:
    lines = [f"| lab | variant | params | A {metric} (ms) | B {metric} (ms) | B/A | noise | verdict |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for v in o.verdicts:
        mark = " (beyond threshold)" if v.fails else ""
        lines.append(f"| {v.key[0]} | {v.key[1]} | {_params(v.key)} | {v.a_ms:.6g} | {v.b_ms:.6g} | {v.ratio:.3f} | "
                     f"{100 * v.noise:.1f}% | {v.verdict}{mark} |")
    counts = {k: sum(v.verdict == k for v in o.verdicts) for k in ("SAME", "FASTER", "SLOWER")}
    failing = sum(v.fails for v in o.verdicts)
    lines.append("")
    lines.append(f"{len(o.verdicts)} cases compared: {counts['SAME']} same, {counts['FASTER']} faster, "
                 f"{counts['SLOWER']} slower ({failing} beyond the {100 * threshold:g}% threshold). Noise: both "
                 f"runs' interquartile ranges, at least {FLOOR_MS * 1e3:g} us (the CUDA event timer's resolution).")
    if o.short:
        lines.append(f"{len(o.short)} case(s) left out by --min-time (under {min_ms * 1e3:g} us in A or B): "
                     + _cases(o.short))
    for label, keys in (("only in A", o.only_a), ("only in B", o.only_b)):
        if keys:
            lines.append(f"{len(keys)} case(s) {label}: {_cases(keys)}")
    for side in ("A", "B"):
        why = [(k, w) for s, k, w in o.unmeasured if s == side]
        if why:
            lines.append(f"{len(why)} case(s) of {side} not timed ({metric}), so not compared: "
                         + "; ".join(f"{k[0]} {k[1]} {_params(k)} ({w})" for k, w in why[:5])
                         + (" ..." if len(why) > 5 else ""))
    return "\n".join(lines) + "\n"


def _labs(rs: list[Record]) -> str:
    labs = sorted({r.lab for r in rs})
    return ", ".join(labs) if labs else "no results"


def parser() -> cli.Parser:
    ap = cli.Parser(
        prog="memlab-compare",
        description="Compare two memlab results files case by case (same lab, variant and params): B against A, "
                    "SAME / FASTER / SLOWER judged against both runs' noise and the event timer's resolution.",
        epilog="Exit codes: 0 nothing slower beyond the threshold; 1 some case slower beyond the threshold and "
               "the noise; 2 bad input (a flag; a file that cannot be read or is not a memlab results file; two "
               "files that share no case; an --out that cannot be written).")
    ap.add_argument("a", help="the baseline results (.json)")
    ap.add_argument("b", help="the results to judge (.json)")
    ap.add_argument("--metric", choices=("cold", "batch", "graph"), default="cold", help="the timing compared")
    ap.add_argument("--threshold", type=float, default=5.0, help="percent slower that fails (default 5)")
    ap.add_argument("--min-time", default="0",
                    help="leave out cases faster than this in either run (launch-bound ones): 20us, 0.05ms, "
                         "or seconds (default 0: none)")
    ap.add_argument("--pair", help="A_VARIANT:B_VARIANT list: compare different variants (* = every variant "
                                   "of that run), e.g. '*:auto' with a peers file as A")
    ap.add_argument("--out", help="also write the Markdown table to this file")
    return ap


def _main(argv=None) -> int:
    args = parser().parse_args(argv)
    prog = "memlab-compare"
    if not (args.threshold >= 0 and math.isfinite(args.threshold)):
        return cli.fail(prog, f"--threshold: a percentage >= 0 (got {args.threshold})")
    try:
        pairs = parse_pairs(args.pair) if args.pair else None
        min_ms = parse_time_ms(args.min_time, "--min-time")
    except ValueError as e:
        return cli.fail(prog, str(e))
    try:
        a, b = records([args.a]), records([args.b])
    except ResultsError as e:
        return cli.fail(prog, str(e))
    if not {r.lab for r in a} & {r.lab for r in b}:
        return cli.fail(prog, f"{args.a} holds {_labs(a)} and {args.b} holds {_labs(b)}: no lab in common, "
                              "nothing to compare")
    o = compare(a, b, args.metric, args.threshold / 100, pairs, min_ms)
    if not o.verdicts and not o.short:
        return cli.fail(prog, f"{args.a} and {args.b} share no case with {args.metric} times "
                              f"({len(o.only_a)} only in A, {len(o.only_b)} only in B"
                              + (f", {len(o.unmeasured)} not timed" if o.unmeasured else "") + ")")
    text = markdown(o, args.metric, args.threshold / 100, min_ms)
    sys.stdout.write(text)
    if args.out:
        try:
            cli.write_text(args.out, text)
        except OSError as e:
            return cli.fail(prog, f"--out {args.out}: cannot be written ({e.strerror or e})")
    return cli.VERDICT if any(v.fails for v in o.verdicts) else cli.OK


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
