#!/usr/bin/env python3
"""Keeps the ladders the docs show equal to the labs' tables.

Each lab's page, docs/labs/<lab>.md, holds its ladder as `memlab list <lab> --format md` prints it,
between two markers:

    <!-- memlab list copy --format md: generated from the lab's table by tools/docs/update_ladders.py -->
    | rung | what it teaches | needs | peer |
    ...
    <!-- end of memlab list copy -->

Any other Markdown file of the tree (README.md, src/labs/<lab>/README.md) may hold such a block too.

    tools/docs/update_ladders.py                      check (the ctest docs_ladders): print what differs, exit 1
    tools/docs/update_ladders.py --write              rewrite every block; add one to a lab page without it
                                                 (under its "## The ladder" heading, else as that section)
    --memlab PATH                                the memlab to ask (default: build/default/bin/memlab)

Only the labs the binary was built with are checked (`memlab list --format json`).
"""
import argparse
import difflib
import json
import pathlib
import re
import subprocess
import sys

BEGIN = "<!-- memlab list {lab} --format md: generated from the lab's table by tools/docs/update_ladders.py -->"
END = "<!-- end of memlab list {lab} -->"
BLOCK = re.compile(r"<!-- memlab list (?P<lab>[a-z0-9_]+) --format md[^\n]*-->\n(?P<body>.*?)<!-- end of memlab list (?P=lab) -->",
                   re.S)


def memlab(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def block(lab, table):
    return f"{BEGIN.format(lab=lab)}\n{table}{END.format(lab=lab)}"


def with_block_added(text, lab, table):
    """The page with a ladder block under its '## The ladder' heading, else as a new section before
    its first second-level heading, else at its end."""
    new = block(lab, table)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "## The ladder":
            return "\n".join(lines[:i + 1] + ["", new] + lines[i + 1:])
    for i, line in enumerate(lines):
        if i > 0 and line.startswith("## "):
            return "\n".join(lines[:i] + ["## The ladder", "", new, ""] + lines[i:])
    return text.rstrip("\n") + f"\n\n## The ladder\n\n{new}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memlab", default="build/default/bin/memlab")
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[2]))
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    labs = [entry["name"] for entry in json.loads(memlab(a.memlab, "list", "--format", "json"))["labs"]]
    tables = {lab: memlab(a.memlab, "list", lab, "--format", "md") for lab in labs}

    pages = {root / "docs" / "labs" / f"{lab}.md" for lab in labs}
    pages |= {p for p in root.glob("*.md")} | set(root.glob("src/labs/*/README.md")) | set(root.glob("docs/**/*.md"))
    problems = []
    for page in sorted(p for p in pages if p.exists()):
        text = page.read_text()
        rel = page.relative_to(root)

        def fresh(m):
            lab = m.group("lab")
            if lab not in tables:
                return m.group(0)  # a lab this binary was built without: left as it is
            if m.group("body") != tables[lab]:
                problems.append((rel, lab, m.group("body"), tables[lab]))
            return block(lab, tables[lab])

        new = BLOCK.sub(fresh, text)
        lab = page.stem
        if page.parent == root / "docs" / "labs" and lab in tables and not any(
                m.group("lab") == lab for m in BLOCK.finditer(text)):
            problems.append((rel, lab, "", tables[lab]))
            new = with_block_added(new, lab, tables[lab])
        if a.write and new != text:
            page.write_text(new)
            print(f"rewrote {rel}")
    if a.write:
        return 0
    for rel, lab, old, want in problems:
        if not old:
            print(f"{rel}: no ladder block for {lab}")
        else:
            print(f"{rel}: the ladder of {lab} differs from its table:")
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), want.splitlines(True), f"{rel}", f"memlab list {lab} --format md"))
    if problems:
        print(f"\n{len(problems)} ladder block(s) out of date: run tools/docs/update_ladders.py --memlab {a.memlab} --write")
        return 1
    print(f"ladders of {len(tables)} lab(s) match their tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
