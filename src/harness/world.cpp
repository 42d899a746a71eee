#include "harness/world.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <thread>

#include "harness/error.hpp"
#include "harness/nccl_loader.hpp"
#include "harness/rank_watch.hpp"

namespace memlab {

namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// A process on this host that has exited: gone, or a zombie its parent has not reaped yet (a rank
// killed under a shell's `&` stays one until the shell waits). For ranks whose links are not up yet.
bool exited(long pid) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// How long a wait goes on after a rank's process has ended: its last collective may still be finishing
// here (it exits once its own GPU is done, a moment before this one's); a wait that needs it never ends.
constexpr double exited_grace_s = 2.0;

// "rank 2 (pid 4567 on node-b, GPU 2)".
std::string named(const rank_info& r) {
  return fmt::format("rank {} (pid {} on {}, GPU {})", r.rank, r.pid, r.host, r.device);
}

}  // namespace

#if MEMLAB_HAVE_NCCL

// The fixed-size record each rank contributes when the world forms.
struct rank_record {
  char host[96];
  char bus_id[32];
  char link_host[48];  // where its rank_links listens: a numeric address ...
  std::int64_t pid;
  std::int32_t rank, device;
  std::int32_t link_port;  // ... and port
};

struct world::impl {
  const nccl_api* api = nullptr;
  ncclComm_t control = nullptr;    // non-blocking: formation, barriers, agreements, the rank table
  ncclComm_t data = nullptr;       // blocking, nccl-tests' settings: the labs' collectives
  cudaStream_t stream = nullptr;   // the control operations'
  double* device_words = nullptr;  // 8 doubles of scratch for them
  double* host_words = nullptr;    // pinned
  bool aborted = false;
  std::unique_ptr<rank_links> links;
  // Ranks whose process has ended, and when this one saw it.
  std::vector<int> ended;
  std::optional<clock_type::time_point> ended_seen;
  // Points of progress enqueued and not reached yet, oldest first; their events, to reuse.
  std::deque<cudaEvent_t> pending;
  std::vector<cudaEvent_t> spare;

  // Points of progress the GPU has reached since the last call (removed from `pending`).
  int reached() {
    int n = 0;
    while (!pending.empty() && cudaEventQuery(pending.front()) == cudaSuccess) {
      spare.push_back(pending.front());
      pending.pop_front();
      ++n;
    }
    (void)cudaGetLastError();  // a query of an event not reached leaves cudaErrorNotReady behind
    return n;
  }
  void abort_all() {
    if (aborted) return;
    aborted = true;
    if (data != nullptr) (void)api->ncclCommAbort(data);
    if (control != nullptr) (void)api->ncclCommAbort(control);
  }
};

