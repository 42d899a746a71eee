#!/usr/bin/env python3
"""Every Markdown file of the tree renders as its author meant: the ctest docs_markdown.

    tools/docs/check_markdown.py [--root DIR] [FILE...]     (no FILE: every *.md that git tracks)

Checks, outside code fences and code spans:
  - every code fence is closed (``` or ~~~, CommonMark's rule: a closing fence of the same character,
    at least as long, nothing after it), and none opens (```sh) inside another;
  - every table is well formed: a header row, then a delimiter row (| --- | :---: |) with as many cells,
    then rows with as many cells (a row with more cells loses them when rendered; one with fewer is
    usually a stray |); a block of |-rows without a delimiter row is a table that does not render;
  - every relative link and image ([text](path), ![alt](path), [ref]: path) names a file or folder that
    exists (an anchor after # is not checked);
  - no bare <word>: text that CommonMark reads as an HTML tag (<T>, <stages-1>, <bus id>, </x>) and GitHub
    drops because the tag is not one it renders (<br>, <sub>, <details>... are kept): write `<T>` or &lt;T&gt;.
And, code included: no page names a development issue by its number ("issue 20", "issue #20", "#20"): the pages
are for users, and the tracker's history is git's (docs/notes/history.md, the one page that points at it, is
exempt). With no FILE, no tracked file is named for an issue either (issue20_checks.py, device_issue21.sh), and
docs/notes/README.md, the engineering notes' index, links every note in docs/notes/.
Exit 1 with one line per problem (file:line: what), 0 when there is none.
"""
import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
CODE_SPAN_MULTILINE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"!?\[((?:[^\[\]\\]|\\.|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+(<[^>]*>|\S+)")
DELIMITER_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
# CommonMark's open and closing tags (raw HTML), and the tags GitHub's sanitizer keeps (the rest vanish).
HTML_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*"
                      r"(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>")
GITHUB_TAGS = set("h1 h2 h3 h4 h5 h6 br b i strong em a pre code img tt div ins del sup sub p picture source ol ul "
                  "table thead tbody tfoot tr td th blockquote dl dt dd kbd q samp var hr ruby rt rp li s strike "
                  "summary details caption figure figcaption abbr bdo cite dfn mark small span time wbr".split())
ISSUE = re.compile(r"\bissues? ?#?\d+\b|(?<![\w&#/])#\d+\b", re.I)  # "issue 20", "issues 20", "#20" (not &#20;)
ISSUE_FILE = re.compile(r"issue[_-]?\d+", re.I)
HISTORY = "docs/notes/history.md"  # the page that may point at the development history
NOTES_INDEX = "docs/notes/README.md"  # the engineering notes' index: one line a note


def cells(row):
    """The cells of a table row: split on | that is neither escaped nor inside a code span."""
    row = CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), row.strip())
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return re.split(r"(?<!\\)\|", row)


def is_row(line):
    s = line.strip()
    return s.startswith("|") and len(cells(s)) >= 1 and s.count("|") >= 2


