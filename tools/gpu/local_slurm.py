#!/usr/bin/env python3
"""A one-node Slurm on this machine, on localhost: munged, slurmctld and slurmd in a folder of their own,
with ports of the kernel's choosing, for runs and tests of memlab under a real srun. Up in well under a
second; nothing outside its folder is touched.

  local_slurm.py start DIR [--cpus N]   starts it; prints `export SLURM_CONF=DIR/slurm.conf`
  local_slurm.py stop DIR               stops it
  local_slurm.py capture DIR OUT TASKS MPI...
                                        starts one, records the environment srun gives each of TASKS tasks
                                        under each --mpi plugin (OUT/<mpi>_<TASKS>/<task>.env: its SLURM_*, PMI_*
                                        and PMIX_* variables), stops it: what a machine without Slurm replays

Debian's packages: slurm-wlm, munge, and libpmix-dev for --mpi=pmix (Slurm's plugin opens libpmix.so).
"""
import os
import shutil
import socket
import subprocess
import sys
import time

TOOLS = ["munged", "slurmctld", "slurmd", "srun", "sinfo"]


def tool(name):
    return shutil.which(name) or (f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None)


def missing():
    return [t for t in TOOLS if tool(t) is None]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(work, cpus=8):
    """Starts munged, slurmctld and slurmd in `work` (created); returns the environment to run srun in.
    Raises RuntimeError when a tool is missing or the node does not come up within 10 s."""
    if missing():
        raise RuntimeError(f"no Slurm here: {', '.join(missing())} not found (apt-get install slurm-wlm munge libpmix-dev)")
    for d in ("state", "spool", "tmp"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    key = os.path.join(work, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o600)
    sock = os.path.join(work, "munge.sock")
    subprocess.run([tool("munged"), f"--key-file={key}", f"--socket={sock}", f"--pid-file={work}/munged.pid",
                    f"--log-file={work}/munged.log", f"--seed-file={work}/munge.seed", "--force"], check=True,
                   timeout=10)
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    node = socket.gethostname().split(".")[0]
    conf = os.path.join(work, "slurm.conf")
    with open(conf, "w") as f:
        f.write(f"""ClusterName=memlab
SlurmctldHost=localhost
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={work}/state
SlurmdSpoolDir={work}/spool
TmpFS={work}/tmp
SlurmctldPidFile={work}/slurmctld.pid
SlurmdPidFile={work}/slurmd.pid
SlurmctldLogFile={work}/slurmctld.log
SlurmdLogFile={work}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=memlab Nodes={node} Default=YES MaxTime=INFINITE State=UP
""")
    env = dict(os.environ, SLURM_CONF=conf)
    subprocess.run([tool("slurmctld"), "-f", conf], check=True, timeout=10, env=env)
    subprocess.run([tool("slurmd"), "-f", conf], check=True, timeout=10, env=env)
    until = time.time() + 10
    while "idle" not in subprocess.run([tool("sinfo"), "-h", "-o", "%T"], capture_output=True, text=True,
                                       env=env).stdout:
        if time.time() > until:
            log = open(f"{work}/slurmctld.log").read()[-2000:] if os.path.exists(f"{work}/slurmctld.log") else ""
            stop(work)
            raise RuntimeError("the local Slurm did not come up within 10 s:\n" + log)
        time.sleep(0.05)
    return env


def _steps(work):
    """The slurmstepd processes this Slurm's slurmd started (their SLURM_CONF is ours): a step that outlives
    slurmd would keep its PMIx folder and a later Slurm's step of the same job and step ids could not start."""
    conf = f"SLURM_CONF={os.path.join(work, 'slurm.conf')}".encode()
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "slurmstepd":
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if conf in f.read().split(b"\0"):
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


def stop(work):
    steps = _steps(work)
    for name in ("slurmd", "slurmctld", "munged"):
        try:
            with open(os.path.join(work, f"{name}.pid")) as f:
                os.kill(int(f.read().strip()), 15)
        except (OSError, ValueError):
            pass
    for pid in steps:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    time.sleep(0.2)


def plugins(env):
    r = subprocess.run([tool("srun"), "--mpi=list"], capture_output=True, text=True, env=env)
    return r.stdout + r.stderr


def capture(work, out, tasks, mpis):
    env = start(work)
    try:
        listed = plugins(env)
        for mpi in mpis:
            if mpi != "none" and mpi not in listed:
                print(f"srun --mpi={mpi}: not installed here, not captured", file=sys.stderr)
                continue
            folder = os.path.join(out, f"{mpi}_{tasks}")
            os.makedirs(folder, exist_ok=True)
            # Each task writes its own variables, quoted for a shell to read back (PMIx's hold ';').
            script = ("import os, shlex\n"
                      f"with open(os.path.join({folder!r}, os.environ['SLURM_PROCID'] + '.env'), 'w') as f:\n"
                      "    for k, v in sorted(os.environ.items()):\n"
                      "        if k.startswith(('SLURM_', 'PMI_', 'PMIX_')) and k != 'SLURM_CONF':\n"
                      "            f.write(f'{k}={shlex.quote(v)}\\n')\n")
            subprocess.run([tool("srun"), "-n", str(tasks), f"--mpi={mpi}", sys.executable, "-c", script], check=True,
                           env=env, timeout=60)
            print(f"captured srun -n {tasks} --mpi={mpi}: {folder}")
    finally:
        stop(work)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, work = sys.argv[1], os.path.abspath(sys.argv[2])
    if what == "start":
        cpus = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--cpus" else 8
        env = start(work, cpus)
        print(f"export SLURM_CONF={env['SLURM_CONF']}")
    elif what == "stop":
        stop(work)
    elif what == "capture":
        capture(work, os.path.abspath(sys.argv[3]), int(sys.argv[4]), sys.argv[5:] or ["none", "pmi2", "pmix"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
