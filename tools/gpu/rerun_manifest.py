#!/usr/bin/env python3
"""Measures a results folder's files again from the commands its manifest records, on a GPU machine.

    tools/gpu/rerun_manifest.py --bin build/dev/bin/memlab --work DIR [--dirty] [--only FILE,...]
                                [--pack OUT.tgz] [--dry-run] FOLDER...

Each manifest row (tools/docs/results_catalogue.py) names the file, the command that made it and the commit it was
made from. This runs a row's command again with the memlab binary given, in DIR/<gpu>/<lab>/ (the folder's own
path below docs/results), so the new files carry the binary's commit and can replace the old ones:

  - rows are chosen by --only (file names) or --dirty (rows made from an uncommitted tree, commit "...-dirty"),
    else every row;
  - a command runs when `memlab` is one of its words (`memlab run ...`, `time memlab run ...`,
    `compute-sanitizer ... memlab run ...`) and it holds no placeholder (`<...>`, `...`, WORK, RES, DIR); the others
    (other tools, scripts, pictures) are listed as not rerun, with why;
  - a command shared by several rows (a run's .json, its .md and its timed .log) runs once; a row's file that the
    command does not write with --out is the command's output (stdout and stderr), as the .log rows are;
  - each command's exit status and seconds go to DIR/rerun.txt, and with --pack the whole DIR is packed into a
    .tgz after every command, so a call stopped at its time limit keeps what finished.

Back on the development machine, copy the files over the committed ones, then `tools/docs/results_catalogue.py
scrub` and `add` (the manifest's commit and date from each results file's own header). Exit 0 when every command
that ran exited 0, else 1; 2 for bad input.
"""
import argparse
import csv
import os
import re
import shlex
import subprocess
import sys
import tarfile
import time

PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\b(?:WORK|RES|DIR)\b")


def rows_of(folder, only, dirty):
    with open(os.path.join(folder, "manifest.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if only:
        return [r for r in rows if r["file"] in only]
    if dirty:
        return [r for r in rows if r["commit"].endswith("-dirty")]
    return rows


def runnable(command):
    """Why `command` cannot be rerun as written, or None when it can."""
    words = command.split()
    if "memlab" not in words:
        return "not a memlab command"
    if PLACEHOLDER.search(command):
        return "holds a placeholder"
    if re.search(r"(^|\s)[A-Z_]+=\S+", command):
        return "sets an environment of its own"
    return None


def outs_of(words):
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--out"]


def pack(work, path):
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w:gz") as t:
        t.add(work, arcname=".")
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("folders", nargs="+", metavar="FOLDER", help="docs/results/<gpu>/<lab> folders")
    ap.add_argument("--bin", required=True, help="the memlab binary to measure with")
    ap.add_argument("--work", required=True, help="where the new files go (DIR/<gpu>/<lab>/)")
    ap.add_argument("--only", default="", help="comma-separated file names to remeasure")
    ap.add_argument("--dirty", action="store_true", help="the rows made from an uncommitted tree")
    ap.add_argument("--pack", help="a .tgz of DIR written after every command")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a command may take (300)")
    ap.add_argument("--dry-run", action="store_true", help="list what would run")
    a = ap.parse_args(argv)
    binary = os.path.abspath(a.bin)
    if not a.dry_run and not os.access(binary, os.X_OK):
        print(f"rerun_manifest: --bin {a.bin}: not an executable file", file=sys.stderr)
        return 2
    only = {x for x in a.only.split(",") if x}
    plan = []  # (folder, command, [rows])
    for folder in a.folders:
        if not os.path.isfile(os.path.join(folder, "manifest.csv")):
            print(f"rerun_manifest: {folder}: no manifest.csv", file=sys.stderr)
            return 2
        for r in rows_of(folder, only, a.dirty):
            command = r["command"].removeprefix("time ")  # a timed twin of a run is the same run
            for p in plan:
                if p[0] == folder and p[1] == command:
                    p[2].append(r)
                    break
            else:
                plan.append((folder, command, [r]))
    os.makedirs(a.work, exist_ok=True)
    log = open(os.path.join(a.work, "rerun.txt"), "a", encoding="utf-8")

    def say(line):
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    failed = 0
    for folder, command, rows in plan:
        files = ", ".join(r["file"] for r in rows)
        why = runnable(command)
        if why:
            say(f"not rerun  {folder}: {files}: {why}: {command}")
            continue
        rel = os.path.relpath(os.path.abspath(folder), os.path.abspath(os.path.join("docs", "results")))
        dest = os.path.join(a.work, rel)
        os.makedirs(dest, exist_ok=True)
        words = [binary if w == "memlab" else w for w in shlex.split(command)]
        written = {os.path.basename(o) for o in outs_of(words)}
        # A results file its command printed as a table (no --out) is written with --out now: same run, same file.
        for r in rows:
            if r["file"].endswith((".json", ".md", ".csv")) and os.path.basename(r["file"]) not in written \
                    and "run" in words and not r["file"].startswith("ncu"):
                words += ["--out", os.path.basename(r["file"])]
                written.add(os.path.basename(r["file"]))
        captured = [r["file"] for r in rows if os.path.basename(r["file"]) not in written]
        if a.dry_run:
            say(f"would run  {folder}: {files}: {shlex.join(words)}")
            continue
        t0 = time.monotonic()
        try:
            p = subprocess.run(words, cwd=dest, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=a.timeout)
            rc, output = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, output = 124, e.stdout or b""
        seconds = time.monotonic() - t0
        for name in captured:
            os.makedirs(os.path.dirname(os.path.join(dest, name)) or dest, exist_ok=True)
            with open(os.path.join(dest, name), "wb") as f:
                if any(r["command"].startswith("time ") and r["file"] == name for r in rows):
                    output += f"\nreal {seconds:.1f} s\n".encode()
                f.write(output)
        failed += rc != 0
        say(f"rc={rc:<3} {seconds:6.1f} s  {folder}: {files}")
        if a.pack:
            pack(a.work, a.pack)
    log.close()
    if a.pack and not a.dry_run:
        pack(a.work, a.pack)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
