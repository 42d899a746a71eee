#!/usr/bin/env python3
"""The measured results as a catalogue: docs/results/<gpu>/<lab>/, one manifest.csv per folder.

A manifest lists every file of its folder (subfolders included), one row each:

    file      the path inside the folder (plots/ladder_copy_f16.png)
    what      what the file holds, in a few words
    command   the command that made it (as run; --out names are the file's own)
    commit    the memlab commit the binary or tool was built from (7 hex digits), with "-dirty" when the tree it was
              built from had uncommitted changes (then the figures cannot be rebuilt from that commit exactly; the
              file's own header says the same, and the drift test refuses such a file as a page's headline)
    date      the day it was measured or drawn (YYYY-MM-DD)
    device    the GPU it was measured on
    pages     the pages that cite it, space-separated repository paths (docs/labs/copy.md ...)

A page cites a file by its repository path (docs/results/h100/copy/copy_f16.json) or by a Markdown link
or image that resolves to it.

    tools/docs/results_catalogue.py check [--root DIR]     the ctest docs_results_catalogue: exit 1 with one line per
                                                      problem (a file not listed, a listed file missing, a page
                                                      that does not exist or does not cite the file, a row that
                                                      disagrees with its file's own header, a docs/results path
                                                      in the tree that names nothing, a machine's path in a
                                                      committed file under docs/results: /tmp/..., /root/...,
                                                      a folder docs/results/README.md does not list)
    tools/docs/results_catalogue.py add FOLDER FILE... --page PAGE [--what TEXT] [--command TEXT]
                                                      adds or updates rows; commit, date, device and command come
                                                      from a memlab.results/1 file's header where FILE is one;
                                                      for another file, the options given, else HEAD, today,
                                                      the folder's GPU (and bash tools/docs/plots.sh for plots*/)
    tools/docs/results_catalogue.py prune FOLDER           drops the rows of files no longer in the folder
    tools/docs/results_catalogue.py scrub FILE...           rewrites the machine paths of the files in place (below)

Machine paths. A committed file records what a reader can repeat: no path of the machine that made it
(/tmp, /root, /work, /home, /opt, /mnt, /scratch). `scrub` rewrites each, touching nothing else (no number
moves): a path into a checkout (/work/main/src/labs/x.cu) becomes repository-relative (src/labs/x.cu); a
Python environment's (/opt/torch/.venv/lib/...) becomes $VIRTUAL_ENV/lib/...; any other (an --out file, a
binary, a scratch folder) becomes its base name, as the manifest's command writes it (--out copy_f16.json,
memlab run ...).
"""
import argparse
import csv
import datetime
import functools
import json
import os
import re
import subprocess
import sys

