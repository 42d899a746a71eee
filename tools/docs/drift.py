#!/usr/bin/env python3
"""Every number a user page quotes is the number its committed file holds: the ctest docs_drift.

    tools/docs/drift.py [--root DIR] [CLAIMS.toml...]     (no file: every docs/claims/*.toml)
    tools/docs/drift.py --dirty [--root DIR]               lists the claims whose file came from an uncommitted tree

A page's claims live in docs/claims/<page>.toml, <page> being the page's path with "/" written "__" and no
".md" (README.toml, docs__check.toml, docs__labs__copy.toml). Each claim is a [[claim]] table:

    quote   text exactly as it appears on the page (Markdown source), holding the figure
    file    the committed file the figure comes from; the page must cite it (its path, or a link to it)
    one extractor:
      select = { variant = "auto", "params.n" = 2147483648 }   records whose fields (dotted paths) equal these;
      field = "cold.median_us"                                 the figure's dotted path in the record. Records:
                                                               "results" (memlab.results), "rows" (memlab.check),
                                                               a top-level list, or the dotted path `records`
      regex = 'ceiling\\s+([0-9.]+) GB/s'   a text file: the first capture group of the first match
      csv = { where = { size = "4GiB" }, column = "gbps" }   a CSV file (lines before its header skipped)
      json_path = "rows.3.value"           any JSON file: a dotted path from the top; integers index lists
      expr = "a / b * 100"                 (no file) arithmetic over the values of named claims of this file
    format  a Python format for the value ("{:.1f}"; default "{}": a value that is not a number, such as a
            version "580.159.04", is then quoted as the text it is)
    scale   multiplies the value first (optional; 1e-3, 1000)
    name    names the value for an expr (optional); a claim with a name and no quote only defines a value
            (a figure the page does not print, such as the two sides of a ratio it does)
    headline = false    (optional) says the figure is not one of the page's headline figures: a claim that says
                        so may come from a file made from an uncommitted tree (below)
    remeasure = "..."   (optional) a headline figure from such a file, waiting for its measurement from a commit:
                        the command or script that makes it. Listed as pending (the check still holds the value),
                        not failed; a claim that says it of a file made from a commit fails (the flag is stale)

A claim holds when: the page contains `quote`; the page cites `file`; the extractor finds exactly one value
(several matching records must agree); and the value, scaled and formatted, is one of the numbers in `quote`
(a whole number there: "90.5" is not found in "190.5" nor in "90.55", "1.0" not in "-1.0" but in "+1.0" and
"0.6-1.0"; a Unicode minus reads as "-"). A quote
with two figures carries two claims. A file made from an uncommitted tree is one whose manifest row's commit
ends in "-dirty" (docs/results), or a JSON file whose git_sha (top level, or one level down) does: a headline
figure must not come from one, so such a claim fails unless it says `headline = false` (or, pending, `remeasure`).
Also fails: a claims file whose page does not exist, a claim without quote, an unknown key, two extractors.
Exit 1 with one line per problem (claims file:claim number: what), 0 when every claim holds.
"""
import argparse
import ast
import csv
import functools
import glob
import io
import json
import operator
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_catalogue  # noqa: E402  (how a page cites a file; the manifests)

CLAIMS = os.path.join("docs", "claims")
EXTRACTORS = ("field", "regex", "csv", "json_path", "expr")
KEYS = {"quote", "file", "select", "records", "format", "scale", "name", "headline", "remeasure"} | set(EXTRACTORS)


class Problem(Exception):
    pass


def page_of(claims_path):
    """docs/claims/docs__labs__copy.toml -> docs/labs/copy.md"""
    return os.path.splitext(os.path.basename(claims_path))[0].replace("__", "/") + ".md"


@functools.lru_cache(maxsize=None)
def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def read_json(path):
    try:
        return json.loads(read_text(path))
    except ValueError as e:
        raise Problem(f"{path} is not JSON ({e})")


