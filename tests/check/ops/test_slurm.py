#!/usr/bin/env python3
"""memlab-slurm-healthcheck on a real one-node Slurm: test_slurm.py MEMLAB SOURCE_DIR

Debian's munged, slurmctld and slurmd run on localhost ports from a temporary folder, the node's
HealthCheckProgram the shipped memlab-slurm-healthcheck (through a two-line file standing in for
/etc/default/memlab-slurm-healthcheck, since slurmd runs it with an empty environment). slurmd runs it when it
starts: with --replay of the committed 4 x H100 check with a competing copy on GPU 3, the node drains with a
reason naming GPU 3, each failing metric and the action. Then, run as slurmd runs it: a passing check resumes
the node it drained; a node an administrator drained stays drained with the administrator's reason, whatever
the check finds; a reason limit is kept; bad settings change nothing. Every daemon is stopped at the end.
"""
import os
import pwd
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import expect, free_port, main, need, run, servers, wait_for  # noqa: E402

MEMLAB, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HEALTHCHECK = os.path.join(SOURCE, "src/check/ops/memlab-slurm-healthcheck")
LOAD = os.path.join(SOURCE, "docs/results/h100x4/check/load.json")
PASSING = os.path.join(SOURCE, "docs/results/h100x4/check/run1.json")
NODE = "memlabnode"


