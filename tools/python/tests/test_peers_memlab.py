"""memlab's own library as peers (memlab.copy_, memlab.transpose), without a GPU: they are in the registry and
the plans, their records say library "memlab", and where `import memlab` or libmemlab is missing they are
skipped with one line saying why while the other peers run. The timing itself runs on the H100
(tools/gpu/device_library.sh peers1)."""
import json
import os
import sys
import types

import pytest

from memlab_tools import gpu_timing, peers

from conftest import REPO, SCHEMA


def _plan(argv):
    return peers.plan(peers.parser().parse_args(argv))


def test_the_registry_holds_memlabs_library_for_copy_and_transpose():
    mine = {(p.lab, p.variant): p for p in peers.PEERS if p.library == "memlab"}
    assert set(mine) == {("copy", "memlab_copy_"), ("transpose", "memlab_transpose")}
    assert all(p.dtypes == tuple(peers.ELEM) for p in mine.values())  # every element size memlab moves
    # Named like the other peers (library_operation), so a picture or a table tells them apart by name too.
    assert all(p.variant.startswith(p.library + "_") for p in peers.PEERS if p.lab in ("copy", "transpose"))


def test_memlab_peers_join_every_point_beside_torch_and_triton():
    cases = _plan(["copy", "--dtype", "f16", "--sizes", "2^16..2^31", "--src-offset", "0,2"])
    mine = [p for peer, p in cases if peer.variant == "memlab_copy_"]
    assert len(mine) == 16 * 2 and {p["src_offset"] for p in mine} == {0, 2}
    assert mine[-1] == {"dtype": "f16", "n": 1 << 31, "src_offset": 2, "dst_offset": 0}
    for lab_point in mine:  # at each point, the peers it races
        at = {peer.variant for peer, p in cases if {k: p[k] for k in lab_point} == lab_point}
        assert at == {"torch_copy_", "torch_clone", "triton_copy", "memlab_copy_"}
    cases = _plan(["transpose", "--shape", "16384x16384:f32,16411x8191:u8,8193x4099:f64"])
    assert [(peer.variant, p["dtype"]) for peer, p in cases if peer.library == "memlab"] == [
        ("memlab_transpose", "f32"), ("memlab_transpose", "u8"), ("memlab_transpose", "f64")]
    assert _plan(["copy", "--variant", "memlab_copy_", "--sizes", "4096"])[0][0].variant == "memlab_copy_"


def test_a_missing_library_skips_its_peers_with_the_reason():
    copy_ = next(p for p in peers.PEERS if p.variant == "memlab_copy_")
    torch_copy = next(p for p in peers.PEERS if p.variant == "torch_copy_")
    point = {"dtype": "f16", "n": 4096, "src_offset": 2, "dst_offset": 0}
    missing = {"memlab": "import memlab failed (No module named 'memlab')"}
    assert peers.skip_reason(copy_, point, missing) == missing["memlab"]
    assert peers.skip_reason(torch_copy, point, missing) == ""
    assert peers.skip_reason(copy_, point, {}) == ""  # 2 bytes off at f16 is a whole element
    # An offset that is not whole elements: every copy peer takes a dtype view, which torch refuses there.
    odd = dict(point, src_offset=1)
    assert peers.skip_reason(copy_, odd, {}) == peers.skip_reason(torch_copy, odd, {})
    assert peers.skip_reason(copy_, odd, {}) == "offsets must be whole elements"
    cases = _plan(["copy", "--sizes", "4096,8192"])
    lines = peers.missing_lines(cases, missing)
    assert lines == ["memlab-peers: memlab_copy_ (memlab's own library) skipped: import memlab failed "
                     "(No module named 'memlab')"]
    assert peers.missing_lines(_plan(["copy", "--variant", "torch_copy_"]), missing) == []  # none planned: silent


