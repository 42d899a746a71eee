#!/usr/bin/env python3
"""Compares the SASS of two binaries (or two saved `cuobjdump -sass` listings) kernel by kernel.

  tools/gpu/sass_diff.py OLD NEW [--arch sm_90] [--rename OLD_NAME=NEW_NAME ...]

Kernels are matched by mangled name, with the hash that nvcc puts in anonymous-namespace names
(it changes when a file moves) normalised away. A kernel only one side has by name is then matched by
its instructions: one of the old side's and one of the new side's with identical SASS are a rename (a
template argument or namespace that changed, not the code), reported as such and not a difference;
--rename pairs two names outright. Prints the renames, the kernels only one side has, the kernels whose
instructions differ (with how many lines), and the number of SASS lines compared; exits 1 on any
difference other than a rename.
"""
import argparse
import re
import subprocess
import sys

# Names that change with the build, not the code: nvcc's anonymous namespaces carry the file and a
# hash of it; CUB's versioned namespace carries the list of targeted archs. Each is one mangled
# <length><identifier>, replaced by a placeholder.
VOLATILE = re.compile(r"(\d+)(?=_GLOBAL__N_|CUB_\d)")


def normalise(name):
    out, i = [], 0
    for m in VOLATILE.finditer(name):
        if m.start() < i:
            continue
        length = int(m.group(1))
        out.append(name[i:m.start()])
        out.append("_ANON_" if name.startswith("_GLOBAL", m.end()) else "_CUB_")
        i = m.end() + length
    out.append(name[i:])
    return "".join(out)


def listing(path, arch, cuobjdump):
    if path.endswith(".txt"):
        return open(path).read()
    return subprocess.run([cuobjdump, "-sass", "-arch", arch, path], check=True, capture_output=True, text=True).stdout


def kernels(text):
    out, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            if name:
                out[name] = body
            name, body = normalise(m.group(1)), []
            continue
        if name and re.match(r"\s*/\*[0-9a-f]{4,}\*/", line):
            body.append(re.sub(r"\s+", " ", line.split("*/", 1)[1].split("/*")[0].strip()))
    if name:
        out[name] = body
    return out


def match_renames(old, new):
    """Pairs the kernels only `old` has by name with those only `new` has whose SASS is identical: [(old name, new
    name)], each kernel in one pair at most (several of one body: paired in name order)."""
    by_body = {}
    for k in sorted(set(new) - set(old)):
        by_body.setdefault(tuple(new[k]), []).append(k)
    pairs = []
    for k in sorted(set(old) - set(new)):
        same = by_body.get(tuple(old[k]))
        if same:
            pairs.append((k, same.pop(0)))
    return pairs


def differing_lines(a, b):
    """Lines of two bodies that differ, position by position (a length difference counts in full)."""
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--rename", action="append", default=[], help="OLD=NEW: a kernel renamed on purpose")
    a = ap.parse_args()
    old, new = kernels(listing(a.old, a.arch, a.cuobjdump)), kernels(listing(a.new, a.arch, a.cuobjdump))
    for r in a.rename:
        o, n = r.split("=", 1)
        o, n = normalise(o), normalise(n)
        if o in old:
            old[n] = old.pop(o)
    renamed = match_renames(old, new)
    for o, n in renamed:
        print(f"renamed, SASS identical ({len(old[o])} lines): {o} -> {n}")
        new[o] = new.pop(n)
    only_old, only_new = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    changed = [k for k in sorted(set(old) & set(new)) if old[k] != new[k]]
    lines = sum(len(old[k]) for k in set(old) & set(new))
    for k in only_old:
        print("only in old:", k)
    for k in only_new:
        print("only in new:", k)
    for k in changed:
        print(f"changed ({differing_lines(old[k], new[k])} of {len(old[k])} lines -> {len(new[k])}): {k}")
    print(f"{len(set(old) & set(new))} kernels in both ({len(renamed)} of them renamed), {lines} SASS lines compared; "
          f"{len(changed)} changed, {len(only_old)} only in old, {len(only_new)} only in new")
    return 1 if (only_old or only_new or changed) else 0


if __name__ == "__main__":
    sys.exit(main())