def dotted(obj, path):
    """obj's value at a dotted path ("cold.median_us", "rows.3.value"); a missing step raises Problem."""
    for step in str(path).split("."):
        if isinstance(obj, list) and re.fullmatch(r"-?\d+", step):
            i = int(step)
            if not -len(obj) <= i < len(obj):
                raise Problem(f"no item {step} in a list of {len(obj)} (path {path!r})")
            obj = obj[i]
        elif isinstance(obj, dict) and step in obj:
            obj = obj[step]
        else:
            raise Problem(f"no {step!r} (path {path!r})")
    return obj


def same(a, b):
    """A select value equals a record's: numbers by value (2147483648 == 2147483648.0), anything else as text."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or str(a).lower() == str(b).lower()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return str(a) == str(b)


def to_number(v):
    if isinstance(v, bool):
        raise Problem(f"the value {v!r} is not a number")
    if isinstance(v, (int, float)):
        return v
    text = str(v).replace(",", "").strip()
    try:
        return int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)
    except ValueError:
        raise Problem(f"the value {v!r} is not a number")


def records_of(doc, claim):
    if "records" in claim:
        recs = dotted(doc, claim["records"])
    elif isinstance(doc, list):
        recs = doc
    elif isinstance(doc, dict) and isinstance(doc.get("results"), list):
        recs = doc["results"]
    elif isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        recs = doc["rows"]
    else:
        raise Problem("no records in the file (no results or rows list): give records = \"dotted.path\"")
    if not isinstance(recs, list):
        raise Problem(f"records {claim.get('records')!r} is not a list")
    return recs


def extract_select(path, claim):
    recs = records_of(read_json(path), claim)
    sel = claim.get("select", {})
    found = []
    for r in recs:
        try:
            if all(same(dotted(r, k), v) for k, v in sel.items()):
                found.append(dotted(r, claim["field"]))
        except Problem:
            continue
    if not found:
        raise Problem(f"no record with {sel} has {claim['field']!r}")
    if any(not same(f, found[0]) for f in found[1:]):
        raise Problem(f"{len(found)} records match {sel} and their {claim['field']!r} differ "
                      f"({', '.join(map(str, found[:4]))}): select more fields")
    return found[0]


def extract_regex(path, claim):
    m = re.search(claim["regex"], read_text(path), re.M)
    if not m:
        raise Problem(f"regex {claim['regex']!r} finds nothing in {path}")
    if not m.groups():
        raise Problem(f"regex {claim['regex']!r} has no capture group")
    return m.group(1)


def extract_csv(path, claim):
    spec = claim["csv"]
    if not isinstance(spec, dict) or "column" not in spec:
        raise Problem("csv = { where = {...}, column = \"...\" }")
    where, column = spec.get("where", {}), spec["column"]
    lines = read_text(path).splitlines()
    want = set(where) | {column}
    for i, line in enumerate(lines):  # the header: the first line that names every column the claim uses
        header = next(csv.reader([line]), [])
        if want <= set(header):
            break
    else:
        raise Problem(f"no header line in {path} names {sorted(want)}")
    found = [row[column] for row in csv.DictReader(io.StringIO("\n".join(lines[i:])))
             if all(cell_is(row.get(k), v) for k, v in where.items())]
    if not found:
        raise Problem(f"no row of {path} with {where}")
    if any(f != found[0] for f in found[1:]):
        raise Problem(f"{len(found)} rows of {path} match {where} with different {column!r}: narrow where")
    return found[0]


def cell_is(cell, v):
    """A CSV cell equals a where value: text as text (stripped), a number by value ("1,024" == 1024)."""
    if cell is None:
        return False
    if isinstance(v, str):
        return cell.strip() == v
    try:
        return float(cell.replace(",", "")) == float(v)
    except ValueError:
        return False


SAFE = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCS = {"abs": abs, "min": min, "max": max, "round": round}


def evaluate(expr, names):
    """Arithmetic over named values: + - * / **, unary -, numbers, names, abs/min/max/round."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise Problem(f"expr names {node.id!r}, which no claim of this file names (or it failed)")
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in SAFE:
            return SAFE[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in SAFE:
            return SAFE[type(node.op)](ev(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCS:
            return FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise Problem(f"expr {expr!r}: only arithmetic over claim names")
    try:
        return ev(ast.parse(expr, mode="eval"))
    except SyntaxError as e:
        raise Problem(f"expr {expr!r}: {e.msg}")
    except ZeroDivisionError:
        raise Problem(f"expr {expr!r} divides by zero")


def quoted(formatted, quote):
    """Whether `formatted` (a number as the format wrote it) is a whole number of `quote`."""
    q = quote.replace("\u2212", "-")
    f = formatted.strip().replace("\u2212", "-")
    for m in re.finditer(re.escape(f), q):
        before, after = q[m.start() - 1:m.start()], q[m.end():m.end() + 2]
        if before and (before.isdigit() or before in ".,"):
            continue
        if before == "-" and f[:1].isdigit() and not q[m.start() - 2:m.start() - 1].isdigit():
            continue  # "-1.0" is another number than "1.0"; "0.6-1.0" is a range that holds 1.0; "+1.0" is 1.0
        if after[:1].isdigit() or (after[:1] in ".," and after[1:2].isdigit()):
            continue
        return True
    return False


@functools.lru_cache(maxsize=None)
def manifest_rows(folder):
    try:
        return {r["file"]: r for r in results_catalogue.read_manifest(folder)}
    except (OSError, ValueError):
        return {}


def uncommitted_tree(root, rel):
    """Why `rel` counts as made from an uncommitted tree, or None."""
    full = os.path.join(root, rel)
    parts = rel.replace(os.sep, "/").split("/")
    if parts[:2] == ["docs", "results"] and len(parts) > 4:
        folder = os.path.join(root, *parts[:4])
        row = manifest_rows(folder).get("/".join(parts[4:]))
        if row and row["commit"].endswith("-dirty"):
            return f"its manifest row says commit {row['commit']}"
    if rel.endswith(".json"):
        try:
            doc = read_json(full)
        except Problem:
            return None
        if isinstance(doc, dict):
            for v in [doc] + [x for x in doc.values() if isinstance(x, dict)]:
                sha = v.get("git_sha")
                if isinstance(sha, str) and sha.endswith("-dirty"):
                    return f"its git_sha is {sha}"
    return None


def check_claims(root, claims_path, pending=None):
    """The problems of one claims file; claims waiting for a re-measurement are appended to `pending`."""
    rel_claims = os.path.relpath(claims_path, root)
    page = page_of(claims_path)
    page_full = os.path.join(root, page)
    if not os.path.isfile(page_full):
        return [f"{rel_claims}: names the page {page}, which does not exist"]
    try:
        with open(claims_path, "rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        return [f"{rel_claims}: not TOML ({e})"]
    claims = doc.get("claim", [])
    if set(doc) - {"claim"}:
        return [f"{rel_claims}: only [[claim]] tables belong here, not {sorted(set(doc) - {'claim'})}"]
    if not claims:
        return [f"{rel_claims}: no [[claim]]"]
    text = read_text(page_full)
    problems, names = [], {}
    for n, c in enumerate(claims, 1):
        where = f"{rel_claims}:claim {n} ({str(c.get('quote', c.get('name', '')))[:60]!r})"
        try:
            waiting = []
            names_value = check_claim(root, page, text, c, names, waiting)
            if pending is not None:
                pending += [f"{page}: {str(c.get('quote', c.get('name')))[:60]!r} from {w}" for w in waiting]
            if "name" in c:
                names[c["name"]] = names_value
        except Problem as e:
            problems.append(f"{where}: {e}")
    return problems


def check_claim(root, page, text, c, names, pending=None):
    unknown = set(c) - KEYS
    if unknown:
        raise Problem(f"unknown key(s) {sorted(unknown)}")
    definition = "quote" not in c and "name" in c  # a value named for an expr, not quoted itself
    if not definition and (not isinstance(c.get("quote"), str) or not c["quote"]):
        raise Problem("no quote (a claim without one only names a value for an expr: give it a name)")
    kinds = [k for k in EXTRACTORS if k in c]
    if len(kinds) != 1:
        raise Problem(f"one extractor ({', '.join(EXTRACTORS)}), not {kinds or 'none'}")
    kind = kinds[0]
    if ("select" in c or "records" in c) and kind != "field":
        raise Problem("select and records go with field")
    if not definition and c["quote"] not in text:
        raise Problem(f"{page} does not contain the quote")
    if kind == "expr":
        if "file" in c:
            raise Problem("an expr claim names no file (its names do)")
        value = evaluate(c["expr"], names)
    else:
        rel = c.get("file")
        if not isinstance(rel, str) or not rel:
            raise Problem("no file")
        full = os.path.join(root, rel)
        if not os.path.isfile(full):
            raise Problem(f"{rel} does not exist")
        if not results_catalogue.cites(page, text, rel, root):
            raise Problem(f"{page} does not cite {rel} (its path, or a link to it)")
        why = uncommitted_tree(root, rel)
        if why and c.get("headline", True) is not False and "remeasure" not in c:
            raise Problem(f"{rel} was made from an uncommitted tree ({why}): a headline figure needs a file made "
                          f"from a commit (measure again), or say headline = false")
        if "remeasure" in c and not why:
            raise Problem(f"remeasure, but {rel} was made from a commit: drop the flag")
        if why and "remeasure" in c and pending is not None:
            pending.append(f"{rel} ({why}): {c['remeasure']}")
        value = {"field": extract_select, "regex": extract_regex, "csv": extract_csv,
                 "json_path": lambda p, cl: dotted(read_json(p), cl["json_path"])}[kind](full, c)
    try:
        value = to_number(value)
    except Problem:
        if "scale" in c or "format" in c or not isinstance(value, str):
            raise
        value = value.strip()  # a version or a name ("580.159.04"): quoted whole, as text
    if "scale" in c:
        value = value * to_number(c["scale"])
    fmt = c.get("format", "{}")
    try:
        shown = fmt.format(value)
    except (ValueError, IndexError, KeyError) as e:
        raise Problem(f"format {fmt!r}: {e}")
    if not definition and not quoted(shown, c["quote"]):
        raise Problem(f"the file says {shown} (value {value!r}), the quote does not")
    return value


def dirty_claims(root, files):
    out = []
    for path in files:
        with open(path, "rb") as f:
            claims = tomllib.load(f).get("claim", [])
        for c in claims:
            why = uncommitted_tree(root, c["file"]) if isinstance(c.get("file"), str) and \
                os.path.isfile(os.path.join(root, c["file"])) else None
            if why:
                flag = (" (headline = false)" if c.get("headline", True) is False else
                        " (remeasure)" if "remeasure" in c else "")
                out.append(f"{page_of(path)}: {c.get('quote')!r} from {c['file']}{flag}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--dirty", action="store_true", help="list the claims whose file came from an uncommitted tree")
    ap.add_argument("claims", nargs="*")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    files = [os.path.abspath(f) for f in args.claims] or sorted(glob.glob(os.path.join(root, CLAIMS, "*.toml")))
    if args.dirty:
        for line in dirty_claims(root, files):
            print(line)
        return 0
    problems, pending, count = [], [], 0
    for f in files:
        problems += check_claims(root, f, pending)
        try:
            with open(f, "rb") as fh:
                count += len(tomllib.load(fh).get("claim", []))
        except (OSError, tomllib.TOMLDecodeError):
            pass
    for p in dict.fromkeys(pending):
        print(f"pending re-measurement: {p}")
    for p in problems:
        print(p)
    if problems:
        print(f"drift: {len(problems)} of {count} claim(s) in {len(files)} file(s) do not hold", file=sys.stderr)
        return 1
    print(f"drift: {count} claim(s) in {len(files)} claims file(s): every quoted figure is its file's"
          + (f" ({len(pending)} headline figure(s) from uncommitted trees pending re-measurement)" if pending else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
