// The timing method on the GPU: what it must include and exclude, not how fast anything is.
//   - cold timing excludes the host's launch cost (a launch that spends 300 us on the host before
//     enqueuing a ~2 us kernel times as the kernel, where plain events around it time the host);
//   - the SM clock is read over every cold sample;
//   - a launch that synchronizes inside a held stream is caught by the blocking kernel's timeout,
//     and the stream works afterwards;
//   - a launch that cannot be captured gives no graph figure and a reason, and breaks nothing.
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/timing.hpp"

namespace memlab {
namespace {

__global__ void touch_kernel(unsigned* p, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

struct timing_gpu : test::gpu_test<> {
  void SetUp() override {
    test::gpu_test<>::SetUp();
    if (IsSkipped()) return;
    owned_stream = std::make_unique<cuda_stream>();
    buf = std::make_unique<device_buffer>(4096 * sizeof(unsigned));
    flusher = std::make_unique<l2_flusher>(dev.l2_bytes);
    t = std::make_unique<timer>(owned_stream->get(), *flusher, dev.sm_count, dev.sm_default_clock_khz);
  }
  void launch(cudaStream_t s) {
    touch_kernel<<<16, 256, 0, s>>>(reinterpret_cast<unsigned*>(buf->data()), 4096);
    MEMLAB_CUDA_CHECK_LAUNCH();
  }
  std::unique_ptr<cuda_stream> owned_stream;
  std::unique_ptr<device_buffer> buf;
  std::unique_ptr<l2_flusher> flusher;
  std::unique_ptr<timer> t;
};

void host_work(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST_F(timing_gpu, cold_excludes_the_hosts_launch_cost) {
  const auto slow_host = [&](cudaStream_t s) {
    host_work(std::chrono::microseconds(300));
    launch(s);
  };
  measure_options opt;
  opt.max_time_s = 0.2;
  const cold_summary cold = t->cold(slow_host, opt);
  EXPECT_LT(cold.time.median_ms, 0.1) << "300 us of host work before the launch must not be timed";
  // Events around the same launch without the blocking kernel time the host too.
  cuda_event a, b;
  a.record(owned_stream->get());
  slow_host(owned_stream->get());
  b.record(owned_stream->get());
  b.synchronize();
  EXPECT_GT(elapsed_ms(a, b), 0.25f);
}

TEST_F(timing_gpu, every_cold_sample_reads_the_sm_clock) {
  measure_options opt;
  opt.max_time_s = 0.1;
  const cold_summary cold = t->cold([&](cudaStream_t s) { launch(s); }, opt);
  ASSERT_GT(cold.time.samples, 0u);
  EXPECT_GT(cold.sm_clock_mhz, 100.0);
  EXPECT_LT(cold.sm_clock_mhz, 5000.0);
}

TEST_F(timing_gpu, batch_and_graph_time_per_launch) {
  measure_options opt;
  opt.max_time_s = 0.1;
  const auto fn = [&](cudaStream_t s) { launch(s); };
  const summary batch = t->batch(fn, opt, 0.002);
  std::string why;
  const summary graph = t->graph(fn, opt, 0.002, why);
  EXPECT_EQ(why, "");
  ASSERT_GT(batch.samples, 0u);
  ASSERT_GT(graph.samples, 0u);
  EXPECT_GT(batch.median_ms, 0.0);
  EXPECT_GT(graph.median_ms, 0.0);
  EXPECT_LT(graph.median_ms, 0.05) << "per launch, not per batch";
}

TEST_F(timing_gpu, a_launch_that_synchronizes_is_caught_not_hung) {
  measure_options opt;
  opt.max_time_s = 0.1;
  opt.blocking_timeout_s = 0.5;
  const auto syncs = [&](cudaStream_t s) {
    launch(s);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s));  // waits on the held stream
  };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW((void)t->batch(syncs, opt, 0.002), std::runtime_error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  // The stream is released: later work runs.
  launch(owned_stream->get());
  owned_stream->synchronize();
}

TEST_F(timing_gpu, a_launch_that_cannot_be_captured_has_no_graph_and_says_why) {
  measure_options opt;
  opt.max_time_s = 0.05;
  const auto captures_badly = [&](cudaStream_t s) {
    launch(s);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s));  // illegal while capturing
  };
  std::string why;
  const summary g = t->graph(captures_badly, opt, 0.002, why);
  EXPECT_EQ(g.samples, 0u);
  EXPECT_NE(why.find("cannot be captured in a CUDA graph"), std::string::npos) << why;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "no error left for the next launch";
  launch(owned_stream->get());
  owned_stream->synchronize();
}

}  // namespace
}  // namespace memlab
