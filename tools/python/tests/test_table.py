"""The Python tools take every lab's rungs, order, peers, roofs, units, dtypes and grammar constants from memlab's
table (memlab_tools/labs.json: `memlab list --format json`, kept current by the ctest lab_table_current), never from
a list of their own."""

import ast
import os
import re

import pytest

from memlab_tools import peers, plot, results, sizes, stats, table

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "memlab_tools")
WORD = re.compile(r"[A-Za-z0-9_]+")


def rung_names() -> set[str]:
    """Every variant name of every lab (memlab's rungs and the lab's own peers), except the words that also name a
    lab or a roof (copy, smem) or a rung's fact (random: the hierarchy lab's walk order, a gather rung too), which
    the tools may write as such."""
    names = {v["name"] for entry in table.labs() for v in entry["variants"]}
    fact_values = {x for entry in table.labs() for v in entry["variants"] for x in v.get("facts", {}).values()
                   if isinstance(x, str)}
    return (names - {entry["name"] for entry in table.labs()} - {r["name"] for r in table.table()["roofs"]}
            - fact_values)


def distinctive(names: set[str]) -> set[str]:
    """The names no English word or Python name of the tools is: those with a digit or an underscore (vec16,
    chase_l2, smem_dot), which may appear nowhere in a tool's text, comments and docstrings included."""
    return {n for n in names if "_" in n or any(c.isdigit() for c in n)}


def string_constants(path: str):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def tool_files():
    return [os.path.join(TOOLS, name) for name in sorted(os.listdir(TOOLS)) if name.endswith(".py")]


def test_the_table_is_memlabs():
    doc = table.table()
    assert doc["schema"] == "memlab.labs/1"
    assert len(table.labs()) >= 12
    for entry in table.labs():
        assert table.rungs(entry["name"]), entry["name"]
        assert entry["roof"] in {r["name"] for r in doc["roofs"]}, entry["name"]
        for a in entry["axes"]:
            assert a["grammar"] == "words" or a["unit"], (entry["name"], a["name"])


def test_no_tool_writes_a_rung_name():
    """Every rung name of the table, as a string of its own in any tool (`r["variant"] == "dot"`), and the
    distinctive ones anywhere in a tool's text: a tool picks rungs by the table's order, peers and facts."""
    forbidden = rung_names()
    assert {"vec16", "ldgsts_cg16", "smem_swizzled", "cublas_tf32", "chase_l2", "triad"} <= forbidden
    words = distinctive(forbidden)
    assert {"vec16", "chase_l2", "smem_dot"} <= words and not {"triad", "random", "write"} & words
    found = []
    for path in tool_files():
        name = os.path.basename(path)
        found += [f"{name}:{line}: {text!r}" for line, text in string_constants(path) if text in forbidden]
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                found += [f"{name}:{n}: {w}" for w in WORD.findall(line) if w in words]
    assert not found, "rung names written in tools/python (take them from memlab_tools.table):\n" + "\n".join(found)


def test_an_earlier_name_reads_as_todays():
    """A rung or an axis renamed keeps its earlier names (`formerly`): a results file of before reads by today's
    name; no earlier name is another rung's or axis's name of today, none is listed twice."""
    renamed = 0
    for entry in table.labs():
        lab = entry["name"]
        for kind, items, find, now in (("variant", entry["variants"], table.variant, table.variant_now),
                                       ("axis", entry["axes"], table.axis, table.param_now)):
            names = {x["name"] for x in items}
            olds = [old for x in items for old in x.get("formerly", [])]
            assert len(olds) == len(set(olds)) and not set(olds) & names, (lab, kind, olds)
            for x in items:
                for old in x.get("formerly", []):
                    assert find(lab, old) is x and now(lab, old) == x["name"], (lab, kind, old)
                    renamed += 1
                assert now(lab, x["name"]) == x["name"]
    assert renamed >= 1
    assert table.variant_now("no_such_lab", "x") == "x" and table.param_now("copy", "n") == "n"


def test_the_hierarchy_pictures_pick_their_rungs_by_facts():
    from memlab_tools import plot_hierarchy as ph
    # One rung for each role, and each the kernel the role says (a renamed rung keeps its place).
    for path in ("shared", "l1", "l2"):
        assert table.facts("hierarchy", ph.chase(path))["path"] == path
    assert table.facts("hierarchy", ph.chase("l1", "sequential"))["order"] == "sequential"
    assert table.facts("hierarchy", ph.per_sm_chase())["per_sm"] is True
    assert table.facts("hierarchy", ph.chase_under_load())["kind"] == "chase_under_load"
    dot = table.facts("hierarchy", ph.dot())
    assert (dot["arrays_read"], dot["arrays_written"], dot["path"]) == (2, 0, "l1")
    streams = ph.streams()
    assert len(streams) >= 8 and len({ph.stream_colour(v) for v in streams}) == len(streams)
    roofline = ph.roofline_streams()
    assert roofline and all(table.facts("hierarchy", v)["flops_per_element"] > 0 for v in roofline)
    with pytest.raises(ValueError, match="rungs of the hierarchy table"):
        ph.rung_with(kind="stream")  # several: the picture would have to guess


def test_plot_order_and_style_follow_the_table():
    for entry in table.labs():
        rungs, lab_peers = plot.style_order(entry["name"])
        assert rungs == list(dict.fromkeys(plot._family(v)[1] for v in table.rungs(entry["name"])))
        assert lab_peers[:len(table.peers(entry["name"]))] == \
            list(dict.fromkeys(plot._family(v)[1] for v in table.peers(entry["name"])))[:len(lab_peers)]


def test_peers_read_the_table():
    assert peers.ELEM == {d["name"]: d["bytes"] for d in table.table()["dtypes"]}
    for lab, flags in peers.LAB_FLAGS.items():
        axes = {a["name"] for a in table.lab(lab)["axes"]}
        assert {f for f in flags if f in peers.AXIS_FLAGS and f not in peers.OWN_FLAGS.get(lab, ())} <= axes, lab
    assert next(p for p in peers.PEERS if p.roof).roof_name == "tf32"
    assert all(p.roof_name == table.roof_of(p.lab) for p in peers.PEERS if not p.roof)


def test_old_files_know_their_peers_from_the_table():
    lab, name = next((e["name"], v["name"]) for e in table.labs() for v in e["variants"] if v["peer"])
    assert results.is_peer({"lab": lab, "variant": name})  # a file that predates `peer`
    rung = table.rungs(lab)[0]
    assert not results.is_peer({"lab": lab, "variant": rung})
    assert results.is_peer({"lab": lab, "variant": rung, "peer": True})


def test_grammar_and_timing_constants_are_the_harness_s():
    assert sizes.MAX_VALUES == table.sizes()["max_range_items"]
    assert sizes.MAX_EXPONENT == table.sizes()["max_exponent"]
    rule = stats.StoppingRule(1.0)
    t = table.timing()
    assert (rule.target, rule.min_samples, rule.max_samples, rule.floor) == \
        (t["target_rel_spread"], t["min_samples"], t["max_samples"], t["floor_samples"])
    with pytest.raises(ValueError, match="more than"):
        sizes.parse_sizes(f"1..{sizes.MAX_VALUES + 1}:+1")


def test_units_come_from_the_table():
    assert plot.UNITS["gbps"] == table.unit("gbps") == "GB/s"
    assert plot.UNITS["gflops"] == table.unit("gflops")
    for entry in table.labs():
        for a in entry["axes"]:
            for p in a.get("extents", [a["name"]]):
                assert table.param_unit(entry["name"], p) == a["unit"]
