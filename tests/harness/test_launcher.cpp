// Who started memlab: torchrun, a plain environment, Slurm's srun (with its pmi2 and pmix plugins), Open
// MPI or MPICH, or no launcher; the rank, the world and the local rank each gives, where the ranks meet,
// and the one-line errors for an environment that contradicts itself. No GPU, no NCCL. Each environment is
// the one its launcher sets (a real srun's is tested in test_srun.sh, on a Slurm started on this machine).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness/launcher.hpp"

namespace memlab {
namespace {

launch_env from(const std::map<std::string, std::string>& vars) {
  return detect_launch([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    (void)from(vars);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(launcher, no_launcher_is_one_process) {
  const launch_env e = from({{"PATH", "/usr/bin"}});
  EXPECT_EQ(e.launcher, "");
  EXPECT_FALSE(e.distributed());
  EXPECT_EQ(e.size, 1);
  EXPECT_EQ(e.describe(), "one process");
}

TEST(launcher, torchrun_meets_one_port_above_its_store) {
  const launch_env e = from({{"RANK", "2"},
                             {"WORLD_SIZE", "4"},
                             {"LOCAL_RANK", "2"},
                             {"LOCAL_WORLD_SIZE", "4"},
                             {"MASTER_ADDR", "127.0.0.1"},
                             {"MASTER_PORT", "29500"},
                             {"TORCHELASTIC_RUN_ID", "none"}});
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_TRUE(e.distributed());
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.size, 4);
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.root, "127.0.0.1:29501");  // torchrun's store holds 29500 itself
  EXPECT_NE(e.root_from.find("MASTER_PORT + 1"), std::string::npos);
}

TEST(launcher, a_plain_environment_on_one_host) {
  const launch_env e = from({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(e.launcher, "env");
  EXPECT_EQ(e.local_rank, 1);  // LOCAL_RANK defaults to RANK, LOCAL_WORLD_SIZE to WORLD_SIZE: one host
  EXPECT_EQ(e.local_size, 2);
  EXPECT_EQ(e.root, "127.0.0.1:" + std::to_string(default_root_port));
}

TEST(launcher, the_users_nccl_comm_id_wins) {
  const launch_env e =
      from({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"NCCL_COMM_ID", "10.0.0.1:4000"}, {"MASTER_ADDR", "x"}});
  EXPECT_EQ(e.root, "10.0.0.1:4000");
  EXPECT_EQ(e.root_from, "NCCL_COMM_ID");
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"NCCL_COMM_ID", "10.0.0.1"}}).find("host:port"),
            std::string::npos);
}

TEST(launcher, slurm_step_with_tasks_per_node) {
  const launch_env e = from({{"SLURM_PROCID", "5"},
                             {"SLURM_STEP_NUM_TASKS", "8"},
                             {"SLURM_LOCALID", "1"},
                             {"SLURM_NODEID", "1"},
                             {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
                             {"SLURM_JOB_ID", "123456"},
                             {"MASTER_ADDR", "node01"}});
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.root, "node01:" + std::to_string(20000 + 123456 % 20000));  // a port of the job's own
  // Uneven nodes: "3,2(x2)" is 3 on node 0, 2 on nodes 1 and 2.
  EXPECT_EQ(from({{"SLURM_PROCID", "4"},
                  {"SLURM_STEP_NUM_TASKS", "7"},
                  {"SLURM_LOCALID", "1"},
                  {"SLURM_NODEID", "2"},
                  {"SLURM_STEP_TASKS_PER_NODE", "3,2(x2)"},
                  {"MASTER_ADDR", "n0"}})
                .local_size,
            2);
}

TEST(launcher, a_slurm_batch_shell_is_one_process) {
  // sbatch's own shell has SLURM_PROCID and SLURM_NTASKS but no job step: memlab started there
  // directly is one process, not rank 0 of a world that never comes.
  const launch_env e = from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}});
  EXPECT_FALSE(e.distributed());
  EXPECT_EQ(e.launcher, "");
}

TEST(launcher, open_mpi_and_mpich) {
  const launch_env o = from({{"OMPI_COMM_WORLD_RANK", "3"},
                             {"OMPI_COMM_WORLD_SIZE", "4"},
                             {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(o.launcher, "mpi");
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.root, "127.0.0.1:" + std::to_string(default_root_port));
  const launch_env m = from({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}});
  EXPECT_EQ(m.launcher, "mpi");
  EXPECT_EQ(m.size, 2);
}

// A Slurm step's variables as srun sets them for task `rank` of `size`, all on one node.
std::map<std::string, std::string> slurm_step(int rank, int size) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_STEP_NUM_TASKS", std::to_string(size)},
          {"SLURM_LOCALID", std::to_string(rank)},
          {"SLURM_NODEID", "0"},
          {"SLURM_STEP_TASKS_PER_NODE", std::to_string(size)},
          {"SLURM_JOB_ID", "77"},
          {"SLURM_NTASKS", std::to_string(size)}};
}

