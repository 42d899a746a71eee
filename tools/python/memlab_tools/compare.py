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

A baseline written before an axis was renamed keys its cases by the old name: --rename-param
smem:stride=lane_stride (and hierarchy:stride=node_stride) reads them under the new one. A param a rung
does not read is null in today's files and "-" in older ones: both key alike.

With --race the files (one or more) are merged and memlab's own library, timed as a peer in the peers'
process (memlab-peers' memlab_copy_, memlab_transpose: library "memlab"), is held at each of its points
against the fastest record of every other library there (torch: the best of copy_ and clone; Triton: the
best block; cuBLAS, cudaMemcpy: a lab's own peers, from another process, marked so), with the same noise
and verdicts; one table per lab, a row per point, a column per library. --against narrows the libraries.
It fails where memlab's library is slower than one of them beyond the threshold:

  memlab-compare peers_copy_f16.json --race
  memlab-compare peers_transpose.json lab_f32.json lab_f16.json --race --against torch,triton,cublas
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

from . import cli
from .results import Record, ResultsError, is_memlab_library, is_peer, library_of, records

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


# ---- the race: memlab's library against the best of each other library, point by point -----------------------

@dataclass
class Entry:
    """The best record of one library at one point, and how memlab's library fares against it."""

    record: Record
    verdict: Verdict | None  # None: left out by --min-time
    other_process: bool      # from another file than memlab's record: another process


@dataclass
class RaceRow:
    contender: Record                  # memlab's library at this point
    entries: dict                      # library -> Entry


@dataclass
class Race:
    rows: list
    libraries: dict                    # lab -> the libraries raced there, in column order
    unmeasured: list                   # (record, why): memlab's or an opponent's case that was not timed
    alone: list                        # memlab's records no other library measured at the same point


LIBRARY_ORDER = ("torch", "triton")  # first, in this order; the others (cublas, memcpy, ...) by name


def _library_rank(lib: str):
    return (LIBRARY_ORDER.index(lib) if lib in LIBRARY_ORDER else len(LIBRARY_ORDER), lib)


def race(recs: list[Record], metric: str = "cold", threshold: float = 0.05, against: list[str] | None = None,
         min_ms: float = 0.0) -> Race:
    """At each point memlab's library (library "memlab") measured: the fastest record of every other library
    (peers only; `against` narrows them) at the same point, judged as in `judge` with it as A, memlab as B."""
    out = Race([], {}, [], [])
    opponents = []
    for r in recs:
        if not (is_memlab_library(r.data) or is_peer(r.data)):
            continue  # memlab's rungs (a lab run's auto) are memlab, from another process: not raced here
        if not is_memlab_library(r.data) and against is not None and library_of(r.data) not in against:
            continue
        if not _measured(r, metric):
            out.unmeasured.append((r, r.why_not() if r.data.get("status", "ok") != "ok" else f"no {metric} time"))
        elif not is_memlab_library(r.data):
            opponents.append(r)
    for c in (r for r in recs if is_memlab_library(r.data) and _measured(r, metric)):
        best = {}
        for o in opponents:
            if o.lab == c.lab and _same_point(c.params, o.params):
                lib = library_of(o.data)
                if lib not in best or o.data[metric]["median_ms"] < best[lib].data[metric]["median_ms"]:
                    best[lib] = o
        if not best:
            out.alone.append(c)
            continue
        entries = {}
        for lib, o in best.items():
            ta, tb = o.data[metric], c.data[metric]
            verdict = None
            if min(ta["median_ms"], tb["median_ms"]) >= min_ms:
                ratio, noise, v, fails = judge(ta, tb, threshold)
                verdict = Verdict(o.key(), ta["median_ms"], tb["median_ms"], ratio, noise, v, fails)
            entries[lib] = Entry(o, verdict, o.source != c.source)
        out.rows.append(RaceRow(c, entries))
        libs = out.libraries.setdefault(c.lab, [])
        libs += [lib for lib in best if lib not in libs]
    for lab in out.libraries:
        out.libraries[lab].sort(key=_library_rank)
    # Rows grouped by the axes other than the size and shape (a copy's offsets: aligned first, then 2 bytes
    # off), each group in the order the run measured it.
    out.rows.sort(key=lambda row: tuple(sorted((k, (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)))
                                               for k, v in row.contender.params.items()
                                               if k not in ("dtype", "n", "rows", "cols"))))
    return out


def _size(k: str, v) -> str:
    if k == "n" and isinstance(v, int) and v >= 1024 and v & (v - 1) == 0:
        return f"n=2^{v.bit_length() - 1}"
    return f"{k}={v}"


def _own_params(o: Record, c: Record) -> str:
    """An opponent's parameters of its own (a Triton block), which the point does not fix."""
    return " ".join(_size(k, v) for k, v in o.params.items() if k not in c.params)


def race_markdown(rc: Race, metric: str, threshold: float, min_ms: float = 0.0) -> str:
    lines = []
    for lab in sorted({row.contender.lab for row in rc.rows}):
        rows = [row for row in rc.rows if row.contender.lab == lab]
        libs = rc.libraries[lab]
        mine = sorted({row.contender.variant for row in rows})
        other = {lib for row in rows for lib, e in row.entries.items() if e.other_process}
        names = [lib + (" †" if lib in other else "") for lib in libs]
        lines.append(f"{lab}: {', '.join(mine)} (memlab's library, {metric} median) against the fastest of each "
                     "library at the same point")
        lines.append("")
        lines.append(f"| params | {' / '.join(mine)} (ms) | GB/s | "
                     + " | ".join(f"{n} (ms) | memlab/{lib}" for n, lib in zip(names, libs)) + " |")
        lines.append("| --- | ---: | ---: | " + " | ".join("---: | ---" for _ in libs) + " |")
        for row in rows:
            c = row.contender
            ms = c.data[metric]["median_ms"]
            cells = [" ".join(_size(k, v) for k, v in c.params.items()), f"{ms:.6g}",
                     f"{c.data['bytes'] / (ms * 1e-3) / 1e9:.1f}"]
            for lib in libs:
                e = row.entries.get(lib)
                if e is None:
                    cells += ["-", "-"]
                    continue
                own = _own_params(e.record, c)
                cells.append(f"{e.record.data[metric]['median_ms']:.6g} {e.record.variant}" + (f" {own}" if own else ""))
                v = e.verdict
                if v is None:
                    cells.append(f"under --min-time ({min_ms * 1e3:g} us)")
                else:
                    cells.append(f"{v.ratio:.3f} ±{100 * v.noise:.1f}% {v.verdict}"
                                 + (" (beyond threshold)" if v.fails else ""))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        for lib in libs:
            vs = [row.entries[lib].verdict for row in rows if lib in row.entries and row.entries[lib].verdict]
            counts = {k: sum(v.verdict == k for v in vs) for k in ("SAME", "FASTER", "SLOWER")}
            lines.append(f"- against {lib}: {len(vs)} point(s), memlab's library {counts['SAME']} same, "
                         f"{counts['FASTER']} faster, {counts['SLOWER']} slower ({sum(v.fails for v in vs)} beyond "
                         f"the {100 * threshold:g}% threshold)")
        lines.append("")
    lines.append(f"memlab/LIB: memlab's time over that library's fastest record at the point (below 1: memlab "
                 f"faster), ± the noise (both records' interquartile ranges, at least {FLOOR_MS * 1e3:g} us), and "
                 "the verdict. The params are memlab's record's; a library's own (a Triton block) follow its time.")
    if any(e.other_process for row in rc.rows for e in row.entries.values()):
        lines.append("† from another file than memlab's record, so another process: each process has its own "
                     "latency level (docs/notes/timing.md), so its verdicts are weaker than the same-process ones.")
    if rc.alone:
        lines.append(f"{len(rc.alone)} point(s) of memlab's library with no other library measured there: "
                     + "; ".join(f"{r.lab} {r.variant} {_params(r.key())}" for r in rc.alone[:5])
                     + (" ..." if len(rc.alone) > 5 else ""))
    if rc.unmeasured:
        lines.append(f"{len(rc.unmeasured)} case(s) not timed ({metric}), so not raced: "
                     + "; ".join(f"{r.lab} {r.variant} {_params(r.key())} ({w})" for r, w in rc.unmeasured[:5])
                     + (" ..." if len(rc.unmeasured) > 5 else ""))
    return "\n".join(lines) + "\n"


def _labs(rs: list[Record]) -> str:
    labs = sorted({r.lab for r in rs})
    return ", ".join(labs) if labs else "no results"


def parser() -> cli.Parser:
    ap = cli.Parser(
        prog="memlab-compare",
        description="Compare two memlab results files case by case (same lab, variant and params): B against A, "
                    "SAME / FASTER / SLOWER judged against both runs' noise and the event timer's resolution. With "
                    "--race: memlab's own library against every other library at each point, in one process.",
        epilog="Exit codes: 0 nothing slower beyond the threshold; 1 some case slower beyond the threshold and "
               "the noise; 2 bad input (a flag; a file that cannot be read or is not a memlab results file; two "
               "files that share no case; an --out that cannot be written).")
    ap.add_argument("files", nargs="+", metavar="FILE",
                    help="A.json B.json: the baseline results and the results to judge; with --race, one or more "
                         "files, merged")
    ap.add_argument("--metric", choices=("cold", "batch", "graph"), default="cold", help="the timing compared")
    ap.add_argument("--threshold", type=float, default=5.0, help="percent slower that fails (default 5)")
    ap.add_argument("--min-time", default="0",
                    help="leave out cases faster than this in either run (launch-bound ones): 20us, 0.05ms, "
                         "or seconds (default 0: none)")
    ap.add_argument("--pair", help="A_VARIANT:B_VARIANT list: compare different variants (* = every variant "
                                   "of that run), e.g. '*:auto' with a peers file as A")
    ap.add_argument("--race", action="store_true",
                    help="memlab's own library (memlab-peers' memlab_copy_, memlab_transpose) against the fastest "
                         "record of every other library at each of its points, in the files given")
    ap.add_argument("--against", help="with --race: the libraries to race, comma-separated (torch, triton, cublas, "
                                      "memcpy, ...; default every one in the files)")
    ap.add_argument("--rename-param", action="append", default=[], metavar="[LAB:]OLD=NEW",
                    help="in A, read the param OLD (of LAB's records only, when given) as NEW: a baseline written "
                         "before an axis was renamed (smem:stride=lane_stride, hierarchy:stride=node_stride); "
                         "repeatable")
    ap.add_argument("--out", help="also write the Markdown table to this file")
    return ap


def parse_renames(items: list[str]) -> dict[tuple, str]:
    """{("smem", "stride"): "lane_stride", (None, "x"): "y"} from ["smem:stride=lane_stride", "x=y"]; ValueError
    naming the flag for anything else."""
    out = {}
    for item in items:
        old, sep, new = item.partition("=")
        lab, colon, old = old.rpartition(":")
        if not sep or not old.strip() or not new.strip() or (colon and not lab.strip()):
            raise ValueError(f"--rename-param: {item!r} is not [LAB:]OLD=NEW")
        out[(lab.strip() or None, old.strip())] = new.strip()
    return out


def renamed(recs: list[Record], renames: dict[tuple, str]) -> list[Record]:
    """The records with their params renamed (OLD -> NEW, for LAB's records or every lab's), for a baseline
    written before a rename."""
    if not renames:
        return recs

    def name(lab, k):
        return renames.get((lab, k), renames.get((None, k), k))
    return [Record({**r.data, "params": {name(r.lab, k): v for k, v in r.params.items()}}, r.run, r.source)
            for r in recs]


def _main(argv=None) -> int:
    args = parser().parse_args(argv)
    prog = "memlab-compare"
    if not (args.threshold >= 0 and math.isfinite(args.threshold)):
        return cli.fail(prog, f"--threshold: a percentage >= 0 (got {args.threshold})")
    try:
        pairs = parse_pairs(args.pair) if args.pair else None
        min_ms = parse_time_ms(args.min_time, "--min-time")
        if args.race and args.pair:
            raise ValueError("--pair: not with --race (the race pairs memlab's library with every other library)")
        if args.against is not None and not args.race:
            raise ValueError("--against: only with --race")
        if not args.race and len(args.files) != 2:
            raise ValueError(f"takes two files, A and B ({len(args.files)} given); --race takes one or more")
        renames = parse_renames(args.rename_param)
        if renames and args.race:
            raise ValueError("--rename-param: not with --race (it renames the params of A, the baseline)")
        against = None if args.against is None else [x.strip() for x in args.against.split(",")]
        if against is not None and not all(against):
            raise ValueError(f"--against: {args.against!r} is not a comma-separated list of libraries")
    except ValueError as e:
        return cli.fail(prog, str(e))
    if args.race:
        return _main_race(args, against, min_ms)
    a_path, b_path = args.files
    try:
        a, b = renamed(records([a_path]), renames), records([b_path])
    except ResultsError as e:
        return cli.fail(prog, str(e))
    if not {r.lab for r in a} & {r.lab for r in b}:
        return cli.fail(prog, f"{a_path} holds {_labs(a)} and {b_path} holds {_labs(b)}: no lab in common, "
                              "nothing to compare")
    o = compare(a, b, args.metric, args.threshold / 100, pairs, min_ms)
    if not o.verdicts and not o.short:
        return cli.fail(prog, f"{a_path} and {b_path} share no case with {args.metric} times "
                              f"({len(o.only_a)} only in A, {len(o.only_b)} only in B"
                              + (f", {len(o.unmeasured)} not timed" if o.unmeasured else "") + ")")
    text = markdown(o, args.metric, args.threshold / 100, min_ms)
    return _write(args, text, any(v.fails for v in o.verdicts))


def _write(args, text: str, fails: bool) -> int:
    prog = "memlab-compare"
    sys.stdout.write(text)
    if args.out:
        try:
            cli.write_text(args.out, text)
        except OSError as e:
            return cli.fail(prog, f"--out {args.out}: cannot be written ({e.strerror or e})")
    return cli.VERDICT if fails else cli.OK


def _main_race(args, against, min_ms) -> int:
    prog = "memlab-compare"
    try:
        recs = records(args.files)
    except ResultsError as e:
        return cli.fail(prog, str(e))
    files = " ".join(args.files)
    if not any(is_memlab_library(r.data) for r in recs):
        return cli.fail(prog, f"{files}: no record of memlab's own library (library \"memlab\": memlab-peers' "
                              "memlab_copy_, memlab_transpose), nothing to race")
    rc = race(recs, args.metric, args.threshold / 100, against, min_ms)
    if not rc.rows:
        others = sorted({library_of(r.data) for r in recs if is_peer(r.data) and not is_memlab_library(r.data)})
        return cli.fail(prog, f"{files}: memlab's library has no point where another library"
                              + (f" ({', '.join(against)})" if against is not None else "")
                              + f" was timed ({args.metric}) too (libraries in the files: "
                              + (", ".join(others) or "none") + f"; {len(rc.unmeasured)} case(s) not timed)")
    text = race_markdown(rc, args.metric, args.threshold / 100, min_ms)
    fails = any(e.verdict and e.verdict.fails for row in rc.rows for e in row.entries.values())
    return _write(args, text, fails)


def main(argv=None) -> int:
    return cli.run(_main, argv)


if __name__ == "__main__":
    sys.exit(main())
