"""memlab's tables, downstream: every lab with its rungs in ladder order, its peers, roof, axes (with their
units, grammar, defaults and choices), dtypes, default sizes and what a size counts; the roofs (name, unit,
the rate each judges, how it is found); the dtypes' sizes; the constants of the sizes grammar; the timing
defaults and the unit of every result field. All of it as `memlab list --format json` prints it from the
labs' own tables (src/labs/<lab>/<lab>.cu), so that no tool keeps a list of its own; the earlier names of a
rung or an axis renamed since (`formerly`), so that a results file written before the rename reads by today's
name; and, where a lab states them, each rung's facts (what its traits say the kernel is), by which a tool picks
rungs without naming them.

labs.json beside this file is that output, committed, so the tools run without a memlab binary (the GPU
machine's Python, a laptop with results files). `python3 tools/docs/update_lab_table.py --write` rewrites it from
build/default/bin/memlab; the ctest lab_table_current fails when it is not what the built memlab prints.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "labs.json")


@lru_cache(maxsize=None)
def table() -> dict:
    """The whole document (memlab.labs/1)."""
    with open(PATH, encoding="utf-8") as f:
        return json.load(f)


def labs() -> list[dict]:
    return table()["labs"]


def lab(name: str) -> dict | None:
    """The lab's entry; None for a lab the table does not know (a results file of another memlab)."""
    return next((entry for entry in labs() if entry["name"] == name), None)


def variants(lab_name: str) -> list[dict]:
    """The lab's variants in table order: its rungs, naive to best, and its peers."""
    entry = lab(lab_name)
    return entry["variants"] if entry else []


def rungs(lab_name: str) -> list[str]:
    """memlab's own rungs of the lab, in ladder order."""
    return [v["name"] for v in variants(lab_name) if not v["peer"]]


def peers(lab_name: str) -> list[str]:
    """The libraries the lab itself compares with (cudaMemcpy, CUB, cuBLAS, ...), in table order."""
    return [v["name"] for v in variants(lab_name) if v["peer"]]


def variant(lab_name: str, name: str) -> dict | None:
    """The rung's entry, by today's name or by an earlier one (its `formerly`: a results file written before a
    rename names the rung so)."""
    return (next((v for v in variants(lab_name) if v["name"] == name), None)
            or next((v for v in variants(lab_name) if name in v.get("formerly", [])), None))


def variant_now(lab_name: str, name: str) -> str:
    """Today's name of the rung a results file calls `name`: the name itself, unless the table lists it as an
    earlier name of a rung (the rung whose `formerly` holds it)."""
    v = variant(lab_name, name)
    return v["name"] if v else name


def facts(lab_name: str, name: str) -> dict:
    """What the rung's traits say its kernel is (the hierarchy lab's kind, load path, walk order, the arrays a
    stream reads and writes, ...): {} where the lab states no facts or does not know the rung."""
    v = variant(lab_name, name)
    return dict(v.get("facts", {})) if v else {}


def rungs_with(lab_name: str, **want) -> list[str]:
    """The lab's variants, in table order, whose facts hold every `want`: a value to equal, or a test of the fact
    (`flops_per_element=lambda f: f > 0`). How a tool picks the rungs a picture draws without naming them."""
    def holds(f: dict) -> bool:
        return all(k in f and (w(f[k]) if callable(w) else f[k] == w) for k, w in want.items())
    return [v["name"] for v in variants(lab_name) if holds(v.get("facts", {}))]


def is_lab_peer(lab_name: str, name: str) -> bool:
    """The table marks this variant of the lab as a peer."""
    v = variant(lab_name, name)
    return bool(v and v["peer"])


def roof(name: str) -> dict | None:
    """The roof's rule: name, label, unit, judges (the result field it is held against), derived (how its value
    is found) and, for a roof counted per SM and clock by device, per_sm_clock (compute capability -> figure)."""
    return next((r for r in table()["roofs"] if r["name"] == name), None)


def roof_of(lab_name: str, variant_name: str | None = None) -> str:
    """The roof a rung is bound by: its own where its record names one (cuBLAS's TF32 GEMM), else its lab's;
    "" for a lab the table does not know."""
    v = variant(lab_name, variant_name) if variant_name else None
    if v and v.get("roof"):
        return v["roof"]
    entry = lab(lab_name)
    return entry["roof"] if entry else ""


def roof_label(name: str) -> str:
    """'DRAM', 'shared memory', 'TF32 tensor cores'; the name itself for a roof the table does not know."""
    r = roof(name)
    return r["label"] if r else name


def elem_bytes() -> dict[str, int]:
    """Bytes per element of every dtype: {"u8": 1, "f16": 2, ...}, in the table's order."""
    return {d["name"]: d["bytes"] for d in table()["dtypes"]}


def axis(lab_name: str, name: str) -> dict | None:
    """The axis's entry, by today's name or an earlier one (its `formerly`)."""
    entry = lab(lab_name)
    axes = entry["axes"] if entry else []
    return (next((a for a in axes if a["name"] == name), None)
            or next((a for a in axes if name in a.get("formerly", [])), None))


def axis_of_param(lab_name: str, param: str) -> dict | None:
    """The axis a results param belongs to: the axis of that name (today's or an earlier one), or the shape axis
    of which it is an extent (a tile's "rows"); None for dtype, n and names the lab does not know."""
    entry = lab(lab_name)
    return axis(lab_name, param) or next((a for a in (entry["axes"] if entry else [])
                                          if param in a.get("extents", [])), None)


def param_now(lab_name: str, param: str) -> str:
    """Today's name of a param a results file calls `param` (an axis renamed since: its `formerly`)."""
    a = axis(lab_name, param)
    return a["name"] if a else param


def param_unit(lab_name: str, param: str) -> str:
    """The unit of a lab's param: its axis's (a shape's extents share it); "" for dtype, n and unknown names."""
    a = axis_of_param(lab_name, param)
    return a["unit"] if a else ""


def unit(field: str) -> str:
    """The unit of a result field ("gbps" -> "GB/s", "cold_median_ms" -> "ms"); "" for a field without one."""
    return table()["units"].get(field, "")


def sizes() -> dict:
    """The sizes grammar's constants: suffixes (suffix, multiplies_by, bytes), max_exponent, max_range_items,
    max_cases."""
    return table()["sizes"]


def timing() -> dict:
    """The C++ harness's sampling defaults: target_rel_spread, min_samples, max_samples, floor_samples, ..."""
    return table()["timing"]
