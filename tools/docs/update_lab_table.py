#!/usr/bin/env python3
"""Keeps tools/python/memlab_tools/labs.json equal to what `memlab list --format json` prints.

The Python tools (memlab-plot, memlab-peers, memlab-compare) take every lab's rungs, peers, roofs, axes,
units, dtypes and the grammar's constants from that file (memlab_tools/table.py), so that none keeps a list
of its own; it is committed so that they run without a memlab binary.

    tools/docs/update_lab_table.py             check (the ctest lab_table_current): print what differs, exit 1
    tools/docs/update_lab_table.py --write     rewrite labs.json from the binary
    --memlab PATH                         the memlab to ask (default: build/default/bin/memlab)

A binary built with fewer labs (-DMEMLAB_ONLY_LABS) or without an optional dependency (a lab's
`built_without`: its rungs that need it are missing) checks what it has: each of its labs against the
file's entry, its rungs in the file's order; --write then refuses, since it would drop what it lacks.
"""
import argparse
import difflib
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "tools" / "python" / "memlab_tools" / "labs.json"


def dump(doc) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def partial(doc) -> list[str]:
    """Why the binary's table is not the whole table (labs built without something); [] when it is."""
    return [f"{entry['name']}: built without {entry['built_without']}" for entry in doc["labs"]
            if entry.get("built_without")]


def differences(built: dict, committed: dict) -> list[str]:
    """What the committed table says otherwise than the binary, as unified diffs; [] when it agrees."""
    out = []
    theirs = {k: v for k, v in committed.items() if k != "labs"}
    ours = {k: v for k, v in built.items() if k != "labs"}
    if ours != theirs:
        out.append("".join(difflib.unified_diff(dump(theirs).splitlines(True), dump(ours).splitlines(True),
                                                "labs.json (header)", "memlab list --format json (header)")))
    committed_labs = {entry["name"]: entry for entry in committed["labs"]}
    for entry in built["labs"]:
        mine = dict(entry)
        theirs = committed_labs.get(mine["name"])
        if theirs is None:
            out.append(f"lab {mine['name']}: not in labs.json\n")
            continue
        if mine.pop("built_without", ""):
            # Rungs that need what this binary lacks are missing: compare the rest, in the file's order.
            names = {v["name"] for v in mine["variants"]}
            theirs = dict(theirs, variants=[v for v in theirs["variants"] if v["name"] in names])
        if mine != theirs:
            out.append("".join(difflib.unified_diff(dump(theirs).splitlines(True), dump(mine).splitlines(True),
                                                    f"labs.json ({mine['name']})",
                                                    f"memlab list --format json ({mine['name']})")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memlab", default=str(ROOT / "build" / "default" / "bin" / "memlab"))
    ap.add_argument("--table", default=str(TABLE), help=argparse.SUPPRESS)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    built = json.loads(subprocess.run([a.memlab, "list", "--format", "json"], check=True, capture_output=True,
                                      text=True).stdout)
    table = pathlib.Path(a.table)
    if a.write:
        try:
            lost = sorted({e["name"] for e in json.loads(table.read_text(encoding="utf-8"))["labs"]}
                          - {e["name"] for e in built["labs"]})
        except (OSError, ValueError, KeyError):
            lost = []
        if lost:
            print(f"update_lab_table: not written: the binary has no lab {', '.join(lost)} (built with "
                  "-DMEMLAB_ONLY_LABS?); build every lab", file=sys.stderr)
            return 1
        if partial(built):
            print("update_lab_table: not written: the binary's table is partial (" + "; ".join(partial(built))
                  + "); build every lab with its dependencies", file=sys.stderr)
            return 1
        table.write_text(dump(built), encoding="utf-8")
        print(f"wrote {table}")
        return 0
    try:
        committed = json.loads(table.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"update_lab_table: {table}: {e}", file=sys.stderr)
        return 1
    diffs = differences(built, committed)
    for d in diffs:
        sys.stdout.write(d)
    if diffs:
        print(f"update_lab_table: {table} is not what `memlab list --format json` prints: "
              "run tools/docs/update_lab_table.py --write", file=sys.stderr)
        return 1
    missing = sorted({entry["name"] for entry in committed["labs"]} - {entry["name"] for entry in built["labs"]})
    print(f"labs.json agrees with {a.memlab}" + (f" (not built here, not checked: {', '.join(missing)})"
                                                    if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
