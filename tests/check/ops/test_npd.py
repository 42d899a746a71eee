#!/usr/bin/env python3
"""memlab-npd-check, the node-problem-detector custom plugin, on replays: test_npd.py MEMLAB SOURCE_DIR

node-problem-detector reads a custom plugin's exit status (0 healthy, 1 problem, 2 unknown) and the first
line of its stdout, cut at max_output_length. Replays of committed runs stand in for live checks: the 4 x
H100 run with a competing copy on GPU 3 is a problem naming GPU 3; a passing run is healthy; a run on a busy
GPU, a model without a reference and bad settings are unknown. The plugin's configuration and the example
DaemonSet's copy of it are the same and name the shipped program.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import expect, main  # noqa: E402

MEMLAB, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PLUGIN = os.path.join(SOURCE, "src/check/ops/memlab-npd-check")
OPS = os.path.join(SOURCE, "src/check/ops/kubernetes")
RESULTS = os.path.join(SOURCE, "docs/results/h100x4/check")


def plugin(args, **env):
    e = {"PATH": "/usr/bin:/bin", "MEMLAB": MEMLAB, "MEMLAB_CHECK_ARGS": args}
    e.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([PLUGIN], capture_output=True, text=True, timeout=10, env=e)
    return r.returncode, r.stdout


def test():
    config = json.load(open(os.path.join(OPS, "memlab-check.json")))
    limit = config["pluginConfig"]["max_output_length"]
    expect(config["plugin"] == "custom" and config["rules"][0]["path"].endswith("/memlab-npd-check"),
           f"a custom plugin running memlab-npd-check: {config}")
    expect(config["rules"][0]["condition"] == config["conditions"][0]["type"], "the rule sets the condition")
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        docs = list(yaml.safe_load_all(open(os.path.join(OPS, "node-problem-detector-memlab.yaml"))))
        kinds = [d["kind"] for d in docs]
        expect(kinds == ["ConfigMap", "DaemonSet"], f"a ConfigMap and a DaemonSet: {kinds}")
        expect(json.loads(docs[0]["data"]["memlab-check.json"]) == config,
               "the DaemonSet's ConfigMap holds memlab-check.json as it is")
        args = docs[1]["spec"]["template"]["spec"]["containers"][0]["command"]
        expect("--config.custom-plugin-monitor=/config/memlab-check.json" in args, f"the monitor configured: {args}")

    code, out = plugin(f"--replay {RESULTS}/load.json")
    expect(code == 1, f"the load on GPU 3 is a problem (1): {code} {out!r}")
    expect(out.startswith("memlab check fail (drain): GPU 3 l2_latency 160.5 ns fail (drain)"), f"names GPU 3: {out!r}")
    expect(out.count("\n") == 1 and len(out.strip()) <= limit, f"one line within {limit}: {len(out)}")
    code, out = plugin(f"--replay {RESULTS}/run1.json")
    expect(code == 0 and out.startswith("memlab check pass"), f"a passing run is healthy (0): {code} {out!r}")

    with tempfile.TemporaryDirectory() as d:
        # A GPU another process used: GPU 2's HBM latency doubled with a process on it, written as /2.
        run = subprocess.run([MEMLAB, "check", "--replay", f"{RESULTS}/run1.json", "--format", "json", "--quiet"],
                             capture_output=True, text=True, timeout=10)
        j = json.loads(run.stdout)
        j["gpus"][2]["processes"] = [{"pid": 4242, "name": "python3", "used_mib": 70000.0, "seen": "during"}]
        for r in j["rows"]:
            if r["metric"] == "hbm_latency" and r["gpu"] == 2:
                r["value"] *= 2
        with open(f"{d}/busy.json", "w") as f:
            json.dump(j, f)
        code, out = plugin(f"--replay {d}/busy.json")
        expect(code == 2 and out.startswith("memlab check busy (rerun): GPU 2 busy: pid 4242 python3"),
               f"a busy GPU is unknown (2), the process named: {code} {out!r}")
        # No reference for the model: measured, not judged.
        os.mkdir(f"{d}/refs")
        ref = json.load(open(os.path.join(SOURCE, "references/nvidia-h100-80gb-hbm3.json")))
        ref["model"]["name"] = "NVIDIA H200"
        with open(f"{d}/refs/nvidia-h200.json", "w") as f:
            json.dump(ref, f)
        code, out = plugin(f"--replay {RESULTS}/load.json --references {d}/refs")
        expect(code == 2 and out.startswith("memlab check no_reference"), f"no reference: unknown (2): {code} {out!r}")
        # The check file kept where MEMLAB_NPD_STATE says.
        code, out = plugin(f"--replay {RESULTS}/run1.json", MEMLAB_NPD_STATE=d)
        expect(code == 0 and json.load(open(f"{d}/check.json"))["schema"] == "memlab.check/2", "check.json kept")

    for args, env, words in (("--replay /nonexistent.json", {}, "refused its arguments: memlab check: --replay"),
                             (f"--replay {RESULTS}/run1.json", {"MEMLAB": "/nonexistent/memlab"}, "no memlab binary"),
                             (f"--replay {RESULTS}/run1.json", {"MEMLAB_NPD_MAX": 5}, "MEMLAB_NPD_MAX='5'")):
        code, out = plugin(args, **env)
        expect(code == 2 and out.startswith("memlab check unknown: ") and words in out and out.count("\n") == 1,
               f"{args} {env}: unknown (2), one line: {code} {out!r}")


if __name__ == "__main__":
    main(test)