namespace {

std::string nccl_text(const nccl_api& api, ncclResult_t r, ncclComm_t comm) {
  std::string out = api.ncclGetErrorString(r);
  if (const char* last = api.ncclGetLastError(comm); last != nullptr && *last != '\0') out += fmt::format(": {}", last);
  return out;
}

// NCCL's root (on rank 0) refuses ranks that bring another world size, and says so in its last error.
bool sizes_disagree(const nccl_api& api) {
  const char* last = api.ncclGetLastError(nullptr);
  return last != nullptr && std::strstr(last, "mismatch in info from procs") != nullptr;
}

// Polls `comm` (a non-blocking call's) until NCCL no longer reports it in progress, or `give_up()`.
template <class GiveUp>
ncclResult_t poll_async(const nccl_api& api, ncclComm_t comm, ncclResult_t returned, GiveUp&& give_up) {
  if (returned != ncclSuccess && returned != ncclInProgress) return returned;
  ncclResult_t state = ncclInProgress;
  while (api.ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress) {
    give_up();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return state;
}

// The host of "host:port" or "[v6]:port".
std::string host_of(const std::string& root) {
  if (!root.empty() && root.front() == '[') return root.substr(1, root.find(']') - 1);
  return root.substr(0, root.rfind(':'));
}

}  // namespace

world::world() = default;

world::world(const launch_env& env, int device, double timeout_s)
    : env_(env), timeout_s_(timeout_s), p_(std::make_unique<impl>()) {
  // NVLink multicast stays off in every process memlab starts, unless the user set it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // NCCL's bootstrap: rank 0 listens at NCCL_COMM_ID, the others connect to it.
  setenv("NCCL_COMM_ID", env.root.c_str(), 0);
  try {
    p_->api = &nccl();
  } catch (const std::runtime_error& e) {
    throw world_error(fmt::format("{}: a run of one process per GPU needs NCCL: {}", env.describe(), e.what()));
  }
  const nccl_api& api = *p_->api;
  MEMLAB_CUDA_CHECK(cudaSetDevice(device));
  ncclUniqueId id{};
  if (const ncclResult_t r = api.ncclGetUniqueId(&id); r != ncclSuccess) {
    throw world_error(
        fmt::format("rank {}: ncclGetUniqueId at {} failed: {}", env.rank, env.root, nccl_text(api, r, nullptr)));
  }
  // The control communicator, non-blocking: the ranks meet within the deadline.
  ncclConfig_t nonblocking = nccl_tests_config(0);
  const auto t0 = clock_type::now();
  const ncclResult_t init = api.ncclCommInitRankConfig(&p_->control, env.size, id, env.rank, &nonblocking);
  const ncclResult_t met = poll_async(api, p_->control, init, [&] {
    if (env.rank == 0 && sizes_disagree(api)) {
      p_->abort_all();
      throw world_usage_error(
          fmt::format("rank 0: the ranks were started with different world sizes (this one {}: {}); NCCL's root: {}",
                      env.size, env.describe(), api.ncclGetLastError(nullptr)));
    }
    if (seconds_since(t0) > timeout_s) {
      p_->abort_all();
      throw world_error(fmt::format(
          "rank {}: the {} ranks did not meet at {} ({}) within {:.0f} s: a rank never started, was started with "
          "another world size, failed before joining, or cannot reach that address",
          env.rank, env.size, env.root, env.root_from, timeout_s));
    }
  });
  if (met != ncclSuccess) {
    const std::string why = nccl_text(api, met, p_->control);
    p_->abort_all();
    throw world_error(fmt::format("rank {}: ncclCommInitRank at {} failed: {}", env.rank, env.root, why));
  }
  // The data communicator, blocking as nccl-tests' are; split from control, whose non-blocking mode the
  // split keeps: polled on the parent, within the deadline.
  ncclConfig_t blocking = nccl_tests_config(1);
  const ncclResult_t split = api.ncclCommSplit(p_->control, 0, env.rank, &p_->data, &blocking);
  const ncclResult_t formed = poll_async(api, p_->control, split, [&] {
    if (seconds_since(t0) > 2 * timeout_s) fail("ncclCommSplit (the data communicator) did not complete");
  });
  if (formed != ncclSuccess || p_->data == nullptr) {
    fail("ncclCommSplit (the data communicator) failed: " + nccl_text(api, formed, p_->control));
  }
  MEMLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&p_->stream, cudaStreamNonBlocking));
  MEMLAB_CUDA_CHECK(cudaMalloc(&p_->device_words, 8 * sizeof(double)));
  MEMLAB_CUDA_CHECK(cudaMallocHost(&p_->host_words, 8 * sizeof(double)));

  // Every rank's host, process, GPU and link: the header lists them, and a rank that stops answering
  // is named by them.
  try {
    p_->links = std::make_unique<rank_links>(host_of(env.root));
  } catch (const std::runtime_error& e) {
    fail(fmt::format("cannot watch the other ranks: {}", e.what()));
  }
  rank_record mine{};
  std::strncpy(mine.host, this_host().c_str(), sizeof mine.host - 1);
  std::strncpy(mine.link_host, p_->links->listening().host.c_str(), sizeof mine.link_host - 1);
  mine.link_port = p_->links->listening().port;
  MEMLAB_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.bus_id, sizeof mine.bus_id - 1, device));
  mine.pid = getpid();
  mine.rank = env.rank;
  mine.device = device;
  std::vector<rank_record> all(static_cast<std::size_t>(env.size));
  void* buffer = nullptr;
  MEMLAB_CUDA_CHECK(cudaMalloc(&buffer, sizeof(rank_record) * all.size()));
  auto* slot = static_cast<std::byte*>(buffer) + sizeof(rank_record) * static_cast<std::size_t>(env.rank);
  MEMLAB_CUDA_CHECK(cudaMemcpy(slot, &mine, sizeof mine, cudaMemcpyHostToDevice));
  settle(api.ncclAllGather(slot, buffer, sizeof(rank_record), ncclUint8, p_->control, p_->stream), "ncclAllGather");
  wait(p_->stream);
  MEMLAB_CUDA_CHECK(cudaMemcpy(all.data(), buffer, sizeof(rank_record) * all.size(), cudaMemcpyDeviceToHost));
  MEMLAB_CUDA_CHECK(cudaFree(buffer));
  std::vector<link_address> addresses;
  for (const auto& a : all) {
    ranks_.push_back({a.rank, std::string(a.host, strnlen(a.host, sizeof a.host)), static_cast<long>(a.pid), a.device,
                      std::string(a.bus_id, strnlen(a.bus_id, sizeof a.bus_id))});
    addresses.push_back({std::string(a.link_host, strnlen(a.link_host, sizeof a.link_host)), a.link_port});
    if (ranks_.back().host != ranks_.front().host) over_network_ = true;
  }
  try {
    p_->links->connect(env.rank, addresses, timeout_s);
  } catch (const std::runtime_error& e) {
    fail(fmt::format("cannot watch the other ranks: {}", e.what()));
  }
  const auto on = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::string(v) == "1";
  };
  if (on("NCCL_P2P_DISABLE") && on("NCCL_SHM_DISABLE")) over_network_ = true;
  // Each control collective once, now: NCCL connects a communicator's channels when a collective first
  // needs them (runtime connect), and over its network transport the connection's setup waits on the
  // device. The timer's barrier runs while the timed stream is held by the blocking kernel, so a first
  // barrier there would wait for a kernel that waits for it (seen: four ranks over sockets, the
  // blocking kernel's 10 s timeout on every rank in the first held sample).
  barrier();
  (void)world::all(true);
  (void)broadcast(0);
}

