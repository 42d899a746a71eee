#!/usr/bin/env python3
"""Compare the cold medians of the same cases in two memlab.results/1 JSON files.

    tools/compare_runs.py A.json B.json [--min-n 2^26] [--tolerance 3]

Prints one line per case present in both (lab, variant, params), with the relative difference
(B - A) / A of the cold medians, and exits 1 if any case with n >= --min-n differs by more than
--tolerance percent. Standard library only.
"""
import argparse
import json
import sys


def parse_count(text):
    return 2 ** int(text[2:]) if text.startswith("2^") else int(text)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != "memlab.results/1":
        sys.exit(f"{path}: not a memlab.results/1 file")
    cases = {}
    for r in doc["results"]:
        if r.get("status", "ok") != "ok":
            continue
        key = (r["lab"], r["variant"], tuple(sorted(r["params"].items())))
        cases[key] = r
    return doc, cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-n", default="2^26", help="only cases with n >= this count toward the verdict")
    ap.add_argument("--tolerance", type=float, default=3.0, help="percent")
    args = ap.parse_args()
    _, a = load(args.a)
    _, b = load(args.b)
    min_n = parse_count(args.min_n)
    worst, failed = 0.0, []
    for key in sorted(set(a) & set(b), key=lambda k: (k[0], dict(k[2]).get("n", 0), k[1])):
        ma, mb = a[key]["cold"]["median_ms"], b[key]["cold"]["median_ms"]
        diff = 100.0 * (mb - ma) / ma
        n = dict(key[2]).get("n", 0)
        counted = n >= min_n
        if counted:
            worst = max(worst, abs(diff))
            if abs(diff) > args.tolerance:
                failed.append(key)
        params = " ".join(f"{k}={v}" for k, v in key[2] if k in ("dtype", "n"))
        print(f"{key[0]:6} {key[1]:14} {params:24} {ma:10.4f} ms {mb:10.4f} ms {diff:+7.2f}%{'' if counted else '  (below --min-n)'}")
    print(f"worst |difference| at n >= {args.min_n}: {worst:.2f}% (tolerance {args.tolerance}%); "
          f"{len(failed)} case(s) over")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
