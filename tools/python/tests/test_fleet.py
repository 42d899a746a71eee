"""memlab-fleet on a fleet made from the committed checks (memlab_tools.fleet_sim: 64 nodes of 4 or 8 H100s, four
weekly checks, the committed spread): it finds exactly the planted faults (two GPUs with a degraded HBM, a pair with a
slow link, a GPU drifting 1% a week) and nothing else, neither the fleet-wide change nor the swapped GPU; on clean
fleets it flags nothing. Its outputs: the table, JSON, a Prometheus textfile that promtool accepts, the exit status."""
import json
import os
import shutil
import subprocess

import pytest

from memlab_tools import fleet, fleet_sim

from conftest import REPO, exit_code


@pytest.fixture(scope="module")
def committed():
    return fleet_sim.Committed()


@pytest.fixture(scope="module")
def planted(committed, tmp_path_factory):
    """The default fleet (seed 2026) written as check files, as a weekly job leaves them."""
    sim = fleet_sim.Fleet(committed, seed=2026)
    out = tmp_path_factory.mktemp("fleet")
    assert fleet_sim.write(sim, str(out)) == 64 * 4
    return sim, out


def test_the_planted_faults_are_found_and_nothing_else(planted, tmp_path, capsys):
    sim, out = planted
    want = sim.planted()
    js, prom = tmp_path / "fleet.json", tmp_path / "fleet.prom"
    assert fleet.main([str(out), "--json", str(js), "--prometheus", str(prom)]) == 1
    table = capsys.readouterr().out
    assert table.startswith("OUTLIERS: 2 GPUs, 1 pair; DRIFT: 1 GPU among 428 GPUs of 64 nodes")
    doc = json.loads(js.read_text())
    got_out = {(x["node"], x["gpu"], x["peer"], x["metric"]) for x in doc["findings"] if x["kind"] == "outlier"}
    got_drift = {(x["node"], x["gpu"], x["peer"], x["metric"]) for x in doc["findings"] if x["kind"] == "drift"}
    assert got_out == set(want["outliers"])
    assert got_drift == set(want["drifts"])
    assert doc["nodes"] == 64 and doc["gpus"] == 428 and doc["files"] == 256 and doc["not_judged"] == []
    valid(doc, "fleet.schema.json")
    valid(want, "fleet-sim.schema.json")
    # the drifting GPU is found by its serial, 3% down over 21 days, while its model's median stayed within 0.1%
    d = next(x for x in doc["findings"] if x["kind"] == "drift" and x["metric"] == "hbm_copy")
    assert d["identity"].startswith("serial ") and abs(d["worse_by"] - 0.03) < 0.004 and d["days"] == 21
    assert abs(d["model_moved"]) < 0.001 and len(d["history"]) == 4
    # the drifting GPU is no outlier yet (3% < 5%): only its history shows it
    assert (d["node"], d["gpu"], None, "hbm_copy") not in got_out
    text = prom.read_text()
    assert text.count("\nmemlab_fleet_outlier{") == 6 and text.count("\nmemlab_fleet_drift{") == 2
    assert 'memlab_check_value{machine="node001",gpu="0",peer="",metric="hbm_copy"' in text
    promtool_accepts(prom)


def valid(doc, schema):
    """`doc` (through JSON) against docs/<schema>."""
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(REPO, "docs", schema)) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(json.loads(json.dumps(doc)))


def promtool_accepts(path):
    """Prometheus's own checker on the textfile (Debian's prometheus package)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI"):
            pytest.fail("promtool is missing (Debian's prometheus package; tools/setup.sh installs it)")
        return
    with open(path, "rb") as f:
        r = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stdout + r.stderr


def test_rule_on_a_small_example():
    m, s = fleet.robust([100.0] * 9 + [80.0])
    assert m == 100.0 and s == 0.0
    assert fleet.worse_by(94.0, 100.0, True) == pytest.approx(0.06)
    assert fleet.worse_by(106.0, 100.0, False) == pytest.approx(0.06)
    b, a = fleet.theil_sen([0, 7, 14, 21, 28], [1.0, 0.99, 5.0, 0.97, 0.96])  # one odd check does not move it
    assert b == pytest.approx(-0.01 / 7) and exit_code(fleet.main, ["--bogus"]) == 2
