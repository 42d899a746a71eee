"""memlab-fleet's bad input: a file of another schema, a truncated file, an empty one, another GPU model mixed in, an
empty folder, a path that is not there. One line each on stderr naming it; the rest of the fleet judged; exit 4 when
part of the input was not judged and nothing flagged, 1 when something is flagged, 2 when nothing could be judged."""
import json
import os
import re

import pytest

from memlab_tools import fleet, fleet_sim

from conftest import FIXTURES, exit_code


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A clean fleet of 12 H100 nodes over two weeks, and one node of another model (an H200)."""
    sim = fleet_sim.Fleet(fleet_sim.Committed(), seed=11, nodes=12, weeks=2, clean=True, other_model=1)
    out = tmp_path_factory.mktemp("small")
    fleet_sim.write(sim, str(out))
    return out


def run(capsys, *args):
    code = exit_code(fleet.main, [str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, [line for line in captured.err.splitlines() if line]


def test_bad_files_are_one_line_each_and_the_rest_is_judged(small, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    with open(os.path.join(FIXTURES, "copy", "copy_f16.json"), "rb") as f:
        (bad / "results.json").write_bytes(f.read())
    node = next(p for p in sorted(small.rglob("node001.json")))
    (bad / "truncated.json").write_bytes(node.read_bytes()[:5000])
    (bad / "empty.json").write_bytes(b"")
    code, out, err = run(capsys, small, bad)
    assert code == 4
    assert len(err) == 4, err
    assert any(re.match(rf"memlab-fleet: {re.escape(str(bad / 'results.json'))}: not a memlab check file "
                        r"\(schema \"memlab.results/1\"", e) for e in err)
    assert any(e.startswith(f"memlab-fleet: {bad / 'truncated.json'}: truncated: its JSON ends after 5000 bytes")
               for e in err)
    assert any(e.startswith(f"memlab-fleet: {bad / 'empty.json'}: empty") for e in err)
    assert any(e.startswith("memlab-fleet: NVIDIA H200: 1 node(s) (h200-01) too few to compare") for e in err)
    # the H100 nodes are judged all the same
    assert out.startswith("NO OUTLIER, NO DRIFT among 80 GPUs of 12 nodes (NVIDIA H100 80GB HBM3); 1 node of another "
                          "model not judged\n")


def test_a_finding_outranks_the_bad_files(tmp_path, capsys):
    sim = fleet_sim.Fleet(fleet_sim.Committed(), seed=11, nodes=12, weeks=2)
    fleet_sim.write(sim, str(tmp_path / "fleet"))
    (tmp_path / "fleet" / "other.json").write_text(json.dumps({"schema": "something/1"}))
    code, out, err = run(capsys, tmp_path / "fleet")
    assert code == 1 and out.startswith("OUTLIERS: 2 GPUs, 1 pair") and len(err) == 1 and "something/1" in err[0]


def test_nothing_to_judge_is_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, empty)
    assert code == 2 and out == ""
    assert err == [f"memlab-fleet: {empty}: no .json files in this folder",
                   f"memlab-fleet: nothing to judge: no readable memlab check file in {empty}"]
    (empty / "x.json").write_text("{")
    code, _, err = run(capsys, empty, tmp_path / "missing")
    assert code == 2 and len(err) == 3 and "no such file or folder" in err[0] and "truncated" in err[1]


def test_a_missing_path_beside_a_fleet_is_exit_4(small, tmp_path, capsys):
    code, out, err = run(capsys, small, tmp_path / "missing", "--format", "json")
    assert code == 4 and json.loads(out)["exit_status"] == 4
    assert err[0] == f"memlab-fleet: {tmp_path / 'missing'}: no such file or folder"


def test_an_output_that_cannot_be_written_is_exit_2(small, tmp_path, capsys):
    code, _, err = run(capsys, small, "--json", tmp_path / "no" / "such" / "dir" / "f.json")
    assert code == 2 and err[-1].startswith("memlab-fleet: ") and "cannot write there" in err[-1]
