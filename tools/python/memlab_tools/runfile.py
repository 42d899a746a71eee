"""The memlab.results/1 document of a study that is not a lab's peer sweep (tools/studies/copy_floor.py,
layout_claim.py): the run's header, one record per measured case, written after every case (a temporary file
renamed into place) so that an interrupted run keeps what it measured."""

from __future__ import annotations

import sys
import time

from . import __version__
from .results import SCHEMA, write_atomically
from .stats import summarize

EMPTY_POLICY = {"threads": 0, "items_per_thread": 0, "vec_bytes": 0, "stages": 0, "grid": 0}


class RunFile:
    def __init__(self, path: str | None, args, device: dict, labs: dict, timing: dict, libraries: dict | None = None):
        from .peers import _git_sha

        self.path = path
        self.doc = {
            "schema": SCHEMA, "memlab_version": f"memlab-tools {__version__}", "git_sha": _git_sha(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv),
            "argv": sys.argv, "ended": "running", "planned_cases": 0,
            "options": {k: str(v) for k, v in vars(args).items() if v not in (None, False, "")},
            "units": {"time": "ms", "bytes": "bytes", "bandwidth": "GB/s (1e9 bytes per second)",
                      "compute": "GFLOP/s (1e9 floating-point operations per second)", "clock": "MHz"},
            "byte_convention": "as memlab's: the fewest bytes the job must move, reads plus writes",
            "timing": {"batch": "not measured (empty)", "graph": "not measured (empty)",
                       "statistics": "median, min, max, p25, p75 (type 7), mean; rel_spread = (p75 - p25) / median",
                       "max_time_s": 1.0, "target_rel_spread": 0.0, "min_samples": 0, "max_samples": 0,
                       "throttle_threshold": 0.0, "l2_flush_bytes": 2 * device.get("l2_bytes", 0),
                       "batch_target_ms": 0.0, "max_queued_launches": 0, "blocking_timeout_s": 0.0, **timing},
            "device": device, "libraries": libraries or {}, "labs": labs, "results": []}

    def add(self, rec: dict) -> None:
        self.doc["results"].append(rec)
        self.doc["planned_cases"] = len(self.doc["results"])
        self.save()

    def save(self, ended: str | None = None) -> None:
        if ended:
            self.doc["ended"] = ended
        if self.path:
            write_atomically(self.path, self.doc)


def record(lab: str, variant: str, params: dict, library: str, cold_ms: list[float], *, bytes_: int = 0,
           flops: int = 0, verified: bool, note: str = "", policy: dict | None = None, status: str = "ok") -> dict:
    """A peer record whose cold summary is `cold_ms` (batch and graph not measured)."""
    return {"lab": lab, "variant": variant, "params": params, "policy": dict(policy or EMPTY_POLICY),
            "bytes": int(bytes_), "flops": int(flops), "peer": True, "library": library,
            "cold": summarize(cold_ms), "batch": summarize([]), "graph": summarize([]), "graph_note": "not measured",
            "verified": verified, "status": status, "note": note}


def finish(rec: dict, device: dict, roof_lab: str) -> dict:
    """The derived fields (GB/s, GFLOP/s, % of the roof) as memlab-peers derives them, with `roof_lab`'s roof."""
    from .peers import derive

    lab = rec["lab"]
    rec["lab"] = roof_lab
    derive(rec, device)
    rec["lab"] = lab
    return rec
