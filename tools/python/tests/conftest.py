import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# The catalogue of committed H100 results (docs/results/h100/<lab>/, each folder's manifest.csv has the commands):
# the plot and compare tests read the files the pages cite from there, and draw every one of them.
FIXTURES = os.path.join(REPO, "docs", "results", "h100")
# Runs no page cites that tests need (two runs of one binary, an earlier run of the same command).
DATA = os.path.join(HERE, "data")
SCHEMA = os.path.join(REPO, "docs", "results.schema.json")


# ---- files no tool may crash on ------------------------------------------------------------------------------
# Each: what the file holds (bytes; None: no file; "folder": a folder) and what the one-line message says.
# memlab-plot, memlab-compare and memlab-peers --like answer every one with exit 2 and that line.

def summary(median_ms=0.01, spread=0.01, samples=20):
    return {"median_ms": median_ms, "min_ms": median_ms, "max_ms": median_ms,
            "p25_ms": median_ms * (1 - spread / 2), "p75_ms": median_ms * (1 + spread / 2), "samples": samples,
            "rel_spread": spread, "mean_ms": median_ms}


def result(variant="vec16", n=4096, ms=0.01, spread=0.01, lab="copy", **params):
    """A record as memlab writes it: its rates derived from the declared bytes and the cold median."""
    return {"lab": lab, "variant": variant, "params": {"dtype": "f16", "n": n, **params}, "bytes": 4 * n, "flops": 0,
            "cold": summary(ms, spread), "batch": summary(ms, spread), "gbps": 4 * n / (ms * 1e-3) / 1e9,
            "gflops": 0.0, "status": "ok", "verified": True}


def document(results):
    return {"schema": "memlab.results/1", "memlab_version": "t", "git_sha": "t", "created": "t",
            "device": {"name": "GPU"}, "results": results}


def _with(change):
    r = result()
    change(r)
    return json.dumps(document([r])).encode()


BAD_FILES = {
    "missing": (None, "no such file"),
    "folder": ("folder", "is a folder"),
    "empty": (b"", "empty"),
    "not_utf8": (b'{"schema": "memlab.results/1", "note": "\xff\xfe"}', "not UTF-8 text (byte 0xff at offset"),
    "not_json": (b'{"schema": "memlab.results/1", ', "not JSON at line 1"),
    "json_list": (b"[1, 2]", "not a memlab.results/1 file (a JSON list)"),
    "foreign": (b'{"schema": "nvbench/1", "results": []}', 'not a memlab.results/1 file (schema "nvbench/1")'),
    "no_results": (b'{"schema": "memlab.results/1", "device": {}}', "no 'results' list"),
    "record_without_cold": (_with(lambda r: r.pop("cold")), "result 0 (copy vec16): no 'cold' timing"),
    "params_null": (_with(lambda r: r.update(params=None)), "'params' is null, not an object"),
    "params_list_value": (_with(lambda r: r["params"].update(n=[1])), "'params.n' is a list"),
    "median_nan": (_with(lambda r: r["cold"].update(median_ms=float("nan"))), "'cold.median_ms' is nan"),
    "samples_text": (_with(lambda r: r["cold"].update(samples="10")), "'cold.samples' is \"10\", not a count"),
    "no_lab": (_with(lambda r: r.pop("lab")), "'lab' is missing"),
    "no_bytes": (_with(lambda r: r.pop("bytes")), "'bytes' is missing"),
    "record_not_object": (json.dumps(document([3])).encode(), "result 0: is 3, not an object"),
}


def bad_file(tmp_path, kind):
    """The path of a `kind` file from BAD_FILES, made in tmp_path."""
    content, _ = BAD_FILES[kind]
    path = tmp_path / f"{kind}.json"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return str(path)


def exit_code(main, argv) -> int:
    """main(argv)'s exit status, whether it returns it or argparse raises SystemExit."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


# ---- shards: one test file split over several ctest entries --------------------------------------------------
# MEMLAB_PYTEST_SHARD=i/n keeps the i-th of n shards of the collected tests (ctest runs the shards side by side, so
# no one entry runs long). Tests that share a module- or session-scoped fixture stay in one shard (the fixture is
# built once); such a group weighs as its tests plus a fixed cost, and each group goes to the lightest shard.
# Weights are about seconds on CI's two cores: a test weighs 1 (about what drawing one committed file's pictures
# costs), or 0.25 where it only reads a shared fixture's result, unless marked @pytest.mark.shard_weight(w) (a test
# that draws nothing of a committed file weighs less, one that draws several more); a shared fixture adds 2. The
# weights only balance the shards: a wrong one makes a shard slower, never a test skipped or run twice.
_SHARED_FIXTURE_WEIGHT = 2
_SHARED_FIXTURE_TEST_WEIGHT = 0.25


def pytest_configure(config):
    config.addinivalue_line("markers", "shard_weight(w): the test's cost for MEMLAB_PYTEST_SHARD (default 1)")


def _weight(item, shared):
    mark = item.get_closest_marker("shard_weight")
    return mark.args[0] if mark else _SHARED_FIXTURE_TEST_WEIGHT if shared else 1


@pytest.hookimpl(trylast=True)  # after -k has deselected what this run leaves out
def pytest_collection_modifyitems(config, items):
    shard = os.environ.get("MEMLAB_PYTEST_SHARD")
    if not shard:
        return
    index, count = (int(x) for x in shard.split("/"))
    groups = {}
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        shared = [name for name in getattr(item, "fixturenames", [])
                  if defs is not None and defs.name2fixturedefs.get(name)
                  and defs.name2fixturedefs[name][-1].scope in ("module", "session", "package")
                  and name not in ("tmp_path_factory",)]
        groups.setdefault(shared[0] if shared else item.nodeid, []).append(item)
    weights = {}
    for key, members in groups.items():
        shared = len(members) > 1 or key != members[0].nodeid
        weights[key] = sum(_weight(m, shared) for m in members) + (_SHARED_FIXTURE_WEIGHT if shared else 0)
    load = [0] * count
    keep = set()
    for key, members in sorted(groups.items(), key=lambda kv: -weights[kv[0]]):
        target = load.index(min(load))
        load[target] += weights[key]
        if target == index:
            keep.update(id(m) for m in members)
    deselected = [m for m in items if id(m) not in keep]
    items[:] = [m for m in items if id(m) in keep]
    config.hook.pytest_deselected(items=deselected)


# ---- pictures ------------------------------------------------------------------------------------------------------
# The tests check what a picture holds (its series, labels, limits, the file written), not its resolution: every PNG
# they make is encoded at 30 dpi instead of the tools' 110-150 (a sixth of the suite's time on two cores).
TEST_DPI = 30


def _pictures_at_test_dpi():
    """Every Figure.savefig of the session at TEST_DPI (set when this file is imported: a fixture every test used
    would put every test in one group for the shards below)."""
    try:
        import matplotlib.figure
    except ImportError:
        return
    savefig = matplotlib.figure.Figure.savefig

    def at_test_dpi(self, *args, **kwargs):
        kwargs["dpi"] = TEST_DPI
        return savefig(self, *args, **kwargs)

    matplotlib.figure.Figure.savefig = at_test_dpi


_pictures_at_test_dpi()
