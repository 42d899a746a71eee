"""memlab-fleet's Prometheus textfile served by the real servers: Debian's prometheus-node-exporter reads it with its
textfile collector, Debian's prometheus scrapes that node_exporter, and a query through Prometheus's HTTP API returns
the planted outliers and drifts and nothing else. Both servers on free localhost ports, stopped at the end; the test
waits at most 20 s for the scrape. Without them: skipped, except under CI (tools/setup.sh installs them)."""
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from memlab_tools import cli, fleet, fleet_sim

NODE_EXPORTER = ("prometheus-node-exporter", "node_exporter")


def program(names):
    return next((shutil.which(n) for n in names if shutil.which(n)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=2) as r:
        return json.load(r)["data"]["result"]


@pytest.fixture
def servers(tmp_path):
    exporter, prometheus = program(NODE_EXPORTER), program(("prometheus",))
    if exporter is None or prometheus is None:
        if os.environ.get("CI"):
            pytest.fail("prometheus or prometheus-node-exporter is missing (Debian's packages; tools/setup.sh)")
        pytest.skip("prometheus and prometheus-node-exporter are not installed")
    textfiles = tmp_path / "textfiles"
    textfiles.mkdir()
    p_exporter, p_prom = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                      f"  - job_name: fleet\n    static_configs:\n      - targets: ['127.0.0.1:{p_exporter}']\n")
    procs = []
    try:
        procs.append(subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{p_exporter}",
                                       "--collector.disable-defaults", "--collector.textfile",
                                       f"--collector.textfile.directory={textfiles}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                       f"--web.listen-address=127.0.0.1:{p_prom}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield textfiles, p_prom
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_prometheus_scrapes_the_fleets_findings(servers):
    textfiles, port = servers
    sim = fleet_sim.Fleet(fleet_sim.Committed(), seed=2026, nodes=16, weeks=4)
    f = fleet.judge(sim.checks())
    cli.write_text(str(textfiles / "memlab_fleet.prom"), fleet.prometheus(f))
    want = sim.planted()
    deadline = time.monotonic() + 20
    outliers = []
    while time.monotonic() < deadline:
        try:
            outliers = query(port, "memlab_fleet_outlier")
            if outliers:
                break
        except OSError:
            pass  # not listening yet
        time.sleep(0.25)
    assert outliers, "Prometheus did not scrape the fleet's file within 20 s"
    # (Prometheus drops an empty label: a GPU's row has no peer there)
    got = {(s["metric"]["machine"], int(s["metric"]["gpu"]),
            int(s["metric"]["peer"]) if s["metric"].get("peer") else None, s["metric"]["metric"]) for s in outliers}
    assert got == {tuple(x) for x in want["outliers"]}
    drifts = query(port, "memlab_fleet_drift")
    assert {(s["metric"]["machine"], int(s["metric"]["gpu"]), s["metric"]["metric"]) for s in drifts} == \
        {(n, g, m) for n, g, _, m in want["drifts"]}
    assert all(s["metric"]["serial"] for s in drifts)
    # the node's own names serve the fleet's newest rows: every GPU's HBM copy, one series each
    assert len(query(port, 'memlab_check_value{metric="hbm_copy"}')) == f.gpus
    assert float(query(port, "memlab_fleet_nodes")[0]["value"][1]) == 16