world::~world() {
  if (!p_) return;
  for (cudaEvent_t e : p_->pending) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
  for (cudaEvent_t e : p_->spare) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
  if (p_->device_words != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFree(p_->device_words));
  if (p_->host_words != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(p_->host_words));
  if (p_->stream != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(p_->stream));
  // Freed without waiting for the others (after an abort they are gone already).
  p_->abort_all();
}

int world::nccl_version() { return nccl_loaded_version(); }

void* world::communicator() const { return p_ ? p_->data : nullptr; }

std::string world::who_stopped() const {
  std::vector<std::string> gone;
  if (p_->links) {
    for (const int q : p_->ended) gone.push_back(named(ranks_[static_cast<std::size_t>(q)]));
  } else {
    // Before the links are up (the world is forming): the ranks on this host whose process is gone.
    const std::string me = this_host();
    for (const auto& r : ranks_)
      if (r.rank != env_.rank && r.host == me && exited(r.pid)) gone.push_back(named(r));
  }
  if (!gone.empty()) return fmt::format("{} {} exited", fmt::join(gone, ", "), gone.size() == 1 ? "has" : "have");
  if (p_->links) return "every other rank is still running (its link is open)";
  return "no other rank on this host has exited";
}

void world::fail(const std::string& what) const {
  if (p_) {
    // What the links know by now, then the communicators go.
    if (p_->links) {
      for (const int q : p_->links->ended()) p_->ended.push_back(q);
    }
    const std::string who = who_stopped();
    p_->abort_all();
    throw world_error(fmt::format("rank {}: {}: {}", env_.rank, what, who));
  }
  throw world_error(fmt::format("rank {}: {}", env_.rank, what));
}

void world::watch_ranks(std::chrono::steady_clock::time_point start, const char* what) const {
  if (!p_->links) return;
  const auto now = clock_type::now();
  for (const int q : p_->links->ended()) {
    p_->ended.push_back(q);
    if (!p_->ended_seen) p_->ended_seen = now;
  }
  // A rank whose process has ended: what this one waits for completes only if that rank had done its part.
  if (p_->ended_seen &&
      std::chrono::duration<double>(now - std::max(*p_->ended_seen, start)).count() > exited_grace_s) {
    fail(what);
  }
}

void world::settle(int nccl_result, const char* what) const {
  const nccl_api& api = *p_->api;
  const auto t0 = clock_type::now();
  const ncclResult_t state = poll_async(api, p_->control, static_cast<ncclResult_t>(nccl_result), [&] {
    watch_ranks(t0, "a rank's process ended while this one enqueued a collective");
    if (seconds_since(t0) > timeout_s_) fail(fmt::format("{} was not enqueued within {:.0f} s", what, timeout_s_));
  });
  if (state != ncclSuccess) fail(fmt::format("{} failed: {}", what, nccl_text(api, state, p_->control)));
}

void world::enqueued(int nccl_result, const char* what) const {
  if (nccl_result == ncclSuccess) return;
  const auto r = static_cast<ncclResult_t>(nccl_result);
  if (!distributed()) throw world_error(fmt::format("{} failed: {}", what, nccl().ncclGetErrorString(r)));
  fail(fmt::format("{} failed: {}", what, nccl_text(*p_->api, r, p_->data)));
}

