#!/usr/bin/env python3
"""The docs checks catch what they claim to: tools/docs/check_markdown.py (fences, tables, links) and
tools/docs/results_catalogue.py (a manifest against its folder and the pages that cite its files), each on a
small tree made here. The ctests docs_markdown and docs_results_catalogue run them on the real tree."""
import csv
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "docs"))
import check_markdown  # noqa: E402
import results_catalogue as rc  # noqa: E402


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
        write(root, "docs/results/README.md", "")
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


if __name__ == "__main__":
    unittest.main()
