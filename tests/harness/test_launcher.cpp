// Who started memlab: torchrun, a plain environment, Slurm's srun, Open MPI or MPICH, or no launcher;
// the rank, the world and the local rank each gives, where the ranks meet, and the one-line errors
// for an environment that contradicts itself. No GPU, no NCCL.
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
  const launch_env e = from({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"NCCL_COMM_ID", "10.0.0.1:4000"}, {"MASTER_ADDR", "x"}});
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
  const launch_env m =
      from({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}});
  EXPECT_EQ(m.launcher, "mpi");
  EXPECT_EQ(m.size, 2);
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
  for (const auto& m : {error_of({{"RANK", "9"}, {"WORLD_SIZE", "2"}}), error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}})}) {
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace memlab
