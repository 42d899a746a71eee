"""Reading `memlab check` files (memlab.check/1 and /2, docs/check.schema.json) for the report and the fleet view.

`load(path)` returns a `Check`: the file's header, its GPUs and its rows as plain records, the same for both
versions. What a version does not carry stays None and is said so by `Check.missing` (a memlab.check/1 file
holds no GPU serial or UUID, no fault code or action per row, no processes found on the GPUs and no
interrupted state): the report writes "not recorded in a memlab.check/1 file", it never makes one up.

Anything else raises CheckFileError with one line naming the file and what is wrong: no such file, a folder,
an empty file, a file cut short (its JSON ends before it is complete), not JSON, another document (a
memlab.results/1 file, another schema, a newer check schema), or a row without what the tools read.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from dataclasses import dataclass, field

SCHEMAS = ("memlab.check/1", "memlab.check/2")
# Units of the rows NVML's rules judge (counts, a generation, lanes, clock-event reasons): no band, no spread.
RULE_UNITS = ("errors", "reasons", "gen", "lanes")
VERDICTS = ("fail", "warn", "sibling", "busy", "interrupted", "no_reference", "skip", "pass")


class CheckFileError(ValueError):
    """A file that is not a memlab check file the tools can read; the message is one line naming it."""


@dataclass
class Gpu:
    ordinal: int
    name: str
    memory_gib: float | None = None
    sm_count: int | None = None
    link: str = ""
    bus_id: str = ""
    driver_version: int | None = None  # the CUDA driver API version (13000: 13.0)
    driver: str | None = None          # the kernel driver's version ("580.95.05"; memlab.check/2)
    runtime_version: int | None = None  # the CUDA runtime memlab was built with (memlab.check/2)
    serial: str | None = None  # None: the file does not record it (memlab.check/1)
    uuid: str | None = None
    processes: list | None = None  # other processes NVML found on the GPU (pid, name, used_mib, seen); None: not
    #                                 recorded


@dataclass
class Row:
    metric: str
    scope: str  # gpu, pair, node
    gpu: int | None
    peer: int | None
    unit: str
    higher_is_better: bool
    value: float | None
    shown: str
    reference: float | None
    warn_at: float | None
    fail_at: float | None
    ratio: float | None
    verdict: str
    level: str = ""
    note: str = ""
    seconds: float = 0.0
    measured_by: str = ""
    fault: str | None = None   # the stable fault code (memlab.check/2); None: not recorded
    action: str | None = None  # monitor, reset, drain, replace ...
    reason: str | None = None  # the reason in one line
    points_at: str | None = None  # the level or part the flagged row points at (memlab.check/2)

    @property
    def judged_by_rule(self) -> bool:
        """An NVML reading judged by a rule (ECC counts, PCIe generation and width, clock events), not by a band."""
        return self.unit in RULE_UNITS

    @property
    def where(self) -> str:
        """'GPU 3', 'GPU 3 > 0' (a pair: from 3 into 0), 'node'."""
        if self.scope == "pair":
            return f"GPU {self.gpu} > {self.peer}" if self.gpu is not None else "pairs"
        if self.scope == "node":
            return "node"
        return f"GPU {self.gpu}"


@dataclass
class Check:
    path: str
    schema: str
    created: _dt.datetime
    node: str          # the host the check ran on (its 'machine')
    command: str
    seconds: float
    link: str
    gpus: list[Gpu]
    rows: list[Row]
    counts: dict
    exit_status: int | None
    reference: dict | None
    reference_note: str
    memlab_version: str
    git_sha: str
    started: _dt.datetime | None = None  # when the measuring started (memlab.check/2); a replay's `created` is later
    replay: dict | None = None       # memlab.check/2 written by --replay: the file judged again (path, schema, ...)
    interrupted: bool | None = None  # None: not recorded (memlab.check/1)
    interrupted_by: str = ""         # SIGINT, SIGTERM
    action: str | None = None        # the most urgent action over the rows (memlab.check/2)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def measured(self) -> _dt.datetime:
        """When the GPUs were measured: the start of the measuring where the file says it, else when it was written."""
        return self.started or self.created

    @property
    def version(self) -> int:
        return int(self.schema.rsplit("/", 1)[1])

    @functools.cached_property
    def model(self) -> str:
        names = sorted({g.name for g in self.gpus})
        return names[0] if len(names) == 1 else " + ".join(names) if names else "?"

    @property
    def missing(self) -> list[str]:
        """What this file's schema does not record, in words, for the page to say."""
        out = []
        if all(g.serial is None for g in self.gpus):
            out.append("GPU serials")
        if all(g.uuid is None for g in self.gpus):
            out.append("GPU UUIDs")
        if self.version == 1:
            out += ["fault codes and actions", "the processes found on each GPU", "whether the check was interrupted"]
        return out

    def gpu(self, ordinal: int) -> Gpu | None:
        return next((g for g in self.gpus if g.ordinal == ordinal), None)

    @property
    def verdict(self) -> str:
        """The node's verdict from its rows: interrupted, fail, busy, warn (a warning or a sibling), not judged (no
        reference for a measured row) or pass."""
        vs = {r.verdict for r in self.rows}
        if self.interrupted:
            return "interrupted"
        if "fail" in vs:
            return "fail"
        if "busy" in vs:
            return "busy"
        if vs & {"warn", "sibling"}:
            return "warn"
        if "no_reference" in vs:
            return "not judged"
        return "pass"


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _what(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return f'"{v[:24]}"'
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return repr(v)
    return "a list" if isinstance(v, list) else "an object"


def parse_time(text: str) -> _dt.datetime:
    """'2026-11-27T10:13:22Z' (ISO 8601, UTC) -> an aware datetime; ValueError otherwise."""
    t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def _text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise CheckFileError(f"{path}: is a folder, not a check file") from None
    except FileNotFoundError:
        raise CheckFileError(f"{path}: no such file") from None
    except OSError as e:
        raise CheckFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not raw.strip():
        raise CheckFileError(f"{path}: empty, not a memlab check file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CheckFileError(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None


def parse(text: str, path: str = "-") -> dict:
    """The JSON document; CheckFileError for text that is cut short or not JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise CheckFileError(f"{path}: not JSON (nested too deep)") from None
    except json.JSONDecodeError as e:
        # Cut short: the error is at the very end, or a string runs to the end without its closing quote.
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            raise CheckFileError(f"{path}: truncated: its JSON ends after {len(text.encode())} bytes before the "
                                 "document is complete (a check killed while writing, or a copy cut short)") from None
        raise CheckFileError(f"{path}: not JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None


def _gpu(g, i: int, path: str) -> Gpu:
    if not isinstance(g, dict):
        raise CheckFileError(f"{path}: gpus[{i}] is {_what(g)}, not an object")
    if not isinstance(g.get("ordinal"), int) or not isinstance(g.get("name"), str):
        raise CheckFileError(f"{path}: gpus[{i}] has no 'ordinal' and 'name'")
    procs = g.get("processes")
    return Gpu(ordinal=g["ordinal"], name=g["name"], memory_gib=g.get("memory_gib"), sm_count=g.get("sm_count"),
               link=g.get("link") or "", bus_id=g.get("bus_id") or "", driver_version=g.get("driver_version"),
               driver=g.get("driver") or None, runtime_version=g.get("runtime_version") or None,
               serial=g.get("serial") or None, uuid=g.get("uuid") or None,
               processes=list(procs) if isinstance(procs, list) else None)


_ROW_TEXT = ("metric", "scope", "unit", "verdict")


def _row(r, i: int, path: str, v2: bool) -> Row:
    if not isinstance(r, dict):
        raise CheckFileError(f"{path}: rows[{i}] is {_what(r)}, not an object")
    for k in _ROW_TEXT:
        if not isinstance(r.get(k), str):
            raise CheckFileError(f"{path}: rows[{i}]: '{k}' is {_what(r.get(k))}, not text")
    if r["scope"] not in ("gpu", "pair", "node"):
        raise CheckFileError(f"{path}: rows[{i}] ({r['metric']}): scope {_what(r['scope'])} is not gpu, pair or node")
    for k in ("value", "reference", "warn_at", "fail_at", "ratio"):
        if r.get(k) is not None and not _number(r[k]):
            raise CheckFileError(f"{path}: rows[{i}] ({r['metric']}): '{k}' is {_what(r[k])}, not a number")
    for k in ("gpu", "peer"):
        if r.get(k) is not None and (not isinstance(r[k], int) or isinstance(r[k], bool)):
            raise CheckFileError(f"{path}: rows[{i}] ({r['metric']}): '{k}' is {_what(r[k])}, not a GPU ordinal")
    if r["scope"] == "gpu" and r.get("gpu") is None:
        raise CheckFileError(f"{path}: rows[{i}] ({r['metric']}): a GPU row without its 'gpu'")

    def text(k):
        v = r.get(k)
        return v if isinstance(v, str) and v else None

    return Row(metric=r["metric"], scope=r["scope"], gpu=r.get("gpu"), peer=r.get("peer"), unit=r["unit"],
               higher_is_better=bool(r.get("higher_is_better", True)), value=r.get("value"),
               shown=r.get("shown") or ("-" if r.get("value") is None else f"{r['value']:g} {r['unit']}"),
               reference=r.get("reference"), warn_at=r.get("warn_at"), fail_at=r.get("fail_at"),
               ratio=r.get("ratio"), verdict=r["verdict"], level=r.get("level") or "", note=r.get("note") or "",
               seconds=r.get("seconds") or 0.0, measured_by=r.get("measured_by") or "",
               fault=text("fault"), action=text("action"), reason=text("reason"), points_at=text("points_at"))


def from_document(doc, path: str = "-") -> Check:
    """A parsed document as a Check; CheckFileError (one line) for anything the tools cannot read."""
    if not isinstance(doc, dict):
        raise CheckFileError(f"{path}: not a memlab check file (a JSON {_what(doc).split(' ')[-1]})")
    schema = doc.get("schema")
    if schema not in SCHEMAS:
        if isinstance(schema, str) and re.fullmatch(r"memlab\.check/\d+", schema):
            raise CheckFileError(f"{path}: schema {schema} is newer than this reader (it reads "
                                 f"{' and '.join(SCHEMAS)}): update memlab's Python tools")
        found = f"schema {_what(schema)}" if "schema" in doc else "no 'schema'"
        raise CheckFileError(f"{path}: not a memlab check file ({found}; memlab check --out FILE.json writes one)")
    if not isinstance(doc.get("rows"), list) or not isinstance(doc.get("gpus"), list):
        raise CheckFileError(f"{path}: no 'rows' and 'gpus' lists")
    try:
        created = parse_time(doc.get("created") or "")
    except (ValueError, TypeError):
        raise CheckFileError(f"{path}: 'created' is {_what(doc.get('created'))}, not an ISO 8601 time") from None
    v2 = schema.endswith("/2")
    gpus = [_gpu(g, i, path) for i, g in enumerate(doc["gpus"])]
    rows = [_row(r, i, path, v2) for i, r in enumerate(doc["rows"])]
    interrupted = doc.get("interrupted") if v2 else None
    try:
        started = parse_time(doc["started"]) if isinstance(doc.get("started"), str) and doc["started"] else None
    except ValueError:
        raise CheckFileError(f"{path}: 'started' is {_what(doc.get('started'))}, not an ISO 8601 time") from None
    return Check(path=path, schema=schema, created=created,
                 node=str(doc.get("host") or doc.get("machine") or "?"), command=str(doc.get("command") or ""),
                 seconds=float(doc.get("seconds") or 0.0), link=str(doc.get("link") or ""), gpus=gpus, rows=rows,
                 counts=doc.get("counts") if isinstance(doc.get("counts"), dict) else {},
                 exit_status=doc.get("exit_status"), reference=doc.get("reference"),
                 reference_note=str(doc.get("reference_note") or ""),
                 memlab_version=str(doc.get("memlab_version") or ""), git_sha=str(doc.get("git_sha") or ""),
                 started=started, replay=doc.get("replay") if isinstance(doc.get("replay"), dict) else None,
                 interrupted=bool(interrupted) if interrupted is not None else None,
                 interrupted_by=str(doc.get("interrupted_by") or ""),
                 action=doc.get("action") if isinstance(doc.get("action"), str) else None, raw=doc)


def load(path: str) -> Check:
    """The check file at `path`; CheckFileError (one line naming it) for anything else."""
    return from_document(parse(_text(path), path), path)


def reproduce(row: Row, check: Check) -> str:
    """The command that measures `row` again by hand on its GPU (the lab case the check ran), or the check of that GPU
    alone for an NVML reading."""
    cmd = row.measured_by
    if not cmd or not cmd.startswith("memlab run"):
        if row.scope == "gpu" and row.gpu is not None:
            return f"memlab check --devices {row.gpu}"
        return "memlab check"
    if " --device " in cmd:  # memlab.check/2 writes the whole command
        return cmd
    if row.scope == "pair" and row.gpu is not None and row.peer is not None:
        cmd = cmd.replace("$peer", str(row.peer))
    if "$gpus" in cmd:
        cmd = cmd.replace("$gpus", str(len(check.gpus)))
        first = min((g.ordinal for g in check.gpus), default=0)
        return cmd + (f" --device {first}" if first else "")
    if row.gpu is not None:
        cmd += f" --device {row.gpu}"
    return cmd
