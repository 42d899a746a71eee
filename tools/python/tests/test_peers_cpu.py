"""memlab-peers without a GPU: planning and usage errors, the gather lab's index draw reproduced
exactly, the derived fields as memlab derives them, and a results document that validates. The
GPU paths run on the H100 (tools/gpu/device_check.sh, tools/gpu/device_library.sh); here they are skipped with the reason."""
import json

import numpy as np
import pytest

from memlab_tools import peers

from conftest import BAD_FILES, SCHEMA, bad_file, exit_code


def _plan(argv):
    return peers.plan(peers.parser().parse_args(argv))


def test_plans_the_product_of_sizes_offsets_blocks_and_peers():
    cases = _plan(["copy", "--dtype", "f16", "--sizes", "2^12..2^14", "--src-offset", "0,2", "--triton-block", "1024,4096"])
    # 3 sizes x 2 offsets x (copy_ + clone + 2 Triton blocks + memlab.copy_)
    assert len(cases) == 3 * 2 * 5
    assert {c[1].get("block") for c in cases if c[0].variant == "triton_copy"} == {1024, 4096}
    assert cases[0][1] == {"dtype": "f16", "n": 4096, "src_offset": 0, "dst_offset": 0}


def test_a_shape_may_name_its_dtype_so_one_process_holds_the_acceptance_shapes():
    cases = _plan(["transpose", "--variant", "torch_t_contiguous", "--shape",
                   "12289x3001:f32,8191x8193:f16,16411x8191:u8,8193x4099:f64"])
    assert [(p["dtype"], p["rows"], p["cols"]) for _, p in cases] == [
        ("f32", 12289, 3001), ("f16", 8191, 8193), ("u8", 16411, 8191), ("f64", 8193, 4099)]
    # Untyped shapes take every --dtype; a typed one its own only.
    cases = _plan(["transpose", "--variant", "torch_t_contiguous", "--dtype", "f16,f32", "--shape", "64x64,32x32:u8"])
    assert [(p["dtype"], p["rows"]) for _, p in cases] == [("f16", 64), ("f32", 64), ("u8", 32)]


@pytest.mark.parametrize("argv, needle", [
    (["transpose", "--shape", "64x64:f17"], "--shape: \"64x64:f17\": 'f17' is not one of"),
    (["transpose", "--dtype", "f16", "--shape", "64x64:f32"], "--dtype: every --shape names its own dtype"),
    (["matmul", "--shape", "64x64x64:f32"], "--shape: \"64x64x64:f32\" is not 3 positive extents"),
    (["copy", "--sizes", "2^x"], "--sizes"),
    (["copy", "--variant", "fastest"], "unknown peer 'fastest'"),
    (["copy", "--dtype", "f17"], "--dtype"),
    (["transpose", "--shape", "12"], "--shape"),
    (["matmul", "--shape", "4x4"], "--shape"),
    (["copy", "--src-offset", "1KiB"], "--src-offset"),
    (["gather", "--table-bytes", "1zz"], '--table-bytes: invalid value "1zz"'),  # not --sizes
    (["gather", "--table-bytes", "1..2^40:+1"], "--table-bytes: \"1..2^40:+1\": the range has more than 10000 values"),
    (["copy", "--table-bytes", "8MiB"], "--table-bytes: copy has no such axis (it is gather's)"),
    (["transpose", "--sizes", "2^20"], "--sizes: transpose has no such axis"),
    (["copy", "--sizes", "1..8:*x"], "a geometric step is :*factor, a whole number"),
    (["copy", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    (["fft"], "argument lab: invalid choice: 'fft'"),
])
def test_usage_errors_before_any_gpu_work(argv, needle, capsys):
    assert exit_code(peers.main, argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("memlab-peers: ") and needle in err, err


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_like_a_bad_file_is_one_line_and_exit_2(tmp_path, capsys, kind):
    bad = bad_file(tmp_path, kind)
    assert peers.main(["copy", "--like", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"memlab-peers: --like: {bad}: ") and BAD_FILES[kind][1] in err


def test_an_out_that_cannot_be_written_is_refused_before_any_gpu_work(tmp_path, capsys):
    for out, needle in ((tmp_path / "no" / "r.json", "does not exist"), (tmp_path / "d.json", "is a folder")):
        if needle == "is a folder":
            out.mkdir()
        assert peers.main(["copy", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--out: {out}: " in err and needle in err


def test_max_time_and_out_are_checked(capsys):
    assert peers.main(["copy", "--max-time", "nan"]) == 2
    assert peers.main(["copy", "--out", "r.csv"]) == 2


def test_gather_indices_are_the_labs_draw():
    # Values from the lab's random_index/index_seed (src/labs/gather/gather.hpp), computed by the C++
    # code for n = 2^20, a table of 1000 elements: idx[0..4] and idx[2^20 - 1].
    idx = peers.gather_indices(1 << 20, 1000)
    assert idx.dtype == np.uint32 and idx.size == 1 << 20
    assert int(idx.max()) < 1000
    assert list(idx[:5]) == EXPECTED_FIRST and int(idx[-1]) == EXPECTED_LAST


# Printed by a program linked against the built lab (random_index(index_seed(2^20, 1000), i, 1000)).
EXPECTED_FIRST = [490, 777, 960, 199, 542]
EXPECTED_LAST = 373


def test_derived_fields_match_memlabs_derive():
    rec = {"lab": "copy", "bytes": 2_000_000, "flops": 0, "cold": {"median_ms": 0.001, "samples": 10},
           "batch": {"median_ms": 0.0008, "samples": 10}, "graph": {"median_ms": 0.0005, "samples": 10}}
    peers.derive(rec, {"peak_gbps": 4000.0, "measured_peak_gbps": 2500.0, "l2_bytes": 1 << 20, "sm_count": 132})
    assert rec["gbps"] == pytest.approx(2000) and rec["batch_gbps"] == pytest.approx(2500)
    assert rec["graph_gbps"] == pytest.approx(4000) and rec["pct_peak"] == pytest.approx(50)
    assert rec["pct_measured"] == pytest.approx(80) and rec["roof"]["name"] == "dram"


def test_a_peer_record_validates_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tools/setup.sh installs it)")
    summary = {"median_ms": 0.01, "min_ms": 0.01, "max_ms": 0.01, "p25_ms": 0.01, "p75_ms": 0.01, "samples": 3,
               "rel_spread": 0.0, "mean_ms": 0.01}
    rec = peers._record(peers.PEERS[0], {"dtype": "f16", "n": 4096, "src_offset": 0, "dst_offset": 0}, None, "torch 2.11")
    rec.update(cold=summary, batch=summary, graph=summary, graph_note="", verified=True, status="ok", note="",
               bytes=16384)
    peers.derive(rec, {"peak_gbps": 3352.3, "measured_peak_gbps": 3020.0, "l2_bytes": 50 << 20, "sm_count": 132})
    doc = {"schema": "memlab.results/1", "memlab_version": "memlab-tools 0.1.0", "git_sha": "x", "created": "x",
           "device": {"name": "H100", "cc": "9.0", "sm_count": 132, "l2_bytes": 52428800, "mem_clock_khz": 2619000,
                      "bus_width_bits": 5120, "peak_gbps": 3352.3}, "results": [rec]}
    with open(SCHEMA) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(doc)


def test_gpu_paths_need_torch_and_a_gpu():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here: the GPU paths run on the H100")
    if not torch.cuda.is_available():
        pytest.skip("no GPU here: the GPU paths run on the H100")
    assert peers.main(["copy", "--sizes", "4096", "--max-time", "0.05", "--quiet"]) == 0
