#include "harness/launcher.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace memlab {

namespace {

// A whole non-negative number, or nullopt.
std::optional<long> number(std::string_view s) {
  long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

struct reader {
  const env_lookup& get;
  const char* raw(const char* name) const { return get(name); }
  bool has(const char* name) const { return get(name) != nullptr; }
  // The variable as a count; `fallback` when unset; an error naming it when it is not one.
  int count(const char* name, std::optional<int> fallback = std::nullopt) const {
    const char* v = get(name);
    if (v == nullptr) {
      if (fallback) return *fallback;
      throw std::invalid_argument(fmt::format("{} is not set (the launcher sets it for every rank)", name));
    }
    const auto n = number(v);
    if (!n || *n > 1'000'000) throw std::invalid_argument(fmt::format("{}={}: not a rank or a count", name, v));
    return static_cast<int>(*n);
  }
};

// Slurm's tasks per node, "4", "4(x2),3": the count of node `node`; nullopt when unreadable.
std::optional<int> slurm_tasks_on_node(std::string_view spec, int node) {
  int index = 0;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    long repeat = 1;
    if (const auto paren = item.find("(x"); paren != std::string_view::npos && item.back() == ')') {
      const auto r = number(item.substr(paren + 2, item.size() - paren - 3));
      if (!r) return std::nullopt;
      repeat = *r;
      item = item.substr(0, paren);
    }
    const auto tasks = number(item);
    if (!tasks) return std::nullopt;
    if (node < index + repeat) return static_cast<int>(*tasks);
    index += static_cast<int>(repeat);
  }
  return std::nullopt;
}

void check_ranks(const launch_env& e, std::string_view rank_var, std::string_view size_var, std::string_view local_var,
                 std::string_view local_size_var) {
  if (e.size < 1) throw std::invalid_argument(fmt::format("{}={}: a world has at least one rank", size_var, e.size));
  if (e.rank >= e.size) {
    throw std::invalid_argument(
        fmt::format("{}={} is not a rank of a world of {}={} ranks", rank_var, e.rank, size_var, e.size));
  }
  if (e.local_size < 1 || e.local_size > e.size) {
    throw std::invalid_argument(fmt::format("{}={}: the ranks on this host must number 1 to {}={}", local_size_var,
                                            e.local_size, size_var, e.size));
  }
  if (e.local_rank >= e.local_size) {
    throw std::invalid_argument(fmt::format("{}={} is not a rank of the {}={} on this host", local_var, e.local_rank,
                                            local_size_var, e.local_size));
  }
}

// A Slurm job step's ranks: SLURM_PROCID of SLURM_STEP_NUM_TASKS, SLURM_LOCALID of the node's count in
// SLURM_STEP_TASKS_PER_NODE.
void read_slurm_step(const reader& env, launch_env& e) {
  e.launcher = "slurm";
  e.rank = env.count("SLURM_PROCID");
  e.size = env.count("SLURM_STEP_NUM_TASKS");
  e.local_rank = env.count("SLURM_LOCALID");
  const int node = env.count("SLURM_NODEID", 0);
  const char* per_node = env.raw("SLURM_STEP_TASKS_PER_NODE");
  const auto local = per_node != nullptr ? slurm_tasks_on_node(per_node, node) : std::nullopt;
  if (!local) {
    throw std::invalid_argument(fmt::format("SLURM_STEP_TASKS_PER_NODE={}: cannot tell how many ranks run on node {}",
                                            per_node != nullptr ? per_node : "(unset)", node));
  }
  e.local_size = *local;
  check_ranks(e, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE");
}

// A PMI's rank (and size, where it gives one) against the Slurm step's: srun sets both alike; a
// difference means the variables come from two launches (an mpirun inside an srun step's shell).
void agree_with_step(const reader& env, const launch_env& e, const char* rank_var, const char* size_var) {
  if (const int rank = env.count(rank_var); rank != e.rank) {
    throw std::invalid_argument(
        fmt::format("{}={} but SLURM_PROCID={}: the variables of two launches", rank_var, rank, e.rank));
  }
  if (size_var != nullptr && env.has(size_var)) {
    if (const int size = env.count(size_var); size != e.size) {
      throw std::invalid_argument(fmt::format("{}={} but SLURM_STEP_NUM_TASKS={}: the ranks disagree on the world size",
                                              size_var, size, e.size));
    }
  }
}

bool slurm_step(const reader& env) { return env.has("SLURM_PROCID") && env.has("SLURM_STEP_NUM_TASKS"); }

}  // namespace

std::string launch_env::launcher_name() const { return pmi.empty() ? launcher : fmt::format("{} ({})", launcher, pmi); }

std::string launch_env::describe() const {
  if (launcher.empty()) return "one process";
  return fmt::format("rank {} of {} ({}, local rank {} of {})", rank, size, launcher_name(), local_rank, local_size);
}

launch_env detect_launch(const env_lookup& get) {
  const reader env{get};
  launch_env e;
  if (env.has("RANK") || env.has("WORLD_SIZE")) {
    e.launcher = env.has("TORCHELASTIC_RUN_ID") ? "torchrun" : "env";
    e.rank = env.count("RANK");
    e.size = env.count("WORLD_SIZE");
    e.local_rank = env.count("LOCAL_RANK", e.rank);
    e.local_size = env.count("LOCAL_WORLD_SIZE", e.size);  // unset: every rank on this host
    check_ranks(e, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  } else if (env.has("OMPI_COMM_WORLD_RANK")) {
    e.launcher = "mpi";
    e.rank = env.count("OMPI_COMM_WORLD_RANK");
    e.size = env.count("OMPI_COMM_WORLD_SIZE");
    e.local_rank = env.count("OMPI_COMM_WORLD_LOCAL_RANK");
    e.local_size = env.count("OMPI_COMM_WORLD_LOCAL_SIZE");
    check_ranks(e, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                "OMPI_COMM_WORLD_LOCAL_SIZE");
  } else if (env.has("PMI_RANK") && (env.has("MPI_LOCALRANKID") || !slurm_step(env))) {
    // MPICH's Hydra (or Intel MPI's) gives every variable; a PMI rank alone, outside a Slurm step, is
    // missing its local rank, and the error names it.
    e.launcher = "mpi";
    e.rank = env.count("PMI_RANK");
    e.size = env.count("PMI_SIZE");
    e.local_rank = env.count("MPI_LOCALRANKID");
    e.local_size = env.count("MPI_LOCALNRANKS");
    check_ranks(e, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  } else if (env.has("PMI_RANK")) {
    read_slurm_step(env, e);  // srun --mpi=pmi2: PMI_RANK and PMI_SIZE, the local rank from the step
    e.pmi = "pmi2";
    agree_with_step(env, e, "PMI_RANK", "PMI_SIZE");
  } else if (env.has("PMIX_RANK") && slurm_step(env)) {
    read_slurm_step(env, e);  // srun --mpi=pmix: PMIX_RANK alone, the rest from the step
    e.pmi = "pmix";
    agree_with_step(env, e, "PMIX_RANK", nullptr);
  } else if (env.has("PMIX_RANK")) {
    throw std::invalid_argument(fmt::format(
        "PMIX_RANK={} is set, but no variable gives the world size or the ranks on this host (PMIx keeps them in its "
        "server): start memlab with torchrun, srun (a job step sets SLURM_*), or Open MPI's mpirun (OMPI_COMM_WORLD_*)",
        env.raw("PMIX_RANK")));
  } else if (slurm_step(env)) {
    read_slurm_step(env, e);
  } else {
    return e;  // one process, no launcher
  }
  if (!e.distributed()) return e;

  // Where the ranks meet (NCCL's bootstrap root, rank 0's host).
  if (const char* id = env.raw("NCCL_COMM_ID")) {
    e.root = id;
    e.root_from = "NCCL_COMM_ID";
    if (e.root.find(':') == std::string::npos)
      throw std::invalid_argument(fmt::format("NCCL_COMM_ID={}: expected host:port", e.root));
    return e;
  }
  int port = default_root_port;
  std::string port_from = fmt::format("default port {}", default_root_port);
  if (env.has("MASTER_PORT")) {
    port = env.count("MASTER_PORT") + 1;
    if (port > 65535) throw std::invalid_argument(fmt::format("MASTER_PORT={}: not a port", port - 1));
    port_from = "MASTER_PORT + 1";
  } else if (e.launcher == "slurm" && env.has("SLURM_JOB_ID")) {
    // Jobs sharing a node should not share a port: one from the job's id.
    port = 20000 + env.count("SLURM_JOB_ID") % 20000;
    port_from = "20000 + SLURM_JOB_ID % 20000";
  }
  if (const char* addr = env.raw("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    e.root = fmt::format("{}:{}", addr, port);
    e.root_from = fmt::format("MASTER_ADDR, {}", port_from);
  } else if (e.local_size == e.size) {
    e.root = fmt::format("127.0.0.1:{}", port);
    e.root_from = fmt::format("every rank on this host, {}", port_from);
  } else {
    throw std::invalid_argument(
        fmt::format("{} ranks on several hosts ({} on this one) and no address to meet at: set MASTER_ADDR to the "
                    "first host's address (and MASTER_PORT), or NCCL_COMM_ID=host:port",
                    e.size, e.local_size));
  }
  return e;
}

}  // namespace memlab
