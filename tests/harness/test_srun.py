#!/usr/bin/env python3
"""memlab started by a real srun: a one-node Slurm on this machine, on localhost (tools/gpu/local_slurm.py:
munged, slurmctld, slurmd in a folder of their own), started here and stopped after, a few seconds in all.

Each task of `srun -n 2` runs `memlab run transfer` with no GPU visible (CUDA_VISIBLE_DEVICES=): every task
must read its rank from the environment srun gives it, under the plain launch and the pmi2 and pmix plugins
(pmi2 sets PMI_RANK and no MPI_LOCALRANKID, pmix PMIX_RANK alone), and stop at the GPU check, exit 3, saying
which rank it is: "rank 1 of 2 (slurm (pmi2), local rank 1 of 2): no CUDA device on this rank". An
environment read wrong is exit 2 instead.

  test_srun.py MEMLAB        exit 0 passed, 1 failed, 77 skipped (no Slurm here; under CI=1 that fails)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "gpu"))
import local_slurm  # noqa: E402


def main():
    memlab = sys.argv[1]
    if local_slurm.missing():
        print(f"no Slurm on this machine ({', '.join(local_slurm.missing())} not found: apt-get install slurm-wlm "
              "munge libpmix-dev)")
        return 1 if os.environ.get("CI") == "1" else 77
    work = tempfile.mkdtemp(prefix="memlab_slurm_")
    failures = []
    try:
        env = local_slurm.start(work, cpus=4)
        env["CUDA_VISIBLE_DEVICES"] = ""
        listed = local_slurm.plugins(env)
        for mpi, name in (("none", "slurm"), ("pmi2", "slurm (pmi2)"), ("pmix", "slurm (pmix)")):
            if mpi != "none" and mpi not in listed:
                failures.append(f"srun --mpi={mpi}: the plugin is not installed ({listed.strip()})")
                continue
            r = subprocess.run([local_slurm.tool("srun"), "-n", "2", f"--mpi={mpi}", "--label", memlab, "run",
                                "transfer", "--variant", "nccl_all_reduce"], capture_output=True, text=True, env=env,
                               timeout=30)
            out = r.stdout + r.stderr
            before = len(failures)
            for rank in (0, 1):
                want = f"{rank}: memlab: rank {rank} of 2 ({name}, local rank {rank} of 2): no CUDA device on this rank"
                if want not in out:
                    failures.append(f"srun --mpi={mpi}: task {rank} did not say `{want}`:\n{out}")
            if not re.search(r"[Ee]xit(ed with exit)? code 3", out):
                failures.append(f"srun --mpi={mpi}: the tasks did not exit 3 (no GPU):\n{out}")
            print(f"srun --mpi={mpi}: {'ok' if len(failures) == before else 'FAILED'}")
    except RuntimeError as e:
        failures.append(str(e))
    finally:
        local_slurm.stop(work)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAILED:\n" + "\n".join(failures))
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