def check_file(path, rel, root):
    problems = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as e:
        return [f"{rel}: not UTF-8 ({e.reason} at byte {e.start})"]
    prose = []  # (line number, text) outside fences
    fence = None  # (char, length, line number)
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)), n)
                continue
            prose.append((n, line))
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
            fence = None
        elif m and m.group(1)[0] == fence[0] and m.group(2).strip():
            # ```sh inside a fence opened by ``` cannot close it: the earlier fence was left open.
            problems.append(f"{rel}:{fence[2]}: a code fence that is not closed before another opens at line {n} "
                            f"({m.group(1)}{m.group(2).strip()}): what follows renders the wrong way round")
    if fence:
        problems.append(f"{rel}:{fence[2]}: a code fence ({fence[0] * fence[1]}) that never closes: the rest of the "
                        f"file renders as code")

    # Tables: runs of consecutive |-lines in prose (indented code blocks are not looked at: none in this tree).
    i = 0
    while i < len(prose):
        n, line = prose[i]
        if not is_row(line):
            i += 1
            continue
        block = [(n, line)]
        while i + 1 < len(prose) and prose[i + 1][0] == block[-1][0] + 1 and is_row(prose[i + 1][1]):
            i += 1
            block.append(prose[i])
        i += 1
        header = cells(block[0][1])
        if len(block) < 2 or not all(DELIMITER_CELL.match(c) for c in cells(block[1][1])):
            problems.append(f"{rel}:{block[0][0]}: table rows without a delimiter row (| --- |) under the header: "
                            f"they render as text")
            continue
        for n2, row in block[1:]:
            got = len(cells(row))
            if got != len(header):
                problems.append(f"{rel}:{n2}: a table row with {got} cells under a header of {len(header)}")

    if rel.replace(os.sep, "/") != HISTORY:
        for n, line in enumerate(lines, 1):
            for m in ISSUE.finditer(line):
                problems.append(f"{rel}:{n}: names a development issue ({m.group(0)!r}): say what was done or "
                                f"measured instead (history: {HISTORY})")

    # Bare <word>s, outside code spans (a \< is literal). A code span may run over the lines of a paragraph,
    # so each paragraph (consecutive non-blank prose lines) is read whole.
    paragraphs, current = [], []
    for n, line in prose:
        if line.strip() and current and current[-1][0] == n - 1:
            current.append((n, line))
        else:
            if current:
                paragraphs.append(current)
            current = [(n, line)] if line.strip() else []
    if current:
        paragraphs.append(current)
    for para in paragraphs:
        text = "\n".join(line for _, line in para)
        text = CODE_SPAN_MULTILINE.sub(lambda m: re.sub(r"[^\n]", "x", m.group(0)), text)
        for m in HTML_TAG.finditer(text):
            if m.group(1).lower() not in GITHUB_TAGS and text[m.start() - 1:m.start()] != "\\":
                n = para[0][0] + text.count("\n", 0, m.start())
                problems.append(f"{rel}:{n}: {m.group(0)} reads as an HTML tag and GitHub drops it: write "
                                f"`{m.group(0)}` or &lt;{m.group(0)[1:]}")

    # Links.
    base = os.path.dirname(path)
    for n, line in prose:
        text = CODE_SPAN.sub("", line)
        targets = [m.group(2) for m in LINK.finditer(text)]
        m = REF_DEF.match(text)
        if m:
            targets.append(m.group(1))
        for t in targets:
            t = t.strip("<>")
            if re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I) or t.startswith("#"):
                continue
            t = t.split("#", 1)[0]
            full = os.path.normpath(os.path.join(root if t.startswith("/") else base, t.lstrip("/")))
            if not os.path.exists(full):
                problems.append(f"{rel}:{n}: a link to {t}, which does not exist")
    return problems


def notes_index_problems(root, tracked):
    """docs/notes/README.md, the notes' index, links every note (every other file of docs/notes/)."""
    index = os.path.join(root, NOTES_INDEX)
    notes = sorted(p for p in tracked if p.startswith("docs/notes/") and p != NOTES_INDEX)
    if not notes:
        return []
    if not os.path.isfile(index):
        return [f"{NOTES_INDEX}: missing: the notes need an index that says what they are, one line a note"]
    with open(index, encoding="utf-8") as f:
        linked = {os.path.normpath(os.path.join("docs/notes", m.group(2).split("#")[0]))
                  for m in LINK.finditer(f.read())}
    return [f"{NOTES_INDEX}: does not list {p} (one line a note)" for p in notes if os.path.normpath(p) not in linked]


def tracked_files(root):
    """Every path git tracks under root ([] outside a git checkout)."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return []


def tracked_markdown(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "*.md"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
        return sorted(found)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    files = args.files or tracked_markdown(root)
    problems = [] if args.files else [f"{p}: a file named for an issue: name it for what it does"
                                      for p in tracked_files(root) if ISSUE_FILE.search(p)]
    if not args.files:
        problems += notes_index_problems(root, tracked_files(root))
    for f in files:
        full = f if os.path.isabs(f) else os.path.join(root, f)
        problems += check_file(full, os.path.relpath(full, root), root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_markdown: {len(problems)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"check_markdown: {len(files)} Markdown file(s): fences closed, tables well formed, links resolve, no bare "
          "<word>, no issue numbers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
