#include "harness/timing.hpp"

#include <cuda/ptx>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/error.hpp"

namespace memlab {

// Shared by host and device through pinned, mapped memory.
struct timer::host_words {
  volatile int release = 0;             // the host sets it: the blocking kernel returns
  volatile int timed_out = 0;           // the blocking kernel gave up waiting
  unsigned long long clock[2][2] = {};  // [reading][globaltimer ns, SM 0 clock64]
};

namespace {

// Spins until the host releases the stream, or gives up after `timeout_ns` (a launch that
// synchronizes, or more launches than the queue holds, would otherwise hang the run).
__global__ void block_stream_kernel(const volatile int* release, volatile int* timed_out, std::uint64_t timeout_ns) {
  const std::uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  while (*release == 0) {
    if (cuda::ptx::get_sreg_globaltimer() - t0 > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

// One CTA per SM; the one that lands on SM 0 records the global timer and SM 0's clock. Two
// readings give SM 0's clock rate over what ran between them.
__global__ void read_clock_kernel(unsigned long long* out) {
  if (cuda::ptx::get_sreg_smid() != 0) return;
  out[0] = cuda::ptx::get_sreg_globaltimer();
  out[1] = cuda::ptx::get_sreg_clock64();
}

// Releases the blocking kernel when a sample ends, also by an exception: a stream left held
// would stall every later command until the kernel's timeout.
template <class Release>
struct release_on_exit {
  Release release;
  ~release_on_exit() { release(); }
};
template <class Release>
release_on_exit(Release) -> release_on_exit<Release>;

// Launches captured into one CUDA graph per stream (thread-local capture on every stream at once) and
// instantiated: timer::graph's one stream, timer::loop's one per rank. Anything the launches do that a capture
// forbids is a failure to report (`failure`, "" when captured), never an error of the run.
class captured_graphs {
 public:
  captured_graphs(const std::vector<cudaStream_t>& streams, const std::function<void()>& enqueue)
      : streams_(streams), execs_(streams.size(), nullptr) {
    std::vector<cudaGraph_t> graphs(streams.size(), nullptr);
    std::size_t capturing = 0;
    for (; capturing < streams.size(); ++capturing) {
      const cudaError_t e = cudaStreamBeginCapture(streams[capturing], cudaStreamCaptureModeThreadLocal);
      if (e != cudaSuccess) {
        failure_ = std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(e);
        break;
      }
    }
    if (failure_.empty()) {
      try {
        enqueue();
      } catch (const std::exception& e) {
        failure_ = e.what();
      }
    }
    for (std::size_t i = 0; i < capturing; ++i) {
      const cudaError_t e = cudaStreamEndCapture(streams[i], &graphs[i]);
      if (failure_.empty() && e != cudaSuccess) failure_ = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(e);
    }
    for (std::size_t i = 0; i < graphs.size() && failure_.empty(); ++i) {
      const cudaError_t e = cudaGraphInstantiate(&execs_[i], graphs[i], 0);
      if (e != cudaSuccess) failure_ = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
    }
    for (auto g : graphs)
      if (g != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(g));
    (void)cudaGetLastError();  // a failed capture leaves its error behind: not the next launch's
  }
  captured_graphs(const captured_graphs&) = delete;
  captured_graphs& operator=(const captured_graphs&) = delete;
  ~captured_graphs() {
    for (auto e : execs_)
      if (e != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(e));
  }
  [[nodiscard]] const std::string& failure() const { return failure_; }
  // Every graph replayed `times` times, each on its stream; a point of progress after each replay.
  void replay(int times, const rank_sync& sync = one_process()) const {
    for (int l = 0; l < times; ++l) {
      for (std::size_t i = 0; i < execs_.size(); ++i) MEMLAB_CUDA_CHECK(cudaGraphLaunch(execs_[i], streams_[i]));
      for (cudaStream_t s : streams_) sync.progress(s);
    }
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaGraphExec_t> execs_;
  std::string failure_;
};

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The rank_sync of one process.
class local_sync final : public rank_sync {
 public:
  void wait(cudaStream_t s) const override { MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s)); }
  void barrier() const override {}
  [[nodiscard]] double broadcast(double v) const override { return v; }
  [[nodiscard]] double average(double v) const override { return v; }
  [[nodiscard]] bool all(bool v) const override { return v; }
  [[nodiscard]] bool is_distributed() const override { return false; }
};

}  // namespace

const rank_sync& one_process() {
  static const local_sync s;
  return s;
}

// Repeats `sample()` (milliseconds; negative = dropped) until the spread is small or the budget ends.
template <class Sample>
summary timer::sample_until_stable(Sample&& sample, const measure_options& opt) {
  std::vector<double> ms;
  const auto t0 = clock_type::now();
  for (std::size_t taken = 0;; ++taken) {
    const double v = sample();
    if (v >= 0) ms.push_back(v);
    const std::size_t n = ms.size();
    // Summaries sort: re-check every few samples, not after each.
    bool stop = v >= 0 && n >= opt.min_samples && n % 5 == 0 && summarize(ms).rel_spread < opt.target_rel_spread;
    stop = stop || taken + 1 >= opt.max_samples;
    stop = stop || (n >= measure_options::floor_samples && seconds_since(t0) > opt.max_time_s);
    // Every sample dropped for far longer than the budget: stop rather than loop forever.
    stop = stop || seconds_since(t0) > 4 * opt.max_time_s + 1;
    if (sync_.is_distributed()) stop = sync_.broadcast(stop ? 1.0 : 0.0) != 0;  // rank 0 decides
    if (stop) break;
  }
  return summarize(std::move(ms));
}

timer::timer(cudaStream_t stream, l2_flusher& flusher, int sm_count, int default_clock_khz, bool blocking,
             const rank_sync& sync)
    : stream_(stream),
      flusher_(flusher),
      sync_(sync),
      sm_count_(std::max(sm_count, 1)),
      default_clock_khz_(default_clock_khz) {
  void* p = nullptr;
  MEMLAB_CUDA_CHECK(cudaHostAlloc(&p, sizeof(host_words), cudaHostAllocMapped));
  words_ = new (p) host_words();
  MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(&words_device_, p, 0));
  if (!blocking) return;
  // Load the two kernels now, not inside the first timed sample.
  block();
  release();
  read_clock(0);
  finish_sample();
}

timer::~timer() {
  if (words_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(words_));
}

void timer::block() {
  words_->release = 0;
  words_->timed_out = 0;
  auto* d = static_cast<host_words*>(words_device_);
  block_stream_kernel<<<1, 1, 0, stream_>>>(&d->release, &d->timed_out, static_cast<std::uint64_t>(timeout_s_ * 1e9));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void timer::release() { words_->release = 1; }

void timer::read_clock(int slot) {
  auto* d = static_cast<host_words*>(words_device_);
  read_clock_kernel<<<static_cast<unsigned>(sm_count_), 1, 0, stream_>>>(d->clock[slot]);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void timer::finish_sample() {
  sync_.wait(stream_);
  if (words_->timed_out != 0) {
    throw std::runtime_error("the blocking kernel timed out after " + std::to_string(timeout_s_) +
                             " s: a launch synchronized the device, or more launches were queued than the GPU accepts "
                             "while the stream is held; the sample cannot be trusted");
  }
}

template <class Enqueue>
double timer::held_sample(Enqueue&& enqueue, bool clocks) {
  block();
  release_on_exit held{[this] { release(); }};
  // Every rank holds its stream before any enqueues: the ranks start together once released. The
  // barrier comes before the launch, not between it and the release: with NCCL's network transport a
  // collective enqueued behind the held stream would keep the barrier's own collective from progressing.
  if (sync_.is_distributed()) sync_.barrier();
  if (clocks) read_clock(0);
  start_.record(stream_);
  enqueue();
  stop_.record(stream_);
  if (clocks) read_clock(1);
  release();
  finish_sample();
  return static_cast<double>(elapsed_ms(start_, stop_));
}

template <class Enqueue>
double timer::unheld_sample(Enqueue&& enqueue) {
  if (sync_.is_distributed()) sync_.barrier();  // the ranks start together
  start_.record(stream_);
  enqueue();
  stop_.record(stream_);
  sync_.wait(stream_);
  return static_cast<double>(elapsed_ms(start_, stop_));
}

int timer::launches_for(double estimate_ms, const measure_options& opt, int cap) const {
  // Every rank queues as many launches as rank 0 (their estimates differ a little).
  if (sync_.is_distributed()) estimate_ms = sync_.broadcast(estimate_ms);
  if (!(estimate_ms > 0)) return std::min(cap, 100);
  return static_cast<int>(std::clamp(std::ceil(opt.batch_target_ms / estimate_ms), 1.0, static_cast<double>(cap)));
}

cold_summary timer::cold(const enqueue_fn& launch, const measure_options& opt) {
  timeout_s_ = opt.blocking_timeout_s;
  launch(stream_);  // warm-up: module load, first touch, libraries' tuning queries
  sync_.wait(stream_);
  cold_summary out;
  std::vector<double> clocks;
  const double floor_khz = opt.throttle_threshold * default_clock_khz_;
  if (!opt.hold_stream) {
    out.time = sample_until_stable(
        [&] {
          flusher_.flush(stream_);
          sync_.wait(stream_);
          return unheld_sample([&] { launch(stream_); });
        },
        opt);
    return out;
  }
  out.time = sample_until_stable(
      [&] {
        flusher_.flush(stream_);
        sync_.wait(stream_);
        const double ms = held_sample([&] { launch(stream_); }, true);
        const auto& c = words_->clock;
        const double ns = static_cast<double>(c[1][0] - c[0][0]);
        const double khz = ns > 0 ? static_cast<double>(c[1][1] - c[0][1]) / ns * 1e6 : 0;
        // A reading of 0 means no CTA landed on SM 0 (never seen): keep the sample, unjudged.
        if (khz > 0 && default_clock_khz_ > 0 && khz < floor_khz) {
          ++out.throttled;
          return -1.0;
        }
        if (khz > 0) clocks.push_back(khz / 1e3);
        return ms;
      },
      opt);
  if (!clocks.empty()) {
    std::sort(clocks.begin(), clocks.end());
    out.sm_clock_mhz = quantile_sorted(clocks, 0.5);
  }
  return out;
}

summary timer::once(const enqueue_fn& launch) {
  flusher_.flush(stream_);
  sync_.wait(stream_);
  start_.record(stream_);
  launch(stream_);
  stop_.record(stream_);
  sync_.wait(stream_);
  return summarize({static_cast<double>(elapsed_ms(start_, stop_))});
}

summary timer::batch(const enqueue_fn& launch, const measure_options& opt, double estimate_ms) {
  timeout_s_ = opt.blocking_timeout_s;
  const int k = launches_for(estimate_ms, opt, opt.max_queued_launches);
  for (int i = 0; i < k; ++i) launch(stream_);  // warm-up batch: warms the L2 and the launch path
  sync_.wait(stream_);
  return sample_until_stable(
      [&] {
        const auto all = [&] {
          for (int i = 0; i < k; ++i) launch(stream_);
        };
        return (opt.hold_stream ? held_sample(all, false) : unheld_sample(all)) / k;
      },
      opt);
}

summary timer::graph(const enqueue_fn& launch, const measure_options& opt, double estimate_ms, std::string& why_not) {
  timeout_s_ = opt.blocking_timeout_s;
  const int k = launches_for(estimate_ms, opt, 2000);
  const captured_graphs g({stream_}, [&] {
    for (int i = 0; i < k; ++i) launch(stream_);
  });
  if (!g.failure().empty()) {
    why_not = "cannot be captured in a CUDA graph: " + g.failure();
    return {};
  }
  g.replay(1);  // warm-up
  sync_.wait(stream_);
  return sample_until_stable([&] { return held_sample([&] { g.replay(1); }, false) / k; }, opt);
}

summary timer::loop(const loop_ops& ops, const measure_options& opt, std::string& why_not) {
  ops.enqueue(opt.loop_warmup);  // nccl-tests' warm-up, then its sync
  ops.wait();
  const int iters = opt.loop_iters;
  const auto per_launch = [&](double seconds, int launches) {
    const double ms = seconds * 1e3 / launches;
    return sync_.is_distributed() ? sync_.average(ms) : ms;
  };
  if (opt.loop_graph_launches <= 0) {
    return sample_until_stable(
        [&] {
          if (sync_.is_distributed()) sync_.barrier();
          const auto t0 = clock_type::now();
          ops.enqueue(iters);
          ops.wait();
          return per_launch(seconds_since(t0), iters);
        },
        opt);
  }
  // nccl-tests -G: the iterations captured once, each stream into its own graph (thread-local capture
  // on every stream at once, as nccl-tests does for -g N), then every sample replays each graph
  // loop_graph_launches times on its stream and waits for all.
  const captured_graphs g(ops.streams, [&] { ops.enqueue(iters); });
  // Every rank samples or none does: the samples' collectives must meet.
  if (!sync_.all(g.failure().empty())) {
    why_not = g.failure().empty() ? "another rank could not capture its loop in a CUDA graph"
                                  : "cannot be captured in a CUDA graph: " + g.failure();
    return {};
  }
  g.replay(1);  // the graphs' upload, untimed
  ops.wait();
  return sample_until_stable(
      [&] {
        if (sync_.is_distributed()) sync_.barrier();
        const auto t0 = clock_type::now();
        g.replay(opt.loop_graph_launches, sync_);
        ops.wait();
        return per_launch(seconds_since(t0), iters * opt.loop_graph_launches);
      },
      opt);
}

}  // namespace memlab
