#!/usr/bin/env python3
"""The docs checks catch what they claim to: tools/docs/check_markdown.py (fences, tables, links),
tools/docs/results_catalogue.py (a manifest against its folder and the pages that cite its files, machine paths)
and tools/docs/drift.py (a page's figures against their files), each on a small tree made here. The ctests
docs_markdown, docs_results_catalogue and docs_drift run them on the real tree."""
import csv
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "docs"))
import check_markdown  # noqa: E402
import drift  # noqa: E402
import page_commands  # noqa: E402
import results_catalogue as rc  # noqa: E402
import user_pages  # noqa: E402


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


class Markdown(unittest.TestCase):
    def problems(self, text, extra=()):
        with tempfile.TemporaryDirectory() as root:
            write(root, "page.md", text)
            for p in extra:
                write(root, p, "x")
            return check_markdown.check_file(os.path.join(root, "page.md"), "page.md", root)

    def test_a_clean_page_has_no_problem(self):
        text = ("# t\n\n| a | b |\n| --- | ---: |\n| `x|y` | 2 |\n\n```sh\n| not | a table\n[x](nowhere)\n```\n\n"
                "~~~\n```sh\n~~~\n\n[here](there.md) ![p](d/p.png) [web](https://example.com) [a](#anchor)\n")
        self.assertEqual(self.problems(text, ["there.md", "d/p.png"]), [])

    def test_a_fence_that_never_closes(self):
        (p,) = self.problems("text\n```sh\ncode\n")
        self.assertIn("page.md:2: a code fence (```) that never closes", p)

    def test_a_fence_opened_inside_another(self):
        p = self.problems("```sh\na\n## heading\n```sh\nb\n```\n")
        self.assertTrue(any("page.md:1: a code fence that is not closed before another opens at line 4" in x for x in p), p)

    def test_tables_without_delimiter_or_with_wrong_cell_counts(self):
        p = self.problems("| a | b |\n| c | d |\n\n| a | b |\n| --- | --- |\n| 1 | 2 | 3 |\n| 1 |\n")
        self.assertEqual(len(p), 3, p)
        self.assertIn("page.md:1: table rows without a delimiter row", p[0])
        self.assertIn("page.md:6: a table row with 3 cells under a header of 2", p[1])
        self.assertIn("page.md:7: a table row with 1 cells under a header of 2", p[2])

    def test_links_and_images_that_name_nothing(self):
        p = self.problems("[a](gone.md#x) and ![b](../up.png)\n\n[ref]: missing/file.txt\n`[not](a link)`\n")
        self.assertEqual([x.split(": ", 1)[1] for x in p],
                         ["a link to gone.md, which does not exist", "a link to ../up.png, which does not exist",
                          "a link to missing/file.txt, which does not exist"])

    def test_issue_numbers_in_a_page(self):
        p = self.problems("What was seen (issue 29, cold).\nSee #12 and issues #3.\n`--out issue20-work/x.json`\n"
                          "Not these: &#20; a/#5 issue tracker v2\n")
        self.assertEqual([x.split(": ", 1)[0] for x in p], ["page.md:1", "page.md:2", "page.md:2", "page.md:3"], p)
        self.assertIn("names a development issue ('issue 29')", p[0])

    def test_bare_words_in_angle_brackets_vanish_on_github(self):
        p = self.problems("a <T> and wait_group<stages-1>, the <bus id>; </x>\n"
                          "kept: `<T>` &lt;T&gt; \\<T> <br> <sub>2</sub> <!-- c --> <https://x.org> 3 < 4 > 2\n"
                          "```cpp\nstd::vector<T>\n```\n"
                          "a span `over\ntwo <lines>` and <after>\n\n`not closed\n\n<closed>` here\n")
        self.assertEqual([x.split(" reads as")[0] for x in p],
                         ["page.md:1: <T>", "page.md:1: <stages-1>", "page.md:1: <bus id>", "page.md:1: </x>",
                          "page.md:7: <after>", "page.md:11: <closed>"])

    def test_the_notes_index_lists_every_note(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "docs/notes/README.md", "| [a.md](a.md) | a |\n")
            for n in ("a.md", "b.txt"):
                write(root, f"docs/notes/{n}", "x")
            tracked = ["docs/notes/README.md", "docs/notes/a.md", "docs/notes/b.txt", "docs/x.md"]
            self.assertEqual(check_markdown.notes_index_problems(root, tracked),
                             ["docs/notes/README.md: does not list docs/notes/b.txt (one line a note)"])
            os.remove(os.path.join(root, "docs/notes/README.md"))
            (p,) = check_markdown.notes_index_problems(root, tracked)
            self.assertIn("missing", p)

    def test_the_history_page_may_name_issues(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "docs/notes/history.md", "issue 28: the rung records\n")
            self.assertEqual(check_markdown.check_file(os.path.join(root, "docs/notes/history.md"),
                                                       "docs/notes/history.md", root), [])

    def test_files_named_for_an_issue(self):
        names = ["tools/device_issue20.sh", "tools/issue21_checks.py", "tools/gpu/sass_diff.py", "docs/tissue.md"]
        self.assertEqual([n for n in names if check_markdown.ISSUE_FILE.search(n)], names[:2])