def _fake_memlab(version="0.1.0", devices=1, error=None):
    m = types.ModuleType("memlab")

    class Error(Exception):
        pass

    class LibraryNotFoundError(Error, RuntimeError):
        pass

    def library_version():
        if error:
            raise LibraryNotFoundError(error)
        return version

    m.Error, m.library_version = Error, library_version
    m.library_path = lambda: "/opt/memlab/libmemlab.so"
    m.device_count = lambda: devices
    return m


def test_probe_says_in_one_line_why_memlab_cannot_run(monkeypatch):
    monkeypatch.setitem(sys.modules, "memlab", None)  # import memlab raises ImportError
    module, version, why = peers.probe_memlab()
    assert module is None and version == "" and why.startswith("import memlab failed (") and "\n" not in why
    assert "pip install ./python" in why
    monkeypatch.setitem(sys.modules, "memlab", _fake_memlab(error="memlab: libmemlab was not found.\nTried: x"))
    module, _, why = peers.probe_memlab()
    assert module is None and why == "LibraryNotFoundError: memlab: libmemlab was not found. Tried: x"
    monkeypatch.setitem(sys.modules, "memlab", _fake_memlab(devices=0))
    module, _, why = peers.probe_memlab()
    assert module is None and "sees no CUDA device" in why and "/opt/memlab/libmemlab.so" in why
    fake = _fake_memlab()
    monkeypatch.setitem(sys.modules, "memlab", fake)
    assert peers.probe_memlab() == (fake, "memlab 0.1.0", "/opt/memlab/libmemlab.so")


def test_probe_of_this_checkouts_package_never_raises(monkeypatch):
    # The real package: here without a GPU (and maybe without libmemlab), so a reason, in one line.
    monkeypatch.syspath_prepend(os.path.join(REPO, "python"))
    monkeypatch.delitem(sys.modules, "memlab", raising=False)
    module, _, why = peers.probe_memlab()
    if module is not None:
        pytest.skip("memlab runs here (a GPU): the device run covers it")
    assert why and "\n" not in why


# ---- a run without a GPU: a fake torch, a fake timer, a fake torch peer beside memlab's -----------------------

class _FakeTimer:
    def __init__(self, torch, l2_bytes, max_time_s):
        pass

    @staticmethod
    def _summary(ms):
        return {"median_ms": ms, "min_ms": ms, "max_ms": ms, "p25_ms": ms, "p75_ms": ms, "samples": 10,
                "rel_spread": 0.0, "mean_ms": ms}

    def cold(self, fn):
        fn()
        return self._summary(0.01)

    def batch(self, fn, estimate_ms):
        return self._summary(0.009)

    def graph(self, fn, estimate_ms):
        return self._summary(0.008), ""


def _fake_torch():
    cuda = types.SimpleNamespace(
        is_available=lambda: True, current_device=lambda: 0, synchronize=lambda: None, empty_cache=lambda: None,
        OutOfMemoryError=type("OutOfMemoryError", (RuntimeError,), {}),
        get_device_properties=lambda i: types.SimpleNamespace(
            name="H100 (fake)", major=9, minor=0, multi_processor_count=132, L2_cache_size=50 << 20,
            total_memory=80 << 30, memory_clock_rate=2619000, memory_bus_width=5120))
    return types.SimpleNamespace(__version__="2.11.0", cuda=cuda)


