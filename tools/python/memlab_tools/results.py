"""Reading, merging and writing memlab.results/1 files (docs/results-schema.md).

`load` checks what the tools rely on and raises ResultsError with one line naming the file and what is
wrong: a file that cannot be read, is not UTF-8 or not JSON, is another document, or holds a result
without a lab, a variant, params, bytes or a cold timing. Optional fields (batch, graph, hardware_bytes,
model, roof, peer, library) are checked only where present."""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable

from . import table

SCHEMA = "memlab.results/1"
TIMINGS = ("cold", "batch", "graph")


class ResultsError(ValueError):
    """A file that is not a memlab results file, or a record without what a tool needs."""


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _timing_problem(name: str, t) -> str:
    if not isinstance(t, dict):
        return f"'{name}' is {_what(t)}, not a timing object"
    if not _number(t.get("median_ms")) or t["median_ms"] < 0:
        return f"'{name}.median_ms' is {_what(t.get('median_ms'))}, not a time in ms"
    if not isinstance(t.get("samples"), int) or isinstance(t.get("samples"), bool) or t["samples"] < 0:
        return f"'{name}.samples' is {_what(t.get('samples'))}, not a count"
    for k in ("rel_spread", "p25_ms", "p75_ms", "min_ms", "max_ms"):
        if k in t and (not _number(t[k]) or t[k] < 0):
            return f"'{name}.{k}' is {_what(t[k])}, not a number >= 0"
    return ""


