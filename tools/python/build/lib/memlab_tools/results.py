"""Reading, merging and writing memlab.results/1 files (docs/results-schema.md)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable

SCHEMA = "memlab.results/1"


class ResultsError(ValueError):
    """A file that is not a memlab results file, or a record without what a tool needs."""


def load(path: str) -> dict:
    """The parsed file; raises ResultsError for anything but a memlab.results/1 document."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ResultsError(f"{path}: cannot read a JSON document ({e})") from e
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ResultsError(f"{path}: not a {SCHEMA} file (schema: {doc.get('schema') if isinstance(doc, dict) else '?'})")
    if not isinstance(doc.get("results"), list) or not isinstance(doc.get("device"), dict):
        raise ResultsError(f"{path}: no 'results' list or 'device' object")
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

    @property
    def ok(self) -> bool:
        return self.data.get("status", "ok") == "ok" and self.data["cold"]["samples"] > 0

    def key(self) -> tuple:
        """(lab, variant, params in a canonical order): what identifies a case across runs."""
        return (self.lab, self.variant, tuple(sorted((k, v) for k, v in self.params.items())))


def records(paths: Iterable[str]) -> list[Record]:
    """Every record of every file, in file order."""
    out = []
    for p in paths:
        doc = load(p)
        run = {k: v for k, v in doc.items() if k != "results"}
        out.extend(Record(r, run, p) for r in doc["results"])
    return out


def write_atomically(path: str, doc: Any) -> None:
    """JSON to a temporary file in the same folder, flushed and fsynced, renamed over `path`:
    the file holds the old document or the new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
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


def rate(rec: dict, key: str = "cold") -> float:
    """GB/s of `key`'s median (cold, batch or graph) from the declared bytes; 0 without samples."""
    s = rec.get(key) or {}
    ms = s.get("median_ms", 0)
    return rec["bytes"] / (ms * 1e-3) / 1e9 if s.get("samples", 0) and ms > 0 else 0.0
