// The ranks of a run. One process (no launcher) is a world of one, driving one GPU or, for a lab's
// own multi-GPU rungs, several. A distributed run is one memlab process per GPU (harness/launcher.hpp
// says who started it): the world then holds NCCL communicators across the processes, formed through
// NCCL's own bootstrap (NCCL_COMM_ID), and keeps the ranks in step while they measure: every rank takes
// the same samples (rank 0 decides and tells the others), skips the same cases, and waits with a
// deadline, so a rank that dies stops the others with an error naming it, not a hang.
//
// Two communicators, each configured for its use:
//   control  non-blocking (ncclConfig_t::blocking = 0): formed within the deadline (a call returning
//            ncclInProgress is polled with ncclCommGetAsyncError), then the world's own barriers,
//            agreements and rank table, so that they never queue behind a measured collective.
//   data     the labs' collectives, configured as nccl-tests configures its communicators (blocking,
//            harness/nccl_loader.hpp: nccl_tests_config): a non-blocking communicator makes NCCL run every
//            group on a thread of its own, which is not the host path nccl-tests times. Split from control
//            (ncclCommSplit), so its formation keeps control's deadline.
// While a rank waits for the GPU (wait()), it watches the others (harness/rank_watch.hpp): a rank whose
// process has ended, on any host, is named with its host as soon as the wait cannot complete without it;
// and the wait gives up after `timeout_s` without progress, not after `timeout_s` in all: every point of
// progress (progress(): a part of the enqueued work done) starts the count again.
// NCCL is loaded on first use (harness/nccl_loader.hpp): a world of one never opens it.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/launcher.hpp"
#include "harness/result.hpp"
#include "harness/timing.hpp"

namespace memlab {

// The world could not form, or a rank stopped answering: the message names what is known (the
// address the ranks meet at, the rank that exited).
class world_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The ranks were started inconsistently (different world sizes): a usage error, found when they meet.
class world_usage_error : public world_error {
 public:
  using world_error::world_error;
};

class world final : public rank_sync {
 public:
  // A world of one: every wait is cudaStreamSynchronize, every agreement is this process's own.
  world();
  // Forms the distributed world of `env` (env.distributed()) with this rank's GPU `device`, within
  // `timeout_s` (also every later wait's deadline on lack of progress). Throws world_error: where NCCL
  // cannot be loaded, with the loader's reason; world_usage_error where the ranks were started with
  // different world sizes.
  world(const launch_env& env, int device, double timeout_s);
  ~world() override;
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  [[nodiscard]] int rank() const { return env_.rank; }
  [[nodiscard]] int size() const { return env_.size; }
  [[nodiscard]] bool distributed() const { return env_.distributed(); }
  [[nodiscard]] const launch_env& env() const { return env_; }
  [[nodiscard]] const std::vector<rank_info>& ranks() const { return ranks_; }
  [[nodiscard]] double timeout_s() const { return timeout_s_; }
  // Some ranks reach others through NCCL's network transport: the ranks span hosts, or the user turned
  // NVLink/PCIe peer access and shared memory off (NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1, the
  // stand-in for a second host). NCCL's host side may then wait on the GPU while it enqueues, so no
  // stream may be held behind a blocking kernel.
  [[nodiscard]] bool over_network() const { return over_network_; }
  // The loaded NCCL's version (ncclGetVersion: 22809 = 2.28.9); 0 where this process has not loaded NCCL.
  [[nodiscard]] static int nccl_version();

  // The communicator the labs' collectives run on, across every rank (an ncclComm_t, blocking); nullptr
  // in a world of one.
  [[nodiscard]] void* communicator() const;
  // After an NCCL call on communicator() that returned `nccl_result` (an ncclResult_t): returns when it
  // succeeded (enqueued); otherwise stops the world (fail) with NCCL's error, naming `what`. Checks the
  // return code only, as nccl-tests does.
  void enqueued(int nccl_result, const char* what) const;

  // rank_sync: waits poll with the deadline on lack of progress in a distributed world, watching the
  // other ranks.
  void wait(cudaStream_t s) const override;
  // A point of progress on `s` (what was enqueued there so far): when the GPU reaches it, the waits'
  // deadline starts again. An event recorded on `s`; nothing in a world of one.
  void progress(cudaStream_t s) const override;
  void barrier() const override;
  [[nodiscard]] double broadcast(double v) const override;
  [[nodiscard]] double average(double v) const override;
  [[nodiscard]] bool all(bool v) const override;
  [[nodiscard]] bool is_distributed() const override { return distributed(); }
  // Every rank's v, by rank (a world of one: {v}).
  [[nodiscard]] std::vector<std::uint64_t> gather(std::uint64_t v) const;

  // Aborts the communicators and throws world_error with `what` and the ranks that have exited, each
  // with its host, pid and GPU: what a rank says when the others stop answering.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  struct impl;
  // After a call on the control communicator that returned `nccl_result`: returns once it is enqueued
  // (polling while NCCL reports ncclInProgress); fails naming `what` on an error or after the deadline.
  void settle(int nccl_result, const char* what) const;
  // What a failed wait says about the other ranks: those that have exited, with host, pid and GPU.
  [[nodiscard]] std::string who_stopped() const;
  // Reads the ranks' links: fails (naming `what` and the ranks) once a rank whose process has ended has been
  // gone for a moment of a wait that began at `start`.
  void watch_ranks(std::chrono::steady_clock::time_point start, const char* what) const;
  // One double through the world's control communicator: 0 sum, 1 minimum, 2 rank 0's value.
  [[nodiscard]] double control(double v, int op) const;
  launch_env env_;
  double timeout_s_ = 0;
  std::vector<rank_info> ranks_;
  bool over_network_ = false;
  std::unique_ptr<impl> p_;
};

// The process's world: a world of one until the CLI forms a distributed one.
world& this_world();
void set_world(std::unique_ptr<world> w);

}  // namespace memlab