@pytest.fixture
def no_gpu_run(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    monkeypatch.setattr(gpu_timing, "Timer", _FakeTimer)
    monkeypatch.setattr(peers.signal, "signal", lambda *a: None)  # leave pytest's handlers alone
    launched = []
    stand_in = peers.Peer("copy", "torch_copy_", "torch", lambda ctx, p: peers.Case(
        lambda: launched.append(p["n"]), lambda: "", 2 * p["n"] * peers.ELEM[p["dtype"]]))

    def run(argv, memlab_probe):
        monkeypatch.setattr(peers, "probe_memlab", lambda: memlab_probe)
        args = peers.parser().parse_args(argv + ["--quiet", "--out", str(tmp_path / "peers.json")])
        args.like_device = None
        cases = [(stand_in if peer.variant == "torch_copy_" else peer, p) for peer, p in peers.plan(args)]
        code = peers.run(args, cases)
        return code, json.loads((tmp_path / "peers.json").read_text()), launched
    return run


def test_without_memlab_its_peers_are_skipped_in_one_line_and_the_others_run(no_gpu_run, capsys):
    why = "import memlab failed (No module named 'memlab')"
    code, doc, launched = no_gpu_run(["copy", "--variant", "torch_copy_,memlab_copy_", "--dtype", "f16",
                                      "--sizes", "4096", "--src-offset", "0,2"], (None, "", why))
    assert code == 0 and launched  # the torch peer ran at both points
    err = capsys.readouterr().err
    assert err == f"memlab-peers: memlab_copy_ (memlab's own library) skipped: {why}\n"
    mine = [r for r in doc["results"] if r["variant"] == "memlab_copy_"]
    assert len(mine) == 2 and all(r["status"] == "skipped" and r["note"] == why for r in mine)
    assert all(r["library"] == "memlab" and r["peer"] is True and not r["verified"] for r in mine)
    assert [r["status"] for r in doc["results"] if r["variant"] == "torch_copy_"] == ["ok", "ok"]
    assert doc["libraries"] == {"memlab": f"skipped: {why}", "torch": "torch 2.11.0"}
    assert doc["ended"] == "complete"
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tools/setup.sh installs it)")
    with open(SCHEMA) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(doc)


def test_only_memlab_planned_and_missing_is_exit_4(no_gpu_run, capsys):
    code, doc, _ = no_gpu_run(["copy", "--variant", "memlab_copy_", "--sizes", "4096"], (None, "", "no libmemlab"))
    assert code == 4 and [r["status"] for r in doc["results"]] == ["skipped"]
    assert "every case was skipped" in capsys.readouterr().err


def test_a_memlab_record_names_memlabs_library_and_verifies_before_timing(no_gpu_run, monkeypatch):
    fake = _fake_memlab(version="0.1.0")
    calls = []
    mine = peers.Peer("copy", "memlab_copy_", "memlab", lambda ctx, p: peers.Case(
        lambda: calls.append(ctx.memlab), lambda: "", 2 * p["n"] * 2))
    monkeypatch.setattr(peers, "PEERS", [mine if p.variant == "memlab_copy_" else p for p in peers.PEERS])
    code, doc, _ = no_gpu_run(["copy", "--variant", "memlab_copy_", "--dtype", "f16", "--sizes", "4096"],
                              (fake, "memlab 0.1.0", "/opt/memlab/libmemlab.so"))
    assert code == 0 and calls and all(m is fake for m in calls)  # the case got the probed module
    (r,) = doc["results"]
    assert r["library"] == "memlab 0.1.0" and r["library"].split()[0] == "memlab" and r["peer"] is True
    assert r["status"] == "ok" and r["verified"] and r["cold"]["samples"] == 10 and r["gbps"] > 0
    assert doc["libraries"] == {"memlab": "memlab 0.1.0 (/opt/memlab/libmemlab.so)"}


def test_a_memlab_error_fails_the_case_not_the_run(no_gpu_run, monkeypatch):
    fake = _fake_memlab()

    def refuse():
        raise fake.Error("mismatched sizes: dst holds 8 bytes,\nsrc 16")

    mine = peers.Peer("copy", "memlab_copy_", "memlab", lambda ctx, p: peers.Case(refuse, lambda: "", 16))
    monkeypatch.setattr(peers, "PEERS", [mine if p.variant == "memlab_copy_" else p for p in peers.PEERS])
    code, doc, launched = no_gpu_run(["copy", "--variant", "memlab_copy_,torch_copy_", "--sizes", "4096"],
                                     (fake, "memlab 0.1.0", "/x"))
    assert code == 1 and launched
    failed = [r for r in doc["results"] if r["status"] == "failed"]
    assert [r["variant"] for r in failed] == ["memlab_copy_"]
    assert failed[0]["note"] == "memlab.Error: mismatched sizes: dst holds 8 bytes, src 16"