COLUMNS = ["file", "what", "command", "commit", "date", "device", "pages"]
MANIFEST = "manifest.csv"
RESULTS = os.path.join("docs", "results")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
COMMIT = re.compile(r"^[0-9a-f]{7,40}(-dirty)?$")
# [text](target) and ![alt](target), the target up to a space or the closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?\1")
# A literal path into the catalogue anywhere in the tree (not a pattern: no *, {, $ or <).
TREE_PATH = re.compile(r"docs/results/[A-Za-z0-9_.=/+-]*[A-Za-z0-9_=+-]")
# A machine's absolute path: one of these roots, not inside a longer path or a URL.
# (The character before is checked outside the expression: a look-behind first makes it ten times slower.)
MACHINE_PATH = re.compile(r"/(?:tmp|root|work|home|opt|mnt|scratch)/[^\s\"'`,;:()\[\]<>|*]*")
NOT_BEFORE_A_MACHINE_PATH = re.compile(r"[\w.~$}/-]")
REPO_TOP = ("src/", "tests/", "tools/", "include/", "python/", "docs/", "cmake/", "examples/", "references/")
TEXT_FILES = (".md", ".py", ".sh", ".cpp", ".hpp", ".cu", ".cuh", ".h", ".txt", ".cmake", ".json", ".toml")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_manifest(folder):
    with open(os.path.join(folder, MANIFEST), newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{os.path.join(folder, MANIFEST)}: columns {reader.fieldnames}, not {COLUMNS}")
        return list(reader)


def write_manifest(folder, rows):
    rows = sorted(rows, key=lambda r: (r["file"].count("/"), r["file"]))
    with open(os.path.join(folder, MANIFEST), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


@functools.lru_cache(maxsize=None)
def load_json(path):
    """A JSON file's content, or None (not JSON, not readable)."""
    if not path.endswith(".json"):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def results_header(path):
    """A memlab.results/1 file's run header as manifest fields, or None for any other file."""
    doc = load_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != "memlab.results/1":
        return None
    sha = str(doc.get("git_sha", ""))
    dirty = sha.endswith("-dirty")
    sha = sha.removesuffix("-dirty")
    return {"commit": (sha[:7] + ("-dirty" if dirty else "")) if COMMIT.match(sha) else "",
            "date": str(doc.get("created", ""))[:10],
            "device": str((doc.get("device") or {}).get("name", "")),
            "argv": doc.get("command")}


def json_git_sha(path):
    """The git_sha a JSON file records of the binary that made it (at the top, or one level down: a check
    reference's "made"), or None."""
    doc = load_json(path)
    if not isinstance(doc, dict):
        return None
    for v in [doc] + [x for x in doc.values() if isinstance(x, dict)]:
        if isinstance(v.get("git_sha"), str):
            return v["git_sha"]
    return None


def command_of(argv, name):
    """The command of a results header as a reader would type it: the program by its name, files by their base
    name, and the run's output under the file's own name (the first --out names the file; the others share its
    stem with another extension)."""
    if isinstance(argv, str):
        argv = argv.split()
    outs = [os.path.splitext(os.path.basename(argv[i + 1]))[0] for i, a in enumerate(argv[:-1]) if a == "--out"]
    stem = os.path.splitext(name)[0]
    words = []
    for i, a in enumerate(argv):
        if i == 0:
            a = {"peers.py": "memlab-peers"}.get(os.path.basename(a), os.path.basename(a))
        elif argv[i - 1] in ("--out", "--like"):
            a = os.path.basename(a)
            a_stem, ext = os.path.splitext(a)
            if argv[i - 1] == "--out" and outs and a_stem == outs[0]:
                a = stem + ext
        words.append(a)
    return " ".join(words)


def repository_path(path):
    """A machine's path as a reader can repeat it (see Machine paths in the docstring)."""
    parts = path.split("/")  # ['', 'work', 'main', 'src', ...]
    if parts[1] == "work" and len(parts) > 3:
        inside = "/".join(parts[3:])
        if inside.startswith(REPO_TOP):
            return inside
    if ".venv" in parts:
        rest = parts[parts.index(".venv") + 1:]
        return "/".join(["$VIRTUAL_ENV"] + rest)
    name = [p for p in parts if p]
    return name[-1] if name else path


def machine_path_matches(text):
    return [m for m in MACHINE_PATH.finditer(text)
            if not (m.start() and NOT_BEFORE_A_MACHINE_PATH.match(text, m.start() - 1))]


def scrub_text(text):
    out, at = [], 0
    for m in machine_path_matches(text):
        out += [text[at:m.start()], repository_path(m.group(0))]
        at = m.end()
    return "".join(out) + text[at:]


def machine_paths(text):
    """(line, path) of each machine path in a text."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in machine_path_matches(text)]


def cites(page_path, page_text, target, root):
    """Whether the page cites `target` (a path from the repository root): by that path, or by a link to it."""
    if target in page_text:
        return True
    return os.path.normpath(target) in linked_paths(page_path, page_text)


@functools.lru_cache(maxsize=None)
def linked_paths(page_path, page_text):
    """The repository paths a page's links and images resolve to."""
    page_dir = os.path.dirname(page_path)
    found = set()
    for m in LINK.finditer(CODE_SPAN.sub("", page_text)):
        link = m.group(1).split("#", 1)[0]
        if link and "://" not in link and not link.startswith("mailto:"):
            found.add(os.path.normpath(os.path.join(page_dir, link)))
    return frozenset(found)


def tree_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files]
        return found


def check(root):
    problems = []
    results = os.path.join(root, RESULTS)
    pages = {}

    def page(path):
        if path not in pages:
            full = os.path.join(root, path)
            pages[path] = read(full) if os.path.isfile(full) else None
        return pages[path]

    for entry in sorted(os.listdir(results)):
        gpu = os.path.join(results, entry)
        if not os.path.isdir(gpu):
            if entry != "README.md":
                problems.append(f"{RESULTS}/{entry}: only README.md and one folder per GPU belong here")
            continue
        for lab in sorted(os.listdir(gpu)):
            folder = os.path.join(gpu, lab)
            rel_folder = f"{RESULTS}/{entry}/{lab}"
            if not os.path.isdir(folder):
                problems.append(f"{rel_folder}: a file directly under {RESULTS}/{entry}: results go in a lab's folder")
                continue
            if not os.path.isfile(os.path.join(folder, MANIFEST)):
                problems.append(f"{rel_folder}: no {MANIFEST}")
                continue
            try:
                rows = read_manifest(folder)
            except ValueError as e:
                problems.append(str(e))
                continue
            on_disk = set()
            for d, _, files in os.walk(folder):
                on_disk |= {os.path.relpath(os.path.join(d, f), folder).replace(os.sep, "/") for f in files}
            on_disk.discard(MANIFEST)
            for f in sorted(on_disk | {MANIFEST}):
                try:
                    with open(os.path.join(folder, f), encoding="utf-8") as fh:
                        found = machine_paths(fh.read())
                except (OSError, UnicodeDecodeError):
                    continue  # a picture
                if found:
                    (line, p), more = found[0], (f", and {len(found) - 1} more" if len(found) > 1 else "")
                    problems.append(f"{rel_folder}/{f}:{line}: a machine's path ({p}{more}): record it "
                                    f"repository-relative (tools/docs/results_catalogue.py scrub)")
            listed = [r["file"] for r in rows]
            for f in sorted(on_disk - set(listed)):
                problems.append(f"{rel_folder}/{f}: not listed in {rel_folder}/{MANIFEST}")
            for f in sorted({f for f in listed if listed.count(f) > 1}):
                problems.append(f"{rel_folder}/{MANIFEST}: {f} listed more than once")
            for r in rows:
                target = f"{rel_folder}/{r['file']}"
                where = f"{rel_folder}/{MANIFEST}: {r['file']}"
                if r["file"] not in on_disk:
                    problems.append(f"{where}: listed, but no such file")
                    continue
                for col in COLUMNS:
                    if not r[col].strip():
                        problems.append(f"{where}: no {col}")
                if r["date"] and not DATE.match(r["date"]):
                    problems.append(f"{where}: date {r['date']!r} is not YYYY-MM-DD")
                if r["commit"] and not COMMIT.match(r["commit"]):
                    problems.append(f"{where}: commit {r['commit']!r} is not a commit")
                sha = json_git_sha(os.path.join(folder, r["file"]))
                if sha and sha.endswith("-dirty") and not r["commit"].endswith("-dirty"):
                    problems.append(f"{where}: commit {r['commit']!r}, but the file was made from an uncommitted "
                                    f"tree (its git_sha {sha}): the row says so with -dirty")
                header = results_header(os.path.join(folder, r["file"]))
                if header:
                    for col in ("commit", "date", "device"):
                        if header[col] and header[col] != r[col]:
                            problems.append(f"{where}: {col} {r[col]!r}, the file's header says {header[col]!r}")
                for p in r["pages"].split():
                    text = page(p)
                    if text is None:
                        problems.append(f"{where}: page {p} does not exist")
                    elif not cites(p, text, target, root):
                        problems.append(f"{where}: page {p} does not cite {target}")

    # docs/results/README.md, the catalogue's page, lists every folder (a link to its manifest or the folder).
    index = os.path.join(results, "README.md")
    if os.path.isfile(index):
        text = read(index)
        listed = set(linked_paths(RESULTS + "/README.md", text))
        for gpu in sorted(os.listdir(results)):
            if not os.path.isdir(os.path.join(results, gpu)):
                continue
            for lab in sorted(os.listdir(os.path.join(results, gpu))):
                folder = f"{RESULTS}/{gpu}/{lab}"
                if os.path.isdir(os.path.join(root, folder)) and not {folder, f"{folder}/{MANIFEST}"} & listed:
                    problems.append(f"{RESULTS}/README.md: does not list {folder} (a row linking its {MANIFEST})")

    # Every literal docs/results path in the tree names something that exists.
    for path in tree_files(root):
        if not path.endswith(TEXT_FILES) or re.match(r"docs/results/[^/]+/[^/]+/", path) or path.startswith("tests/docs/"):
            continue  # the results are records of their day; tests/docs/ makes trees of its own
        try:
            text = read(os.path.join(root, path))
        except (OSError, UnicodeDecodeError):
            continue
        for m in TREE_PATH.finditer(text):
            p = m.group(0)
            tail = text[m.end():m.end() + 1]
            if tail in ("*", "{", "$", "<") or text[m.start() - 1:m.start()] == ":":  # a pattern; a git rev:path
                continue
            if not os.path.exists(os.path.join(root, p)):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {p} does not exist")
    return problems


def head_commit(folder):
    try:
        out = subprocess.run(["git", "-C", folder, "rev-parse", "--short=7", "HEAD"], capture_output=True, check=True)
        return out.stdout.decode().strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def add(folder, files, args):
    rows = {r["file"]: r for r in read_manifest(folder)} if os.path.isfile(os.path.join(folder, MANIFEST)) else {}
    for f in files:
        name = os.path.relpath(f, folder).replace(os.sep, "/") if os.path.exists(f) else f
        full = os.path.join(folder, name)
        if not os.path.isfile(full):
            sys.exit(f"results_catalogue: {full}: no such file")
        row = rows.get(name, {c: "" for c in COLUMNS})
        row["file"] = name
        header = results_header(full)
        if header:
            row.update({k: header[k] for k in ("commit", "date", "device")})
            if header["argv"]:
                row["command"] = command_of(header["argv"], os.path.basename(name))
        for col in ("what", "command", "commit", "date", "device"):
            if getattr(args, col):
                row[col] = getattr(args, col)
        # Not a results file (a picture, a log) and not given: drawn or written now, by this tree, of the
        # folder's GPU; a picture by tools/docs/plots.sh.
        if not row["commit"]:
            row["commit"] = head_commit(folder)
        if not row["date"]:
            row["date"] = datetime.date.today().isoformat()
        if not row["device"]:
            devices = {r["device"] for r in rows.values() if r["device"]}
            row["device"] = devices.pop() if len(devices) == 1 else ""
        if not row["command"] and name.startswith("plots"):
            row["command"] = "bash tools/docs/plots.sh"
        if args.page:
            row["pages"] = " ".join(dict.fromkeys(row["pages"].split() + args.page))
        rows[name] = row
    write_manifest(folder, rows.values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what_to_do", required=True)
    c = sub.add_parser("check")
    c.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    a = sub.add_parser("add")
    a.add_argument("folder")
    a.add_argument("files", nargs="+")
    a.add_argument("--page", action="append", default=[])
    for col in ("what", "command", "commit", "date", "device"):
        a.add_argument(f"--{col}")
    p = sub.add_parser("prune")
    p.add_argument("folder")
    s = sub.add_parser("scrub")
    s.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    if args.what_to_do == "check":
        problems = check(os.path.abspath(args.root))
        for line in problems:
            print(line)
        if problems:
            print(f"results_catalogue: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print("results_catalogue: every folder's manifest matches its files and the pages that cite them")
        return 0
    if args.what_to_do == "scrub":
        for f in args.files:
            try:
                text = read(f)
            except UnicodeDecodeError:
                continue
            new = scrub_text(text)
            if new != text:
                with open(f, "w", encoding="utf-8") as out:
                    out.write(new)
                print(f"{f}: {len(machine_paths(text))} path(s)")
        return 0
    if args.what_to_do == "add":
        add(args.folder, args.files, args)
        return 0
    rows = [r for r in read_manifest(args.folder) if os.path.isfile(os.path.join(args.folder, r["file"]))]
    write_manifest(args.folder, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