def test():
    munged, munge, slurmctld, slurmd, scontrol = need("munged", "munge", "slurmctld", "slurmd", "scontrol")
    with servers("slurm") as s:
        d = s.folder
        os.chmod(d, 0o755)  # munged wants its socket's folders searchable by all
        os.makedirs(f"{d}/munge", mode=0o700)
        with open(f"{d}/munge/munge.key", "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(f"{d}/munge/munge.key", 0o400)
        sock = f"{d}/munge/munge.sock"
        s.start("munged", [munged, "--foreground", "--force", f"--socket={sock}", f"--key-file={d}/munge/munge.key",
                           f"--pid-file={d}/munge/munged.pid", f"--log-file={d}/munge/munged.log",
                           f"--seed-file={d}/munge/seed"])
        wait_for("munged", lambda: run([munge, "-S", sock, "-n"]).returncode == 0, timeout=5)

        # What /etc/default/memlab-slurm-healthcheck would hold; the file to replay is the test's to choose.
        with open(f"{d}/defaults", "w") as f:
            f.write(f"MEMLAB={MEMLAB}\nMEMLAB_CHECK_ARGS=\"--replay $(cat {d}/replay)\"\n"
                    f"MEMLAB_SLURM_STATE={d}/state\nSLURM_CONF={d}/slurm.conf\nexport SLURM_CONF\n")
        with open(f"{d}/healthcheck", "w") as f:
            f.write(f"#!/bin/sh\nMEMLAB_SLURM_DEFAULTS={d}/defaults exec {HEALTHCHECK} \"$@\" 2>>{d}/healthcheck.log\n")
        os.chmod(f"{d}/healthcheck", 0o755)
        with open(f"{d}/replay", "w") as f:
            f.write(LOAD)

        host = socket.gethostname().split(".")[0]
        user = pwd.getpwuid(os.getuid()).pw_name
        for sub in ("ctld", "spool"):
            os.mkdir(f"{d}/{sub}")
        with open(f"{d}/slurm.conf", "w") as f:
            f.write(f"""ClusterName=memlabtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/ctld
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/linear
SlurmUser={user}
SlurmdUser={user}
ReturnToService=2
MpiDefault=none
HealthCheckProgram={d}/healthcheck
HealthCheckInterval=3600
HealthCheckNodeState=ANY
NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes={NODE} Default=YES State=UP
""")
        env = dict(os.environ, SLURM_CONF=f"{d}/slurm.conf")

        def show():
            r = run([scontrol, "show", "node", NODE, "-o"], env=env)
            if r.returncode != 0:
                return None
            fields = dict(x.split("=", 1) for x in r.stdout.split(" Reason=")[0].split() if "=" in x)
            reason = r.stdout.split(" Reason=", 1)[1].rsplit(" [", 1)[0] if " Reason=" in r.stdout else ""
            return fields.get("State", ""), reason

        s.start("slurmctld", [slurmctld, "-D", "-f", f"{d}/slurm.conf"], env=env)
        wait_for("slurmctld", lambda: run([scontrol, "ping"], env=env).returncode == 0, timeout=8)
        # slurmd runs its HealthCheckProgram as it starts: the replay of the faulted run.
        s.start("slurmd", [slurmd, "-D", "-f", f"{d}/slurm.conf", "-N", NODE], env=env)
        state, reason = wait_for("the node drained by its health check",
                                 lambda: (lambda x: x if x and "DRAIN" in x[0] else None)(show()), timeout=8)
        log = open(f"{d}/healthcheck.log").read() if os.path.exists(f"{d}/healthcheck.log") else ""
        expect(reason.startswith("memlab check fail (drain): GPU 3 l2_latency 160.5 ns fail (drain); "
                                 "GPU 3 hbm_latency 940.0 ns fail (drain)"), f"the reason names GPU 3: {reason!r}\n{log}")
        expect(len(reason) <= 200, f"the reason within 200 characters: {len(reason)}")
        print(f"drained by slurmd's health check: {state}, Reason={reason}")
        expect(os.path.exists(f"{d}/state/check.json"), "the check file kept in MEMLAB_SLURM_STATE")

        def healthcheck(replay, **settings):
            """The program as slurmd runs it: an empty environment but the node's name."""
            with open(f"{d}/replay", "w") as f:
                f.write(replay)
            extra = "".join(f"{k}={v}\n" for k, v in settings.items())
            with open(f"{d}/defaults.more", "w") as f:
                f.write(extra)
            return subprocess.run(["env", "-i", f"SLURMD_NODENAME={NODE}", f"MEMLAB_SLURM_DEFAULTS={d}/defaults2",
                                   HEALTHCHECK], capture_output=True, text=True, timeout=8, cwd=d)

        with open(f"{d}/defaults2", "w") as f:
            f.write(f". {d}/defaults\n. {d}/defaults.more\n")

        # A passing check resumes the node this program drained.
        r = healthcheck(PASSING)
        expect(r.returncode == 0, f"a passing check exits 0: {r.returncode} {r.stderr}")
        state, reason = show()
        expect("DRAIN" not in state and reason == "", f"resumed: {state} {reason!r} ({r.stderr})")
        # ... and leaves a passing node alone.
        r = healthcheck(PASSING)
        expect(r.returncode == 0 and "DRAIN" not in show()[0], f"a passing node left alone: {show()} {r.stderr}")

        # A reason limit is kept: the rows that do not fit are counted.
        r = healthcheck(LOAD, MEMLAB_SLURM_REASON_MAX=90)
        state, reason = show()
        expect(r.returncode == 1 and "DRAIN" in state, f"drained again: {state} {r.stderr}")
        expect(len(reason) <= 90 and reason.endswith("more"), f"a reason of 90 characters at most: {reason!r}")
        run([scontrol, "update", f"nodename={NODE}", "state=resume"], env=env)

        # A node someone else drained: never resumed, its reason never written over.
        admin = "admin: DIMM swap booked"
        run([scontrol, "update", f"nodename={NODE}", "state=drain", f"reason={admin}"], env=env)
        for replay, code in ((PASSING, 0), (LOAD, 1)):
            r = healthcheck(replay)
            state, reason = show()
            expect(r.returncode == code and "DRAIN" in state and reason == admin,
                   f"an administrator's drain kept ({replay}): {r.returncode} {state} {reason!r} {r.stderr}")
            expect("left as it is" in r.stderr or code == 0, f"says it left the node: {r.stderr}")

        # Bad settings: one line, exit 2, the node untouched.
        for setting, words in (({"MEMLAB_SLURM_REASON_MAX": 10}, "MEMLAB_SLURM_REASON_MAX='10'"),
                               ({"MEMLAB_SLURM_DEADLINE": 90}, "MEMLAB_SLURM_DEADLINE='90'"),
                               ({"MEMLAB": "/nonexistent/memlab"}, "no memlab binary")):
            r = healthcheck(LOAD, **setting)
            expect(r.returncode == 2 and r.stderr.count("\n") == 1 and words in r.stderr,
                   f"{setting}: exit 2, one line: {r.returncode} {r.stderr!r}")
            expect(show()[1] == admin, f"{setting}: the node untouched: {show()}")
        s.check_alive()


if __name__ == "__main__":
    main(test)
