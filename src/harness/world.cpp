#include "harness/world.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "harness/error.hpp"
#include "harness/runner.hpp"

#if MEMLAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace memlab {

namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// A process on this host that has exited: gone, or a zombie its parent has not reaped yet (a rank
// killed under a shell's `&` stays one until the shell waits).
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

}  // namespace

#if MEMLAB_HAVE_NCCL

// The fixed-size record each rank contributes when the world forms.
struct rank_record {
  char host[96];
  char bus_id[32];
  std::int64_t pid;
  std::int32_t rank, device;
};

struct world::impl {
  ncclComm_t data = nullptr;     // the labs' collectives
  ncclComm_t control = nullptr;  // the world's own: barriers, agreements, the rank table
  cudaStream_t stream = nullptr;  // the control operations'
  double* device_words = nullptr;  // 8 doubles of scratch for them
  double* host_words = nullptr;    // pinned
  bool aborted = false;
};

namespace {

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string out = ncclGetErrorString(r);
  if (comm != nullptr) {
    if (const char* last = ncclGetLastError(comm); last != nullptr && *last != '\0') out += fmt::format(": {}", last);
  }
  return out;
}

}  // namespace

world::world() = default;

world::world(const launch_env& env, int device, double timeout_s)
    : env_(env), timeout_s_(timeout_s), p_(std::make_unique<impl>()) {
  // NVLink multicast stays off in every process memlab starts, unless the user set it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // NCCL's bootstrap: rank 0 listens at NCCL_COMM_ID, the others connect to it.
  setenv("NCCL_COMM_ID", env.root.c_str(), 0);
  MEMLAB_CUDA_CHECK(cudaSetDevice(device));
  ncclUniqueId id{};
  if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
    throw world_error(fmt::format("rank {}: ncclGetUniqueId at {} failed: {}", env.rank, env.root, nccl_text(r, nullptr)));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const auto t0 = clock_type::now();
  ncclResult_t r = ncclCommInitRankConfig(&p_->data, env.size, id, env.rank, &config);
  ncclResult_t state = r;
  while (r == ncclSuccess || r == ncclInProgress) {
    if (ncclCommGetAsyncError(p_->data, &state) != ncclSuccess || state != ncclInProgress) break;
    if (seconds_since(t0) > timeout_s) {
      (void)ncclCommAbort(p_->data);
      p_->data = nullptr;
      throw world_error(fmt::format(
          "rank {}: the {} ranks did not meet at {} ({}) within {:.0f} s: a rank never started, failed before "
          "joining, or cannot reach that address",
          env.rank, env.size, env.root, env.root_from, timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (r != ncclSuccess && r != ncclInProgress) state = r;
  if (state != ncclSuccess) {
    const std::string why = nccl_text(state, p_->data);
    if (p_->data != nullptr) (void)ncclCommAbort(p_->data);
    p_->data = nullptr;
    throw world_error(fmt::format("rank {}: ncclCommInitRank at {} failed: {}", env.rank, env.root, why));
  }
  // The world's own communicator, so that its barriers never queue behind a measured collective.
  settle(ncclCommSplit(p_->data, 0, env.rank, &p_->control, &config), "ncclCommSplit");
  ncclResult_t split_state = ncclInProgress;
  while (split_state == ncclInProgress) {
    if (ncclCommGetAsyncError(p_->control, &split_state) != ncclSuccess) break;
    if (split_state == ncclInProgress && seconds_since(t0) > 2 * timeout_s) fail("ncclCommSplit did not complete");
  }
  if (split_state != ncclSuccess) fail("ncclCommSplit failed: " + nccl_text(split_state, p_->control));
  MEMLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&p_->stream, cudaStreamNonBlocking));
  MEMLAB_CUDA_CHECK(cudaMalloc(&p_->device_words, 8 * sizeof(double)));
  MEMLAB_CUDA_CHECK(cudaMallocHost(&p_->host_words, 8 * sizeof(double)));

  // Every rank's host, process and GPU: the header lists them, and a rank that stops answering is
  // named by its process.
  rank_record mine{};
  std::strncpy(mine.host, this_host().c_str(), sizeof mine.host - 1);
  MEMLAB_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.bus_id, sizeof mine.bus_id - 1, device));
  mine.pid = getpid();
  mine.rank = env.rank;
  mine.device = device;
  std::vector<rank_record> all(static_cast<std::size_t>(env.size));
  void* buffer = nullptr;
  MEMLAB_CUDA_CHECK(cudaMalloc(&buffer, sizeof(rank_record) * all.size()));
  auto* slot = static_cast<std::byte*>(buffer) + sizeof(rank_record) * static_cast<std::size_t>(env.rank);
  MEMLAB_CUDA_CHECK(cudaMemcpy(slot, &mine, sizeof mine, cudaMemcpyHostToDevice));
  settle(ncclAllGather(slot, buffer, sizeof(rank_record), ncclUint8, p_->control, p_->stream), "ncclAllGather");
  wait(p_->stream);
  MEMLAB_CUDA_CHECK(cudaMemcpy(all.data(), buffer, sizeof(rank_record) * all.size(), cudaMemcpyDeviceToHost));
  MEMLAB_CUDA_CHECK(cudaFree(buffer));
  for (const auto& a : all) {
    ranks_.push_back({a.rank, std::string(a.host, strnlen(a.host, sizeof a.host)), static_cast<long>(a.pid), a.device,
                      std::string(a.bus_id, strnlen(a.bus_id, sizeof a.bus_id))});
    if (ranks_.back().host != ranks_.front().host) over_network_ = true;
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
  if (p_->device_words != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFree(p_->device_words));
  if (p_->host_words != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(p_->host_words));
  if (p_->stream != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(p_->stream));
  // After an abort the communicators are gone; otherwise freed without waiting for the others.
  if (!p_->aborted) {
    if (p_->control != nullptr) (void)ncclCommAbort(p_->control);
    if (p_->data != nullptr) (void)ncclCommAbort(p_->data);
  }
}

int world::nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return 0;
  return v;
}