def _what(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return f'"{v[:20]}"'
    return "a list" if isinstance(v, list) else "an object" if isinstance(v, dict) else type(v).__name__


def record_problem(r) -> str:
    """What keeps `r` from being a result the tools can read; "" when nothing does."""
    if not isinstance(r, dict):
        return f"is {_what(r)}, not an object"
    for k in ("lab", "variant"):
        if not isinstance(r.get(k), str) or not r[k]:
            return f"'{k}' is {_what(r.get(k)) if k in r else 'missing'}, not a name"
    if not isinstance(r.get("params"), dict):
        return f"'params' is {_what(r.get('params')) if 'params' in r else 'missing'}, not an object"
    for k, v in r["params"].items():  # null: the rung does not read that axis (not applicable)
        if not (v is None or isinstance(v, str) or _number(v)):
            return f"'params.{k}' is {_what(v)}, not a number, a name or null"
    if not _number(r.get("bytes")) or r["bytes"] < 0:
        return f"'bytes' is {_what(r.get('bytes')) if 'bytes' in r else 'missing'}, not a byte count"
    for k in ("flops", "hardware_bytes"):
        if k in r and (not _number(r[k]) or r[k] < 0):
            return f"'{k}' is {_what(r[k])}, not a count"
    if "cold" not in r:
        return "no 'cold' timing"
    for k in TIMINGS:
        if k in r and (k == "cold" or r[k] is not None):
            problem = _timing_problem(k, r[k])
            if problem:
                return problem
    if "status" in r and not isinstance(r["status"], str):
        return f"'status' is {_what(r['status'])}, not a word"
    if "library" in r and r["library"] is not None and not isinstance(r["library"], str):
        return f"'library' is {_what(r['library'])}, not a name"
    for k in ("model", "roof"):
        if k in r and r[k] is not None and not isinstance(r[k], dict):
            return f"'{k}' is {_what(r[k])}, not an object"
    if isinstance(r.get("model"), dict) and not all(_number(v) for v in r["model"].values()):
        return "'model' holds a value that is not a number"
    if isinstance(r.get("roof"), dict) and "value" in r["roof"] and not _number(r["roof"]["value"]):
        return f"'roof.value' is {_what(r['roof']['value'])}, not a number"
    return ""


def load(path: str) -> dict:
    """The parsed file; raises ResultsError (one line: the file, what is wrong) for anything but a
    memlab.results/1 document whose results the tools can read."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a folder, not a results file") from None
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not raw.strip():
        raise ResultsError(f"{path}: empty, not a {SCHEMA} file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}), "
                           f"not a {SCHEMA} file") from None
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        where = f" at line {e.lineno}, column {e.colno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else ""
        raise ResultsError(f"{path}: not JSON{where}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        schema = doc.get("schema") if isinstance(doc, dict) else None
        found = (f'schema "{schema[:60]}"' if isinstance(schema, str) else f"schema {_what(schema)}") \
            if isinstance(doc, dict) and "schema" in doc else \
            ("no 'schema'" if isinstance(doc, dict) else f"a JSON {_what(doc).split(' ')[-1]}")
        raise ResultsError(f"{path}: not a {SCHEMA} file ({found})")
    if not isinstance(doc.get("results"), list) or not isinstance(doc.get("device"), dict):
        raise ResultsError(f"{path}: no 'results' list or 'device' object")
    if "labs" in doc and not (isinstance(doc["labs"], dict) and all(isinstance(v, dict) for v in doc["labs"].values())):
        raise ResultsError(f"{path}: 'labs' is not an object of objects")
    for i, r in enumerate(doc["results"]):
        problem = record_problem(r)
        if problem:
            who = f" ({r.get('lab') or '?'} {r.get('variant')})" if isinstance(r, dict) and r.get("variant") else ""
            raise ResultsError(f"{path}: result {i}{who}: {problem}")
    return doc


@dataclass
class Record:
    """One result with the run it came from."""

    data: dict
    run: dict  # the file's header (everything but "results")
    source: str

    @property
    def lab(self) -> str:
        return self.data["lab"]

    @property
    def variant(self) -> str:
        return self.data["variant"]

    @property
    def params(self) -> dict:
        return self.data["params"]

    def measured(self, key: str = "cold") -> bool:
        """`key`'s timing has samples and a median above zero (a zero median is no time at all)."""
        t = self.data.get(key) or {}
        return t.get("samples", 0) > 0 and t.get("median_ms", 0) > 0

    @property
    def ok(self) -> bool:
        return self.data.get("status", "ok") == "ok" and self.measured("cold")

    def why_not(self) -> str:
        """Why a result that is not `ok` has no figure: its status and note, or no time."""
        status = self.data.get("status", "ok")
        if status != "ok":
            note = self.data.get("note") or ""
            return status + (f": {note}" if note else "")
        return "no cold samples" if not self.data["cold"].get("samples") else "a cold median of zero"

    def key(self) -> tuple:
        """(lab, variant, params in a canonical order): what identifies a case across runs. A param that does not
        apply to the rung is left out, whether the file says null, the text "-" (before null) or nothing at all
        (a file from before the lab had the axis: a host copy has no NCCL placement either way)."""
        return (self.lab, self.variant,
                tuple(sorted((k, v) for k, v in self.params.items() if v is not None and v != "-")))


def records(paths: Iterable[str]) -> list[Record]:
    """Every record of every file, in file order."""
    out = []
    for p in paths:
        doc = load(p)
        run = {k: v for k, v in doc.items() if k != "results"}
        out.extend(Record(r, run, p) for r in doc["results"])
    return out


def write_atomically(path: str, doc: Any, raw: bool = False) -> None:
    """JSON (or, with raw, the text `doc`) to a temporary file in the same folder, flushed and fsynced,
    renamed over `path`: the file holds the old document or the new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            if raw:
                f.write(doc)
            else:
                json.dump(doc, f, indent=2)
                f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


MEMLAB_LIBRARY = "memlab"  # `library` of memlab's own library called from Python (memlab-peers' memlab_copy_, ...)


def is_peer(rec: dict) -> bool:
    """The record times a library the lab compares with, not one of memlab's rungs. Files written before results
    carried `peer` (memlab < 0.1.0 at 39c3c8d) mark none: the lab's table says which variants are peers."""
    if "peer" in rec:
        return bool(rec["peer"])
    return table.is_lab_peer(rec.get("lab") or "", rec.get("variant") or "")


def library_of(rec: dict) -> str:
    """Whose code a record times: the first word of `library` (memlab-peers: torch, triton, memlab), else a
    lab's own peer by its variant (cublas, memcpy, cub, copy), else "" (one of memlab's rungs)."""
    if rec.get("library"):
        return rec["library"].split()[0]
    return rec["variant"] if is_peer(rec) else ""


def is_memlab_library(rec: dict) -> bool:
    """memlab's own library timed as a peer (in the peers' process): the contender, not a peer to beat."""
    return library_of(rec) == MEMLAB_LIBRARY