class Catalogue(unittest.TestCase):
    def tree(self, rows, files, page="see [run.json](../results/gpu/lab/run.json)\n"):
        root = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        write(root, "docs/labs/lab.md", page)
        write(root, "docs/results/README.md", "| [gpu/lab/](gpu/lab/manifest.csv) | a lab |\n")
        for name, text in files.items():
            write(root, f"docs/results/gpu/lab/{name}", text)
        with open(os.path.join(root, "docs/results/gpu/lab/manifest.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, rc.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        return root

    ROW = {"file": "run.json", "what": "a run", "command": "memlab run lab --out run.json", "commit": "abcdef1",
           "date": "2026-11-25", "device": "GPU", "pages": "docs/labs/lab.md"}
    RUN = json.dumps({"schema": "memlab.results/1", "git_sha": "abcdef1234", "created": "2026-11-25T10:00:00Z",
                      "device": {"name": "GPU"}, "command": ["build/bin/memlab", "run", "lab", "--out", "out/r.json"]})

    def test_a_consistent_folder_passes(self):
        self.assertEqual(rc.check(self.tree([self.ROW], {"run.json": self.RUN})), [])

    def test_every_kind_of_disagreement_is_named(self):
        rows = [dict(self.ROW, commit="1234567", date="2026-11-24"),
                dict(self.ROW, file="gone.json"), dict(self.ROW, file="plot.png", pages="docs/labs/none.md")]
        root = self.tree(rows, {"run.json": self.RUN, "plot.png": "x", "extra.txt": "x"},
                         page="no citation; a path: docs/results/gpu/lab/absent.json\n")
        got = rc.check(root)
        want = ["lab/extra.txt: not listed", "run.json: commit '1234567', the file's header says 'abcdef1'",
                "run.json: date '2026-11-24', the file's header says '2026-11-25'",
                "run.json: page docs/labs/lab.md does not cite docs/results/gpu/lab/run.json",
                "gone.json: listed, but no such file", "plot.png: page docs/labs/none.md does not exist",
                "docs/results/gpu/lab/absent.json does not exist"]
        for w in want:
            self.assertTrue(any(w in g for g in got), (w, got))
        self.assertEqual(len(got), len(want), got)

    def test_add_fills_the_row_from_the_results_header(self):
        root = self.tree([], {"r.json": self.RUN})
        folder = os.path.join(root, "docs/results/gpu/lab")
        rc.add(folder, ["r.json"], type("A", (), {"page": ["docs/labs/lab.md"], "what": "w", "command": None,
                                                  "commit": None, "date": None, "device": None})())
        (row,) = rc.read_manifest(folder)
        self.assertEqual((row["commit"], row["date"], row["device"], row["command"]),
                         ("abcdef1", "2026-11-25", "GPU", "memlab run lab --out r.json"))

    def test_the_results_readme_lists_every_folder(self):
        root = self.tree([self.ROW], {"run.json": self.RUN})
        write(root, "docs/results/other/lab2/manifest.csv", ",".join(rc.COLUMNS) + "\n")
        self.assertEqual(rc.check(root), ["docs/results/README.md: does not list docs/results/other/lab2 (a row "
                                          "linking its manifest.csv)"])

    def test_a_file_from_an_uncommitted_tree_is_marked_in_its_row(self):
        ref = json.dumps({"schema": "memlab.check.reference/1", "made": {"git_sha": "f6bf87fad68a-dirty"}})
        root = self.tree([self.ROW, dict(self.ROW, file="ref.json")], {"run.json": self.RUN, "ref.json": ref},
                         page="[a](../results/gpu/lab/run.json) [b](../results/gpu/lab/ref.json)\n")
        (p,) = rc.check(root)
        self.assertIn("ref.json: commit 'abcdef1', but the file was made from an uncommitted tree", p)

    def test_a_machine_path_in_a_committed_file(self):
        ncu = "==PROF== Connected to process 617 (/work/main/.carry/bin/memlab)\nwrote /tmp/w3/a.json\n"
        root = self.tree([self.ROW, dict(self.ROW, file="ncu.csv")], {"run.json": self.RUN, "ncu.csv": ncu},
                         page="[run.json](../results/gpu/lab/run.json) [ncu](../results/gpu/lab/ncu.csv)\n")
        (p,) = rc.check(root)
        self.assertIn("docs/results/gpu/lab/ncu.csv:1: a machine's path (/work/main/.carry/bin/memlab, and 1 more)", p)

    def test_scrub_makes_each_path_one_a_reader_can_repeat(self):
        cases = {
            "cannot be captured: /work/main/src/labs/transfer/transfer.cu:511: failed":
                "cannot be captured: src/labs/transfer/transfer.cu:511: failed",
            '"command": ["/work/main/build/dev/bin/memlab", "run", "--out", "/root/out/r/copy_f16.json"]':
                '"command": ["memlab", "run", "--out", "copy_f16.json"]',
            "NCCL: /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl":
                "NCCL: $VIRTUAL_ENV/lib/python3.12/site-packages/nvidia/nccl",
            "--out /tmp/s/a.json,/tmp/s/a.md (/work/main/.carry/bin/memlab) /tmp/x/": "--out a.json,a.md (memlab) x",
            # Not machine paths: inside a longer path, a URL, a repository path, a number.
            "docs/results/h100/tmp/x https://example.com/work/x src/root/y 3.0/tmp": None,
        }
        for before, after in cases.items():
            self.assertEqual(rc.scrub_text(before), before if after is None else after)
        self.assertEqual(rc.machine_paths("a\nb /home/u/x.log c\n"), [(2, "/home/u/x.log")])


class Drift(unittest.TestCase):
    """tools/docs/drift.py on a page, its claims file and the files it cites, made here."""
    RUN = {"schema": "memlab.results/1", "git_sha": "abcdef1234", "created": "2026-11-25T10:00:00Z",
           "device": {"name": "GPU", "peak_gbps": 3352.3},
           "results": [{"variant": "vec16", "params": {"n": 2147483648, "dtype": "f16"}, "gbps": 3035.27,
                        "cold": {"median_us": 2834.81}},
                       {"variant": "scalar", "params": {"n": 2147483648, "dtype": "f16"}, "gbps": 1463.4,
                        "cold": {"median_us": 5880.0}},
                       {"variant": "vec16", "params": {"n": 1024, "dtype": "f16"}, "gbps": 20.0}]}
    PAGE = ("vec16 moves 3035 GB/s (median 2834.8 us) against 1463 GB/s for scalar: 48% (a range 0.6-1.0%).\n"
            "[the run](../results/gpu/lab/run.json), [log](../results/gpu/lab/run.log), "
            "[ncu](../results/gpu/lab/ncu.csv)\n")
    LOG = "measured ceiling 3017.9 GB/s (cudaMemcpy D2D)\n"
    NCU = '==PROF== Connected to process 1 (memlab)\n"Kernel","Metric","Value"\n"k1","dram","1,024"\n"k2","dram","7"\n'

    def tree(self, claims, page=PAGE, dirty=False):
        root = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        write(root, "docs/labs/lab.md", page)
        run = dict(self.RUN, git_sha="abcdef1234-dirty" if dirty else "abcdef1234")
        write(root, "docs/results/gpu/lab/run.json", json.dumps(run))
        write(root, "docs/results/gpu/lab/run.log", self.LOG)
        write(root, "docs/results/gpu/lab/ncu.csv", self.NCU)
        rows = [dict(Catalogue.ROW, file=f, commit="abcdef1-dirty" if dirty and f == "run.log" else "abcdef1")
                for f in ("run.json", "run.log", "ncu.csv")]
        with open(os.path.join(root, "docs/results/gpu/lab/manifest.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, rc.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        write(root, "docs/claims/docs__labs__lab.toml", claims)
        return root, os.path.join(root, "docs/claims/docs__labs__lab.toml")

    def problems(self, claims, **kw):
        root, path = self.tree(claims, **kw)
        return [p.split(": ", 1)[1] for p in drift.check_claims(root, path)]

    GOOD = """
[[claim]]
quote = "vec16 moves 3035 GB/s"
file = "docs/results/gpu/lab/run.json"
select = { variant = "vec16", "params.n" = 2147483648 }
field = "gbps"
format = "{:.0f}"
name = "vec"

[[claim]]
quote = "(median 2834.8 us)"
file = "docs/results/gpu/lab/run.json"
select = { variant = "vec16", "params.n" = 2147483648.0, "params.dtype" = "f16" }
field = "cold.median_us"
format = "{:.1f}"

[[claim]]
quote = "1463 GB/s for scalar"
file = "docs/results/gpu/lab/run.json"
select = { variant = "scalar" }
field = "gbps"
format = "{:.0f}"
name = "sc"

[[claim]]
quote = "48%"
expr = "sc / vec * 100"
format = "{:.0f}"

[[claim]]
quote = "3035 GB/s"
file = "docs/results/gpu/lab/run.log"
regex = 'ceiling\\s+([0-9.]+) GB/s'
scale = 1.0057
format = "{:.0f}"

[[claim]]
quote = "a range 0.6-1.0%"
file = "docs/results/gpu/lab/ncu.csv"
csv = { where = { Kernel = "k1" }, column = "Value" }
scale = 0.001
format = "{:.1f}"

[[claim]]
quote = "vec16 moves 3035 GB/s"
file = "docs/results/gpu/lab/run.json"
json_path = "results.0.gbps"
format = "{:.0f}"
"""

    def test_claims_that_hold(self):
        self.assertEqual(self.problems(self.GOOD), [])

    def claim(self, **kw):
        base = {"quote": "vec16 moves 3035 GB/s", "file": "docs/results/gpu/lab/run.json",
                "select": {"variant": "vec16", "params.n": 2147483648}, "field": "gbps", "format": "{:.0f}"}
        base.update(kw)
        base = {k: v for k, v in base.items() if v is not None}
        return "[[claim]]\n" + "".join(f"{k} = {self.toml(v)}\n" for k, v in base.items())

    @staticmethod
    def toml(v):
        if isinstance(v, dict):
            return "{ " + ", ".join(f'"{k}" = {Drift.toml(x)}' for k, x in v.items()) + " }"
        if isinstance(v, bool):
            return "true" if v else "false"
        return json.dumps(v) if isinstance(v, str) else repr(v)

    def test_each_way_a_claim_fails(self):
        cases = [
            (dict(quote="vec16 moves 3036 GB/s"), "does not contain the quote"),
            (dict(format="{:.1f}"), "the file says 3035.3 (value 3035.27), the quote does not"),
            (dict(field="batch.median_us"), "no record with"),
            (dict(select={"variant": "vec16"}), "2 records match {'variant': 'vec16'} and their 'gbps' differ"),
            (dict(file="docs/results/gpu/lab/gone.json"), "docs/results/gpu/lab/gone.json does not exist"),
            (dict(file="docs/results/gpu/lab/manifest.csv", csv={"column": "file"}, select=None, field=None),
             "docs/labs/lab.md does not cite docs/results/gpu/lab/manifest.csv"),
            (dict(regex="x"), "one extractor (field, regex, csv, json_path, expr), not ['field', 'regex']"),
            (dict(colour="red"), "unknown key(s) ['colour']"),
            (dict(quote="48%", file=None, select=None, field=None, expr="sc / 2"), "expr names 'sc', which no claim"),
        ]
        for kw, want in cases:
            got = self.problems(self.claim(**kw))
            self.assertEqual(len(got), 1, (kw, got))
            self.assertIn(want, got[0], kw)

    def test_a_named_value_without_a_quote_feeds_an_expr(self):
        ratio = ('[[claim]]\nname = "v"\nfile = "docs/results/gpu/lab/run.json"\njson_path = "results.0.gbps"\n'
                 '[[claim]]\nname = "peak"\nfile = "docs/results/gpu/lab/run.json"\njson_path = "device.peak_gbps"\n'
                 '[[claim]]\nquote = "48%"\nexpr = "v / peak * 53"\nformat = "{:.0f}"\n')
        self.assertEqual(self.problems(ratio), [])
        (p,) = self.problems('[[claim]]\nfile = "docs/results/gpu/lab/run.json"\njson_path = "results.0.gbps"\n')
        self.assertIn("no quote", p)

    def test_a_headline_from_an_uncommitted_tree(self):
        got = self.problems(self.claim(), dirty=True)
        self.assertEqual(len(got), 1, got)
        self.assertIn("run.json was made from an uncommitted tree (its git_sha is abcdef1234-dirty)", got[0])
        log = dict(file="docs/results/gpu/lab/run.log", regex="ceiling\\s+([0-9.]+)", select=None, field=None,
                   quote="(median 2834.8 us)", format="{:.1f}", scale=0.93932)
        (p,) = self.problems(self.claim(**log), dirty=True)
        self.assertIn("its manifest row says commit abcdef1-dirty", p)
        self.assertEqual(self.problems(self.claim(headline=False), dirty=True), [])
        root, path = self.tree(self.claim(remeasure="memlab run lab"), dirty=True)
        pending = []
        self.assertEqual(drift.check_claims(root, path, pending), [])
        self.assertEqual(len(pending), 1)
        self.assertIn("run.json (its git_sha is abcdef1234-dirty): memlab run lab", pending[0])
        (p,) = self.problems(self.claim(remeasure="memlab run lab"))
        self.assertIn("remeasure, but docs/results/gpu/lab/run.json was made from a commit: drop the flag", p)
        root, path = self.tree(self.claim(), dirty=True)
        self.assertEqual(drift.dirty_claims(root, [path]),
                         ["docs/labs/lab.md: 'vec16 moves 3035 GB/s' from docs/results/gpu/lab/run.json"])

    def test_a_claims_file_for_a_page_that_does_not_exist(self):
        root, _ = self.tree(self.GOOD)
        write(root, "docs/claims/docs__labs__gone.toml", self.GOOD)
        got = drift.check_claims(root, os.path.join(root, "docs/claims/docs__labs__gone.toml"))
        self.assertEqual(got, ["docs/claims/docs__labs__gone.toml: names the page docs/labs/gone.md, which does not "
                               "exist"])
        self.assertEqual(drift.page_of("docs/claims/README.toml"), "README.md")

    def test_a_number_is_found_whole(self):
        self.assertTrue(drift.quoted("90.5", "90.5% of the 3352 GB/s"))
        self.assertTrue(drift.quoted("3352", "90.5% of the 3352 GB/s"))
        self.assertTrue(drift.quoted("1.0", "0.6-1.0%"))
        self.assertTrue(drift.quoted("-2.3", "\u22122.3%"))
        self.assertTrue(drift.quoted("1,024", "| 1,024 |"))
        for not_there in ("90.5", "0.5", "9"):
            self.assertFalse(drift.quoted(not_there, "190.55 and 190.5 and 90.55"), not_there)
        self.assertFalse(drift.quoted("1.0", "-1.0"))
        self.assertTrue(drift.quoted("1.3", "(+1.3%, [x]"))


class UserPages(unittest.TestCase):
    def words(self, text):
        with tempfile.TemporaryDirectory() as root:
            write(root, "docs/page.md", text)
            return [p.split(": ", 2)[1] for p in user_pages.check_page(os.path.join(root, "docs/page.md"),
                                                                       "docs/page.md")]

    def test_each_development_word(self):
        text = ("In the first session the prediction was falsified; the first run and the same call of main's library\n"
                "met the issue's acceptance bar after two attempts: we tried a second round, binary 5738c8a, 2026-11-25.\n")
        self.assertEqual(self.words(text),
                         ["'session' (session)", "'prediction' (prediction)", "'falsified' (falsified)",
                          "'first run' (first run)", "'same call' (the same call)", '"main\'s" (main\'s)',
                          '"the issue\'s" (the issue)', "'acceptance' (acceptance)", "'bar' (bar)",
                          "'attempts' (attempt)", "'tried' (tried)", "'round' (round)", "'2026-11-25' (date)",
                          "'5738c8a' (commit hash)"])

    def test_what_is_not_a_development_word(self):
        text = ("A DRAM round trip, paired round by round, 1024 rounds of ping-pong; bars from zero; rounding.\n"
                "The model predicts 32x. `session_id` and [the notes](notes/session.md#predicted) link there.\n"
                "```sh\nmemlab run copy --out session.json   # 2026-11-25, 5738c8a\n```\n"
                "| file | commit | date |\n| --- | --- | --- |\n| a.json | 5738c8a | 2026-11-25 |\n\n"
                "- [A] gpu-benches (github:RRZE-HPC/gpu-benches, commit 1038c5d), read\n  on 2023-07-02\n"
                "- [C] a post, 2023-07-02\n  (https://example.com/post)\n")
        self.assertEqual(self.words(text), [])

    def test_the_user_pages(self):
        with tempfile.TemporaryDirectory() as root:
            for p in ("README.md", "docs/a.md", "docs/labs/b.md", "docs/notes/c.md", "docs/results/README.md"):
                write(root, p, "x")
            self.assertEqual(user_pages.user_pages(root),
                             ["README.md", "docs/a.md", "docs/labs/b.md", "docs/results/README.md"])


class PageCommands(unittest.TestCase):
    """tools/docs/page_commands.py on a page made here, with a stand-in memlab that says what it was given."""
    PAGE = """# p

```sh
memlab list                                   # runs
memlab inspect copy \\
  --arch sm_90                                # runs (joined)
memlab run copy --out r.json                  # needs a GPU
memlab-plot r.json -o plots                   # reads what the GPU command wrote
memlab-plot docs/results/a.json -o docs/results/plots   # runs, the output redirected
memlab check --reference <model>.json         # a template
OUT=... bash tools/gpu/x.sh                   # a template
make test                                     # other
memlab bad                                    # runs, and fails
build/default/bin/memlab list                 # not how the quickstart names it
```

```python
memlab list   # not a shell block
```
"""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(self.root))
        write(self.root, "docs/page.md", self.PAGE)
        write(self.root, "docs/results/a.json", "{}")
        self.bin = os.path.join(self.root, "bin")
        for prog, body in (("memlab", 'case "$1" in bad) exit 2;; esac; exit 0'),
                           ("memlab-plot", 'while [ $# -gt 0 ]; do [ "$1" = -o ] && { case "$2" in docs/*) exit 9;; esac; '
                                           'mkdir -p "$2"; }; shift; done; exit 0')):
            write(self.root, f"bin/{prog}", "#!/bin/sh\n" + body + "\n")
            os.chmod(os.path.join(self.bin, prog), 0o755)

    def test_each_kind_of_command(self):
        cmds = page_commands.commands_of(os.path.join(self.root, "docs/page.md"))
        self.assertEqual([n for n, _, _ in cmds], [4, 5, 7, 8, 9, 10, 11, 12, 13, 14])
        written, kinds = set(), []
        for _, _, words in cmds:
            kinds.append(page_commands.classify(words, written, self.root)[0])
            written |= set(page_commands.outputs_of(words))
        self.assertEqual(kinds, ["run", "run", "gpu", "gpu", "run", "template", "template", "other", "run", "missing"])

    def test_the_page_runs_as_typed(self):
        with tempfile.TemporaryFile("w+") as out:
            saved, sys.stdout = sys.stdout, out
            try:
                code = page_commands.main(["--root", self.root, "--bin", self.bin, "docs/page.md"])
            finally:
                sys.stdout = saved
            out.seek(0)
            lines = out.read().splitlines()
        self.assertEqual(code, 1)
        self.assertEqual([x.split(": ")[0] for x in lines], ["docs/page.md:13", "docs/page.md:14"], lines)
        self.assertIn("exit 2", lines[0])
        self.assertIn("names the program as the quickstart puts it on PATH", lines[1])
        self.assertFalse(os.path.exists(os.path.join(self.root, "docs/results/plots")))

    def test_a_slow_command_is_checked_not_run(self):
        write(self.root, "bin/memlab-transpose-shapes", '#!/bin/sh\n[ "$2" = --help ] && exit 0; exit 7\n')
        os.chmod(os.path.join(self.bin, "memlab-transpose-shapes"), 0o755)
        ok = ["memlab-transpose-shapes", "heatmap", "docs/results/a.json", "-o", "heat"]
        self.assertEqual(page_commands.run(ok, self.root, self.bin, 10)[0], 0)
        code, why = page_commands.run(ok[:2] + ["docs/results/gone.csv"], self.root, self.bin, 10)
        self.assertEqual(code, 2)
        self.assertIn("docs/results/gone.csv: no such file", why)


if __name__ == "__main__":
    unittest.main()
