// Measuring like NVBench (nvbench/detail/measure_cold.cu, measure_hot.cuh, blocking_kernel.cu,
// gpu_frequency.cxx): CUDA events on one stream, warm-up kept out, repeated until the relative
// spread is small or the time budget ends, the host's launch cost kept out of every figure.
//
// cold   before every sample the L2 is flushed; then a blocking kernel holds the stream while the
//        host enqueues a clock reading, the start event, ONE launch, the stop event and a second
//        clock reading, and only then releases it. The GPU runs them back to back: the host's
//        launch cost is not timed. The SM clock over the sample is (SM 0's clock64 ticks) over
//        (globaltimer ns) between the two readings; a sample taken under `throttle_threshold` of
//        the device's default clock is dropped and counted.
// batch  `k` launches queued behind the blocking kernel, then released: time per launch with the
//        L2 warm and no host gap between launches (k stays under what the launch queue holds
//        without blocking the host, else the host would wait on a stream the GPU is told to hold).
// graph  the same k launches captured once in a CUDA graph and launched as one: what the GPU
//        alone costs per launch. A variant that cannot be captured has no graph figure, and says why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/stats.hpp"

namespace memlab {

using enqueue_fn = std::function<void(cudaStream_t)>;
// A loop of launches the way nccl-tests runs it: `enqueue(k)` puts k launches back to back on
// `streams` (each GPU this process drives on its own stream, no joins between launches) and returns
// without waiting; `wait()` returns once every one of those streams is done.
struct loop_ops {
  std::function<void(int launches)> enqueue;
  std::function<void()> wait;
  std::vector<cudaStream_t> streams;
};

// How a timer's samples stay in step across the ranks of a distributed run (harness/world.hpp). In
// one process every call is trivial: wait is cudaStreamSynchronize, the others return their input.
class rank_sync {
 public:
  virtual ~rank_sync() = default;
  virtual void wait(cudaStream_t s) const = 0;                 // until the stream's work is done
  virtual void barrier() const = 0;                            // every rank has come this far
  [[nodiscard]] virtual double broadcast(double v) const = 0;  // rank 0's v, on every rank
  [[nodiscard]] virtual double average(double v) const = 0;    // the mean of every rank's v
  [[nodiscard]] virtual bool all(bool v) const = 0;            // v is true on every rank
  [[nodiscard]] virtual bool is_distributed() const = 0;
  // A point of progress on `s`: once the GPU reaches what was enqueued there so far, a distributed run's
  // waits start their deadline again (harness/world.hpp). Called between the parts of a long enqueue (each
  // replay of nccl-tests' graphs); nothing in one process.
  virtual void progress(cudaStream_t /*s*/) const {}
};
// The rank_sync of a process that is the whole run.
const rank_sync& one_process();

struct measure_options {
  double max_time_s = 0.25;          // wall-clock budget for one measurement (cold, batch or graph)
  double target_rel_spread = 0.005;  // stop once (p75 - p25) / median is below this ...
  std::size_t min_samples = 10;      // ... and at least this many samples were kept
  std::size_t max_samples = 5000;
  double throttle_threshold = 0.75;  // of the default SM clock
  double batch_target_ms = 1.0;      // GPU time a batch or graph sample aims at
  int max_queued_launches = 256;     // behind the blocking kernel, per batch sample
  double blocking_timeout_s = 10.0;  // the blocking kernel gives up after this (then the run fails)
  // false: the launch may wait on the host for the GPU (a copy from pageable memory), so no
  // blocking kernel holds the stream: cold samples are events around the launch after the flush
  // (host work inside the launch is timed, as it must be), without SM clock readings; a batch
  // sample is k launches between two events.
  bool hold_stream = true;
  // nccl-tests' method (its defaults: -w 1 -n 20): after `loop_warmup` launches and a sync, the host
  // clock around `loop_iters` launches back to back and the wait for the last; the mean per launch,
  // averaged over the ranks. Repeated like any sample (median over the repetitions).
  int loop_warmup = 1;
  int loop_iters = 20;
  // nccl-tests -G: > 0 captures the loop_iters launches once in a CUDA graph per stream and times
  // this many replays of them instead (the host's launch path out of the figure); 0: host launches.
  int loop_graph_launches = 0;
  // Taken even when the budget ends first, so every summary has a median.
  static constexpr std::size_t floor_samples = 3;
};

struct cold_summary {
  summary time;
  double sm_clock_mhz = 0;    // median over the samples kept
  std::size_t throttled = 0;  // samples dropped for a low SM clock
};

// Holds the stream's blocking kernel flags, the clock readings and the events. One per stream.
class timer {
 public:
  // `blocking` false: for profilers; only once() may be used then.
  // `sync`: how the ranks of a distributed run keep in step (one process: one_process()); it must
  // outlive the timer.
  timer(cudaStream_t stream, l2_flusher& flusher, int sm_count, int default_clock_khz, bool blocking = true,
        const rank_sync& sync = one_process());
  ~timer();
  timer(const timer&) = delete;
  timer& operator=(const timer&) = delete;

  cold_summary cold(const enqueue_fn& launch, const measure_options& opt);
  // One launch after an L2 flush, events around it, no blocking kernel (under a profiler, which
  // serializes launches, the blocking kernel would wait for a release that cannot come).
  summary once(const enqueue_fn& launch);
  // `estimate_ms` (e.g. the cold median) sizes the batch to about opt.batch_target_ms of GPU time.
  summary batch(const enqueue_fn& launch, const measure_options& opt, double estimate_ms);
  // samples == 0 and `why_not` set when the launches cannot be captured in a graph.
  summary graph(const enqueue_fn& launch, const measure_options& opt, double estimate_ms, std::string& why_not);
  // nccl-tests' method (measure_options::loop_*): milliseconds per launch, host clock, no blocking
  // kernel, no L2 flush; in a distributed run every rank starts after a barrier and the figure is the
  // ranks' mean, as nccl-tests averages its ranks' times. With loop_graph_launches, samples == 0 and
  // `why_not` set when the loop cannot be captured (on any rank).
  summary loop(const loop_ops& ops, const measure_options& opt, std::string& why_not);

 private:
  struct host_words;  // pinned, device-mapped words the kernels and the host share
  void block();
  void release();
  void read_clock(int slot);
  // One sample with the stream held: the blocking kernel, [a clock reading], the start event,
  // `enqueue()`, the stop event, [a clock reading], then release and wait. Milliseconds between
  // the events. Releases the stream also when `enqueue` throws.
  template <class Enqueue>
  double held_sample(Enqueue&& enqueue, bool clocks);
  // The same without the blocking kernel (measure_options::hold_stream false).
  template <class Enqueue>
  double unheld_sample(Enqueue&& enqueue);
  // Repeats `sample()` until the spread is small or the budget ends; in a distributed run rank 0
  // decides when to stop and every rank follows, so all take the same samples.
  template <class Sample>
  summary sample_until_stable(Sample&& sample, const measure_options& opt);
  void finish_sample();  // synchronizes; throws std::runtime_error when the blocking kernel timed out
  int launches_for(double estimate_ms, const measure_options& opt, int cap) const;

  cudaStream_t stream_;
  l2_flusher& flusher_;
  const rank_sync& sync_;
  int sm_count_;
  int default_clock_khz_;
  host_words* words_ = nullptr;
  void* words_device_ = nullptr;
  double timeout_s_ = 10.0;
  cuda_event start_, stop_;
};

}  // namespace memlab
