// Who started this process, and as which rank: a distributed job runs one memlab process per GPU,
// started by torchrun, Slurm's srun or an MPI launcher, each telling its processes their rank through
// the environment. Read here, on the host, before any GPU work; no CUDA or NCCL.
//
//   launcher   rank               world size             local rank                 local size
//   torchrun   RANK               WORLD_SIZE             LOCAL_RANK                 LOCAL_WORLD_SIZE
//   (env)      RANK               WORLD_SIZE             LOCAL_RANK (else RANK)     LOCAL_WORLD_SIZE (else WORLD_SIZE:
//                                                                                   one host)
//   mpi        OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE (Open MPI); PMI_RANK, PMI_SIZE,
//              MPI_LOCALRANKID, MPI_LOCALNRANKS (MPICH's Hydra, Intel MPI)
//   slurm      SLURM_PROCID       SLURM_STEP_NUM_TASKS   SLURM_LOCALID              SLURM_STEP_TASKS_PER_NODE's
//                                 (srun sets it for its job step; a batch script's own shell has
//                                 SLURM_NTASKS but no step, and runs as one process)
// srun's PMI plugins add their own variables, incomplete for this: `--mpi=pmi2` sets PMI_RANK and
// PMI_SIZE but no local rank (no MPI_LOCALRANKID), `--mpi=pmix` sets PMIX_RANK alone. Where a PMI's
// variables give no local rank and a Slurm step is there, the step's SLURM_* give it, and the PMI's rank
// and size must agree with the step's (the run records "slurm (pmi2)", "slurm (pmix)").
// torchrun is told from a plain environment by TORCHELASTIC_RUN_ID; when several launchers' variables
// are present (torchrun under srun), the innermost wins: torchrun, then MPI, then Slurm.
//
// The ranks meet through NCCL's own bootstrap: rank 0 listens on NCCL_COMM_ID (host:port), every rank
// connects there. memlab takes NCCL_COMM_ID as the user set it, else MASTER_ADDR with MASTER_PORT + 1
// (torchrun's own store listens on MASTER_PORT itself), else 127.0.0.1 when every rank runs on this
// host. No protocol of memlab's own. Ranks started with different world sizes cannot meet: NCCL's root
// (on rank 0) refuses them, and rank 0 says so (harness/world.hpp).
#pragma once

#include <functional>
#include <string>

namespace memlab {

struct launch_env {
  std::string launcher;  // "torchrun", "env", "mpi", "slurm"; "" when no launcher started this process
  std::string pmi;       // srun's PMI plugin where its variables are there: "pmi2", "pmix"; "" otherwise
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;
  std::string root;       // NCCL_COMM_ID for the ranks to meet: "host:port"; "" for one process
  std::string root_from;  // how it was found, for messages and the results' header

  // More than one rank: the run is a distributed job.
  [[nodiscard]] bool distributed() const { return size > 1; }
  // "rank 2 of 4 (torchrun, local rank 2 of 4)", "rank 1 of 2 (slurm (pmi2), local rank 1 of 2)".
  [[nodiscard]] std::string describe() const;
  // "slurm (pmi2)": the launcher and its PMI plugin, as the results record it.
  [[nodiscard]] std::string launcher_name() const;
};

// Reads a variable; nullptr when unset (std::getenv, or a table in tests).
using env_lookup = std::function<const char*(const char*)>;

// The launch this process belongs to. Throws std::invalid_argument with a one-line message naming
// the variable when the launcher's variables contradict each other (a rank outside the world, a
// size that is not a number, ranks on several hosts with no address to meet at).
launch_env detect_launch(const env_lookup& get);

// NCCL's default port for the root when nothing names one (29500 is torchrun's default store port).
inline constexpr int default_root_port = 29501;

}  // namespace memlab
