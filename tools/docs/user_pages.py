#!/usr/bin/env python3
"""User pages say what the product does and measured, never how it was developed: the ctest docs_user_pages.

    tools/docs/user_pages.py [--root DIR] [--warn-only] [FILE...]   (no FILE: every user page)

User pages: README.md, docs/*.md, docs/labs/*.md, docs/results/README.md. Engineering notes (docs/notes/) are
where the story of a figure goes; a user page may link them. In a user page's prose (outside code fences, code
spans and link targets) these words mark a development log and fail:

    session(s); prediction(s), predicted; falsified; first run(s), first look(s); the same call; main's (library);
    the issue('s); acceptance, accepted; a bar (a threshold to meet: "the 80% bar", "met the bar"); attempt(s),
    attempted, tried; round(s) of work ("in the second round"; not a round trip, round by round, round-robin,
    rounding); a date (YYYY-MM-DD); a commit hash (7-40 hex digits with a digit and a letter)

A date or a commit hash is provenance and may stand in a table column whose header says so (commit, date,
made, built, provenance, measured) and in a paragraph or list item that cites a public source (one naming
github or a URL, or a reference list's entry "- [A] ...": "github:RRZE-HPC/gpu-benches, commit 1038c5d"). Dates and commits of memlab's own files belong in the
folders' manifests. Exit 1 with one line per word (file:line: the word: what to do), 0 when the pages are
clean; --warn-only lists them and exits 0 (while the pages are being cleaned).
"""
import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_markdown  # noqa: E402  (fences, code spans, table cells)

WORDS = [
    ("session", r"\bsessions?\b"),
    ("prediction", r"\bpredict(?:ions?|ed)\b"),
    ("falsified", r"\bfalsifie[sd]\b"),
    ("first run", r"\bfirst (?:runs?|looks?)\b"),
    ("the same call", r"\bsame[ -]call\b"),
    ("main's", r"\bmain's\b"),
    ("the issue", r"\bthe issue(?:'s)?\b"),
    ("acceptance", r"\baccept(?:ance|ed)\b"),
    ("bar", r"\bbars?\b(?! (?:from|chart|charts|per|of|are|show|shows|with)\b)(?!\s*\])"),
    ("attempt", r"\battempt(?:s|ed)?\b"),
    ("tried", r"\btried\b"),
    ("round", r"(?<!round by )(?<!round-by-)(?<!\d )\brounds?\b(?![ -](?:trips?|by|robin|once|up|down)\b)"),
    ("date", r"\b20\d\d-[01]\d-[0-3]\d\b"),
    ("commit hash", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
]
WORD_RE = [(name, re.compile(p, re.I if name not in ("commit hash",) else 0)) for name, p in WORDS]
PROVENANCE_HEADER = re.compile(r"commit|date|made|built|provenance|measured", re.I)
CITATION = re.compile(r"github|://")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")
REFERENCE_ENTRY = re.compile(r"^\s*[-*+]\s+\[[A-Z0-9]{1,3}\]")
LINK_TARGET = re.compile(r"(\]\()[^)]*(\))")
ADVICE = {
    None: "say what the product does and measured; how it was reached goes to docs/notes/",
    "date": "dates go in the folder's manifest",
    "commit hash": "commits go in the folder's manifest (a provenance column may hold one)",
}


def user_pages(root):
    pages = ["README.md"] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(root, "docs", "labs", "*.md"))) + ["docs/results/README.md"]
    return [os.path.relpath(p, root) if os.path.isabs(p) else p for p in pages
            if os.path.isfile(os.path.join(root, p))]


def prose_lines(text):
    """(line number, text) outside code fences."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = check_markdown.FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
                continue
            out.append((n, line))
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
            fence = None
    return out


def citation_lines(lines):
    """The line numbers of blocks (a paragraph or a list item) that cite a public source: one naming github or
    a URL, or a reference list's entry ("- [A] ...")."""
    found, block = set(), []

    def close():
        if block and (any(CITATION.search(t) for _, t in block) or REFERENCE_ENTRY.match(block[0][1])):
            found.update(n for n, _ in block)
        block.clear()

    for n, line in lines:
        if not line.strip() or LIST_ITEM.match(line) or (block and block[-1][0] != n - 1):
            close()
        if line.strip():
            block.append((n, line))
    close()
    return found


def check_page(path, rel):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems = []
    header = None  # the header cells of the table being read, or None
    lines = prose_lines(text)
    citing = citation_lines(lines)
    for n, line in lines:
        row = check_markdown.is_row(line)
        if row and header is None:
            header = [c.strip() for c in check_markdown.cells(line)]
        elif not row:
            header = None
        cells = check_markdown.cells(line) if row else [line]
        for i, cell in enumerate(cells):
            plain = LINK_TARGET.sub(r"\1\2", check_markdown.CODE_SPAN.sub("", cell))
            provenance = row and header is not None and i < len(header) and PROVENANCE_HEADER.search(header[i])
            for name, rx in WORD_RE:
                if name in ("date", "commit hash") and (provenance or n in citing):
                    continue
                for m in rx.finditer(plain):
                    problems.append(f"{rel}:{n}: {m.group(0)!r} ({name}): {ADVICE.get(name, ADVICE[None])}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--warn-only", action="store_true", help="list the words and exit 0")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    files = args.files or user_pages(root)
    problems = []
    for f in files:
        full = f if os.path.isabs(f) else os.path.join(root, f)
        problems += check_page(full, os.path.relpath(full, root))
    for p in problems:
        print(p)
    if problems:
        print(f"user_pages: {len(problems)} development word(s) in {len(files)} user page(s)"
              + (" (--warn-only: not failing)" if args.warn_only else ""), file=sys.stderr)
        return 0 if args.warn_only else 1
    print(f"user_pages: {len(files)} user page(s), no development words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
