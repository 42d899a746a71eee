#!/usr/bin/env python3
"""memlab check's Prometheus textfile against the real servers: test_prometheus.py MEMLAB SOURCE_DIR

The committed 4 x H100 check with a competing copy on GPU 3 is replayed into node_exporter's textfile
folder (--out FILE.prom); promtool check metrics passes on the file; Debian's prometheus-node-exporter
serves it (the textfile collector alone) and Debian's prometheus scrapes it every 0.5 s; queries through
Prometheus's HTTP API return GPU 3's failing rows, the node's all-reduce (GPU 3 takes part in it) and no
others, with their fault codes and actions, and the run's verdict and action. Both servers run on
localhost ports from a temporary folder and are stopped at the end.
"""
import json
import os
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import expect, free_port, main, need, run, servers, wait_for  # noqa: E402

MEMLAB, SOURCE = sys.argv[1], sys.argv[2]
LOAD = os.path.join(SOURCE, "docs/results/h100x4/check/load.json")


def test():
    prometheus, exporter, promtool = need("prometheus", "prometheus-node-exporter", "promtool")
    with servers("prometheus") as s:
        textfiles = os.path.join(s.folder, "textfile")
        os.mkdir(textfiles)
        exporter_port, prometheus_port = free_port(), free_port()
        started = time.monotonic()
        s.start("node_exporter", [exporter, f"--web.listen-address=127.0.0.1:{exporter_port}",
                                  "--collector.disable-defaults", "--collector.textfile",
                                  f"--collector.textfile.directory={textfiles}"])
        config = os.path.join(s.folder, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["127.0.0.1:{exporter_port}"]
""")
        s.start("prometheus", [prometheus, f"--config.file={config}", f"--storage.tsdb.path={s.folder}/tsdb",
                               f"--web.listen-address=127.0.0.1:{prometheus_port}"])

        prom = os.path.join(textfiles, "memlab_check.prom")
        r = run([MEMLAB, "check", "--replay", LOAD, "--out", prom, "--quiet", "--format", "line"])
        expect(r.returncode == 1, f"the replay exits 1 (a failure): {r.returncode}\n{r.stdout}{r.stderr}")
        expect(os.listdir(textfiles) == ["memlab_check.prom"], f"only the .prom file: {os.listdir(textfiles)}")
        with open(prom, "rb") as f:
            lint = run([promtool, "check", "metrics"], input=f.read().decode())
        expect(lint.returncode == 0, f"promtool check metrics: {lint.returncode}\n{lint.stdout}{lint.stderr}")

        def query(q):
            s.check_alive()
            url = f"http://127.0.0.1:{prometheus_port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            with urllib.request.urlopen(url, timeout=2) as resp:
                body = json.load(resp)
            if body.get("status") != "success":
                raise RuntimeError(body)
            return body["data"]["result"]

        # The first scrape of node_exporter that carries the file. Prometheus 2.42 hands its scrape loops their
        # targets 5 s after it starts (its discovery manager's fixed update interval; the file was written and
        # linted meanwhile): the first scrape comes about 5.5 s after the start, whatever the scrape interval.
        wait_for("a scrape of the textfile", lambda: query("memlab_check_run_exit_status"), timeout=8.5)
        print(f"first scrape {time.monotonic() - started:.1f} s after the servers started")
        exit_status = query("memlab_check_run_exit_status")
        expect(exit_status[0]["value"][1] == "1", f"exit status 1: {exit_status}")
        expect(query('node_textfile_scrape_error') and query('node_textfile_scrape_error')[0]["value"][1] == "0",
               "node_exporter read the file without an error")

        def rows(q):
            return sorted((x["metric"].get("gpu", ""), x["metric"].get("peer", ""), x["metric"]["metric"])
                          for x in query(q))

        failing = rows('memlab_check_verdict{verdict="fail"} == 1')
        expect(failing == [("", "", "all_reduce"), ("3", "", "hbm_latency"), ("3", "", "l2_latency"),
                           ("3", "0", "peer_ce"), ("3", "1", "peer_ce"), ("3", "2", "peer_ce")],
               f"GPU 3's failing rows and the node's all-reduce: {failing}")
        others = rows('memlab_check_verdict{verdict=~"fail|warn|sibling|busy",gpu=~"[012]"} == 1')
        expect(others == [], f"no row of GPUs 0-2 flagged: {others}")
        sibling = rows('memlab_check_verdict{verdict="sibling"} == 1')
        expect(sibling == [("3", "", "d2h_pinned")], f"GPU 3's pinned device-to-host copy a sibling: {sibling}")
        faults = sorted((x["metric"]["metric"], x["metric"]["fault"], x["metric"]["action"])
                        for x in query('memlab_check_fault{gpu="3",scope="gpu"}'))
        expect(faults == [("d2h_pinned", "pcie_bandwidth", "monitor"), ("hbm_latency", "hbm_latency", "drain"),
                          ("l2_latency", "l2_latency", "drain")], f"GPU 3's fault codes and actions: {faults}")
        value = query('memlab_check_value{gpu="3",metric="hbm_latency"}')
        expect(len(value) == 1 and abs(float(value[0]["value"][1]) - 940.046875) < 1e-6
               and value[0]["metric"]["model"] == "NVIDIA H100 80GB HBM3" and value[0]["metric"]["unit"] == "ns",
               f"GPU 3's HBM latency, its unit and model: {value}")
        expect(query('memlab_check_run_verdict{verdict="fail"} == 1'), "the run's verdict: fail")
        expect(query('memlab_check_run_action{action="drain"} == 1'), "the run's action: drain")
        expect(len(query("memlab_check_gpu_info")) == 4, "four GPUs")


if __name__ == "__main__":
    main(test)