TEST(launcher, srun_with_pmi2_takes_the_local_rank_from_the_step) {
  // srun --mpi=pmi2 (or MpiDefault=pmi2) adds PMI_RANK, PMI_SIZE, PMI_FD, PMI_JOBID, but no MPI_LOCALRANKID.
  auto vars = slurm_step(3, 4);
  vars.insert({{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"PMI_FD", "5"}, {"PMI_JOBID", "77.0"}});
  const launch_env e = from(vars);
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.pmi, "pmi2");
  EXPECT_EQ(e.launcher_name(), "slurm (pmi2)");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.size, 4);
  EXPECT_EQ(e.local_rank, 3);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.describe(), "rank 3 of 4 (slurm (pmi2), local rank 3 of 4)");
  EXPECT_EQ(e.root, "127.0.0.1:" + std::to_string(20000 + 77));
}

TEST(launcher, srun_with_pmix_takes_everything_but_the_rank_from_the_step) {
  // srun --mpi=pmix: PMIX_RANK, PMIX_NAMESPACE and the server's variables; the rest is in the PMIx server.
  auto vars = slurm_step(1, 2);
  vars.insert({{"PMIX_RANK", "1"},
               {"PMIX_NAMESPACE", "slurm.pmix.77.0"},
               {"PMIX_SERVER_URI41", "pmix-server.1;tcp4://127.0.0.1:1"}});
  const launch_env e = from(vars);
  EXPECT_EQ(e.launcher_name(), "slurm (pmix)");
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.size, 2);
  EXPECT_EQ(e.local_size, 2);
}

TEST(launcher, mpich_inside_a_slurm_step_is_mpi) {
  // Hydra's mpirun started by srun: its PMI variables are complete and win over the step's (whose
  // SLURM_PROCID numbers Hydra's proxies, not the ranks).
  auto vars = slurm_step(0, 1);
  vars.insert({{"PMI_RANK", "5"},
               {"PMI_SIZE", "8"},
               {"MPI_LOCALRANKID", "1"},
               {"MPI_LOCALNRANKS", "4"},
               {"MASTER_ADDR", "n0"}});
  const launch_env e = from(vars);
  EXPECT_EQ(e.launcher_name(), "mpi");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.local_size, 4);
}

TEST(launcher, open_mpi_sets_pmix_rank_too_and_is_mpi) {
  const launch_env e = from({{"OMPI_COMM_WORLD_RANK", "1"},
                             {"OMPI_COMM_WORLD_SIZE", "2"},
                             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                             {"PMIX_RANK", "1"}});
  EXPECT_EQ(e.launcher_name(), "mpi");
  EXPECT_EQ(e.rank, 1);
}

TEST(launcher, an_incomplete_pmi_is_named) {
  // A PMI rank with no local rank and no Slurm step to give it: the missing variable is named.
  EXPECT_NE(error_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}).find("MPI_LOCALRANKID is not set"), std::string::npos);
  const std::string pmix = error_of({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "x"}});
  EXPECT_NE(pmix.find("PMIX_RANK=1 is set, but no variable gives the world size"), std::string::npos) << pmix;
  EXPECT_EQ(pmix.find('\n'), std::string::npos);
}

TEST(launcher, ranks_that_disagree_on_the_world_size_are_named) {
  // A PMI size against the step's: two launches' variables in one environment.
  auto vars = slurm_step(1, 4);
  vars.insert({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  EXPECT_NE(error_of(vars).find("PMI_SIZE=2 but SLURM_STEP_NUM_TASKS=4: the ranks disagree on the world size"),
            std::string::npos)
      << error_of(vars);
  auto rank = slurm_step(1, 4);
  rank.insert({{"PMIX_RANK", "2"}});
  EXPECT_NE(error_of(rank).find("PMIX_RANK=2 but SLURM_PROCID=1"), std::string::npos) << error_of(rank);
  // Processes started with different WORLD_SIZE each read a consistent environment of their own: they
  // are told apart where they meet (NCCL's root, on rank 0: world.hpp's world_usage_error).
  EXPECT_EQ(from({{"RANK", "0"}, {"WORLD_SIZE", "4"}}).size, 4);
  EXPECT_EQ(from({{"RANK", "1"}, {"WORLD_SIZE", "2"}}).size, 2);
}

TEST(launcher, torchrun_under_srun_is_torchrun) {
  const launch_env e = from({{"RANK", "1"},
                             {"WORLD_SIZE", "2"},
                             {"TORCHELASTIC_RUN_ID", "x"},
                             {"SLURM_PROCID", "0"},
                             {"SLURM_STEP_NUM_TASKS", "1"}});
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 1);
}

TEST(launcher, contradictions_are_one_line_errors_naming_the_variable) {
  EXPECT_NE(error_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}}).find("RANK=4 is not a rank of a world of WORLD_SIZE=4"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "four"}}).find("WORLD_SIZE=four: not a rank or a count"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}}).find("WORLD_SIZE is not set"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("at least one rank"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}})
                .find("LOCAL_RANK=2 is not a rank of the LOCAL_WORLD_SIZE=2"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "8"}}).find("must number 1 to"),
            std::string::npos);
  // Several hosts and no address to meet at.
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "4"}})
                .find("set MASTER_ADDR"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "65535"}}).find("not a port"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_LOCALID", "0"}})
                .find("SLURM_STEP_TASKS_PER_NODE=(unset)"),
            std::string::npos);
  // Every message is one line.
  for (const auto& m :
       {error_of({{"RANK", "9"}, {"WORLD_SIZE", "2"}}), error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}})}) {
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace memlab