void world::progress(cudaStream_t s) const {
  if (!distributed()) return;
  constexpr std::size_t most_pending = 256;  // beyond, the oldest points are enough to see progress by
  if (p_->pending.size() >= most_pending) return;
  cudaEvent_t e = nullptr;
  if (!p_->spare.empty()) {
    e = p_->spare.back();
    p_->spare.pop_back();
  } else {
    MEMLAB_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  MEMLAB_CUDA_CHECK(cudaEventRecord(e, s));
  p_->pending.push_back(e);
}

void world::wait(cudaStream_t s) const {
  if (!distributed()) {
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  const nccl_api& api = *p_->api;
  const auto start = clock_type::now();
  progress_deadline deadline(timeout_s_, start);
  for (std::size_t spin = 0;; ++spin) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) MEMLAB_CUDA_CHECK(e);
    if (spin % 64 != 0) {  // cheap enough to ask often; a remote failure shows up here
      std::this_thread::yield();
      continue;
    }
    const auto now = clock_type::now();
    for (ncclComm_t comm : {p_->data, p_->control}) {
      ncclResult_t state = ncclSuccess;
      if (comm != nullptr && api.ncclCommGetAsyncError(comm, &state) == ncclSuccess && state != ncclSuccess &&
          state != ncclInProgress) {
        fail(fmt::format("NCCL reported an error while waiting for a collective: {}", nccl_text(api, state, comm)));
      }
    }
    if (p_->reached() > 0) deadline.progress(now);
    watch_ranks(start, "a rank's process ended while this one waited for a collective");
    if (deadline.expired(now)) {
      fail(fmt::format("no progress for {:.0f} s while waiting for a collective (--rank-timeout)", timeout_s_));
    }
    std::this_thread::yield();
  }
}

// One double through the control communicator: the sum, the minimum or rank 0's value.
double world::control(double v, int op) const {
  impl& p = *p_;
  const nccl_api& api = *p.api;
  p.host_words[0] = v;
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(p.device_words, p.host_words, sizeof(double), cudaMemcpyHostToDevice, p.stream));
  const ncclResult_t r = op == 2
                             ? api.ncclBroadcast(p.device_words, p.device_words, 1, ncclFloat64, 0, p.control, p.stream)
                             : api.ncclAllReduce(p.device_words, p.device_words, 1, ncclFloat64,
                                                 op == 0 ? ncclSum : ncclMin, p.control, p.stream);
  settle(r, "the world's control collective");
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(p.host_words, p.device_words, sizeof(double), cudaMemcpyDeviceToHost, p.stream));
  wait(p.stream);
  return p.host_words[0];
}

void world::barrier() const {
  if (distributed()) (void)control(0, 0);
}
double world::broadcast(double v) const { return distributed() ? control(v, 2) : v; }
double world::average(double v) const { return distributed() ? control(v, 0) / env_.size : v; }
bool world::all(bool v) const { return distributed() ? control(v ? 1 : 0, 1) != 0 : v; }

std::vector<std::uint64_t> world::gather(std::uint64_t v) const {
  if (!distributed()) return {v};
  std::vector<std::uint64_t> out(static_cast<std::size_t>(env_.size));
  void* buffer = nullptr;
  MEMLAB_CUDA_CHECK(cudaMalloc(&buffer, sizeof(std::uint64_t) * out.size()));
  auto* slot = static_cast<std::uint64_t*>(buffer) + env_.rank;
  MEMLAB_CUDA_CHECK(cudaMemcpy(slot, &v, sizeof v, cudaMemcpyHostToDevice));
  settle(p_->api->ncclAllGather(slot, buffer, 1, ncclUint64, p_->control, p_->stream), "ncclAllGather");
  wait(p_->stream);
  MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), buffer, sizeof(std::uint64_t) * out.size(), cudaMemcpyDeviceToHost));
  MEMLAB_CUDA_CHECK(cudaFree(buffer));
  return out;
}

#else  // built without NCCL's headers: a world of one only

struct world::impl {};

world::world() = default;
world::world(const launch_env& env, int, double) : env_(env) {
  throw world_error(
      fmt::format("{}: a run of one process per GPU needs NCCL: {}", env.describe(), *nccl_unavailable()));
}
world::~world() = default;
int world::nccl_version() { return 0; }
void* world::communicator() const { return nullptr; }
std::string world::who_stopped() const { return {}; }
void world::fail(const std::string& what) const { throw world_error(fmt::format("rank {}: {}", env_.rank, what)); }
void world::settle(int, const char*) const {}
void world::watch_ranks(std::chrono::steady_clock::time_point, const char*) const {}
void world::enqueued(int, const char*) const {}
void world::progress(cudaStream_t) const {}
void world::wait(cudaStream_t s) const { MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s)); }
void world::barrier() const {}
double world::control(double v, int) const { return v; }
double world::broadcast(double v) const { return v; }
double world::average(double v) const { return v; }
bool world::all(bool v) const { return v; }
std::vector<std::uint64_t> world::gather(std::uint64_t v) const { return {v}; }

#endif

namespace {
std::unique_ptr<world>& world_slot() {
  static std::unique_ptr<world> w;
  return w;
}
}  // namespace

world& this_world() {
  auto& w = world_slot();
  if (!w) w = std::make_unique<world>();
  return *w;
}

void set_world(std::unique_ptr<world> w) { world_slot() = std::move(w); }

}  // namespace memlab