void* world::communicator() const { return p_ ? p_->data : nullptr; }

void world::fail(const std::string& what) const {
  const std::string me = this_host();
  std::vector<std::string> gone, elsewhere;
  for (const auto& r : ranks_) {
    if (r.rank == env_.rank) continue;
    if (r.host != me) {
      elsewhere.push_back(std::to_string(r.rank));
    } else if (exited(r.pid)) {
      gone.push_back(fmt::format("rank {} (pid {} on {}, GPU {})", r.rank, r.pid, r.host, r.device));
    }
  }
  std::string who;
  if (!gone.empty()) {
    who = fmt::format("{} {} exited", fmt::join(gone, ", "), gone.size() == 1 ? "has" : "have");
  } else {
    who = "no other rank on this host has exited";
    if (!elsewhere.empty()) who += fmt::format(" (ranks {} run on other hosts)", fmt::join(elsewhere, ", "));
  }
  if (p_ && !p_->aborted) {
    p_->aborted = true;
    if (p_->control != nullptr) (void)ncclCommAbort(p_->control);
    if (p_->data != nullptr) (void)ncclCommAbort(p_->data);
  }
  throw world_error(fmt::format("rank {}: {}: {}", env_.rank, what, who));
}

void world::settle(int nccl_result, const char* what) const {
  auto r = static_cast<ncclResult_t>(nccl_result);
  if (!distributed()) {
    if (r != ncclSuccess) throw world_error(fmt::format("{} failed: {}", what, ncclGetErrorString(r)));
    return;
  }
  const auto t0 = clock_type::now();
  for (ncclComm_t comm : {p_->data, p_->control}) {
    if (comm == nullptr) continue;
    ncclResult_t state = r;
    if (r == ncclInProgress || r == ncclSuccess) {
      while (ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress) {
        if (seconds_since(t0) > timeout_s_) fail(fmt::format("{} was not enqueued within {:.0f} s", what, timeout_s_));
        std::this_thread::yield();
      }
    }
    if (state != ncclSuccess) fail(fmt::format("{} failed: {}", what, nccl_text(state, comm)));
  }
}

void world::wait(cudaStream_t s) const {
  if (!distributed()) {
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  const auto t0 = clock_type::now();
  for (std::size_t spin = 0;; ++spin) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) MEMLAB_CUDA_CHECK(e);
    if (spin % 64 == 0) {  // cheap enough to ask often; a remote failure shows up here
      for (ncclComm_t comm : {p_->data, p_->control}) {
        if (comm == nullptr) continue;
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(comm, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress) {
          fail(fmt::format("NCCL reported an error while waiting for a collective: {}", nccl_text(state, comm)));
        }
      }
      const double waited = seconds_since(t0);
      if (waited > timeout_s_) fail(fmt::format("no answer from the other ranks within {:.0f} s", timeout_s_));
      // A stop request (torchrun signals every rank when one fails): if a rank has exited, say so now.
      if (stop_signal() != 0 && waited > 1.0) {
        for (const auto& r : ranks_) {
          if (r.rank != env_.rank && r.host == this_host() && exited(r.pid)) fail("stopped while waiting for a collective");
        }
      }
    }
    std::this_thread::yield();
  }
}

// One double through the control communicator: the sum, the minimum or rank 0's value.
double world::control(double v, int op) const {
  impl& p = *p_;
  p.host_words[0] = v;
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(p.device_words, p.host_words, sizeof(double), cudaMemcpyHostToDevice, p.stream));
  const ncclResult_t r =
      op == 2 ? ncclBroadcast(p.device_words, p.device_words, 1, ncclFloat64, 0, p.control, p.stream)
              : ncclAllReduce(p.device_words, p.device_words, 1, ncclFloat64, op == 0 ? ncclSum : ncclMin, p.control,
                              p.stream);
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
  settle(ncclAllGather(slot, buffer, 1, ncclUint64, p_->control, p_->stream), "ncclAllGather");
  wait(p_->stream);
  MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), buffer, sizeof(std::uint64_t) * out.size(), cudaMemcpyDeviceToHost));
  MEMLAB_CUDA_CHECK(cudaFree(buffer));
  return out;
}

#else  // built without NCCL: a world of one only

struct world::impl {};

world::world() = default;
world::world(const launch_env& env, int, double) : env_(env) {
  throw world_error(fmt::format(
      "{}: memlab was built without NCCL, which a run of one process per GPU needs (pip install nvidia-nccl-cu13, or "
      "apt-get install libnccl-dev, then configure and build again)",
      env.describe()));
}
world::~world() = default;
int world::nccl_version() { return 0; }
void* world::communicator() const { return nullptr; }
void world::fail(const std::string& what) const { throw world_error(fmt::format("rank {}: {}", env_.rank, what)); }
void world::settle(int, const char*) const {}
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
