#include "harness/gpu_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/text.hpp"
#include "harness/timing.hpp"

namespace memlab {

struct gpu_runner::state {
  device_info dev;
  std::unique_ptr<cuda_stream> stream;
  std::unique_ptr<l2_flusher> flusher;
  std::unique_ptr<timer> t;
};

gpu_runner::gpu_runner() : s_(std::make_unique<state>()) {}
gpu_runner::~gpu_runner() = default;

measure_options cold_options(double max_time_s) {
  measure_options o;
  o.max_time_s = max_time_s / 2;
  return o;
}

measure_options hot_options(double max_time_s) {
  measure_options o;
  o.max_time_s = max_time_s / 4;
  return o;
}

timing_info gpu_runner::timing(const run_request& req) const {
  const measure_options o = cold_options(req.max_time_s);
  timing_info t;
  t.max_time_s = req.max_time_s;
  t.target_rel_spread = o.target_rel_spread;
  t.min_samples = o.min_samples;
  t.max_samples = o.max_samples;
  t.throttle_threshold = o.throttle_threshold;
  t.l2_flush_bytes = 2 * s_->dev.l2_bytes;
  t.batch_target_ms = o.batch_target_ms;
  t.max_queued_launches = o.max_queued_launches;
  t.blocking_timeout_s = o.blocking_timeout_s;
  return t;
}

device_info gpu_runner::open(const run_request& req, std::span<const lab* const> labs, std::ostream& progress) {
  auto& s = *s_;
  s.dev = open_device(req.device);
  s.stream = std::make_unique<cuda_stream>();
  s.flusher = std::make_unique<l2_flusher>(s.dev.l2_bytes);
  if (req.profile) {
    if (req.progress) progress << "--profile: one launch per case, no blocking kernel, no batch or graph timing\n";
  }
  s.t = std::make_unique<timer>(s.stream->get(), *s.flusher, s.dev.sm_count, s.dev.sm_default_clock_khz, !req.profile);
  if (req.measure_ceiling && !req.profile) s.dev.measured_peak_gbps = measure_copy_ceiling_gbps(s.dev, *s.t, 0.5);
  const bool l2_roof = std::any_of(labs.begin(), labs.end(), [](const lab* l) { return l->roof == roof_kind::l2; });
  if (l2_roof && !req.profile) s.dev.measured_l2_gbps = measure_l2_ceiling_gbps(s.dev, *s.t, 0.5);
  if (req.progress) {
    std::string line = fmt::format("device {}: {}, sm_{}{}, {} SMs, theoretical {:.1f} GB/s", s.dev.ordinal, s.dev.name,
                                   s.dev.cc_major, s.dev.cc_minor, s.dev.sm_count, s.dev.peak_gbps);
    if (s.dev.measured_peak_gbps > 0) line += fmt::format(", cudaMemcpy ceiling {:.1f} GB/s", s.dev.measured_peak_gbps);
    if (s.dev.measured_l2_gbps > 0) line += fmt::format(", L2 ceiling {:.1f} GB/s", s.dev.measured_l2_gbps);
    progress << line << " (bytes = read + written)\n";
  }
  return s.dev;
}

result gpu_runner::run(const planned_case& c, const run_request& req) {
  auto& s = *s_;
  result r;
  r.lab = std::string(c.l->name);
  r.variant = std::string(c.v->name);
  r.peer = c.v->peer;
  r.params = c.l->params(c.p, c.v);  // the axes the rung ignores: not applicable
  const roof_kind rung_roof = c.v->roof.value_or(c.l->roof);
  r.roof.name = std::string(to_string(rung_roof));  // the case's own roof once planned
  r.roof.kind = rung_roof;
  const auto skip = [&](std::string why) {
    r.status = result_status::skipped;
    r.note = std::move(why);
    return r;
  };
  if (auto why = c.l->why_not(*c.v, c.p, s.dev)) return skip(*why);
  const case_plan plan = c.l->plan(*c.v, c.p, s.dev);
  std::size_t free_bytes = 0, total_bytes = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t need = plan.device_bytes();
  if (need > free_bytes) {
    return skip("needs " + format_bytes(need) + " of device memory, " + format_bytes(free_bytes) + " free");
  }
  case_ctx ctx;
  try {
    ctx = prepare_case(*c.l, *c.v, c.p, s.dev, plan);
  } catch (const cuda_error& e) {
    if (e.code() != cudaErrorMemoryAllocation) throw;
    (void)cudaGetLastError();
    return skip("allocation failed: " + format_bytes(need) + " of device memory");
  }
  r.policy = ctx.plan.policy;
  r.bytes = ctx.plan.bytes;
  r.hardware_bytes = ctx.plan.hardware_bytes;
  r.flops = ctx.plan.flops;
  r.model = ctx.plan.model;
  r.directions = ctx.plan.directions;
  r.bus_factor = ctx.plan.bus_factor;
  const roof_kind roof = ctx.plan.roof.value_or(rung_roof);
  r.roof.name = std::string(to_string(roof));
  r.roof.kind = roof;

  // Correct first: one run on fresh random input into a poisoned output, compared with the CPU.
  reset(ctx);
  c.v->launch(ctx, s.stream->get());
  s.stream->synchronize();
  if (req.verify) {
    const std::string diff = c.l->verify(ctx);
    if (!diff.empty()) {
      r.status = result_status::failed;
      r.note = "verification failed: " + diff;
      return r;
    }
    r.verified = true;
  }

  const enqueue_fn launch = [&](cudaStream_t st) { c.v->launch(ctx, st); };
  if (req.profile) {
    r.cold = s.t->once(launch);
    r.graph_note = "--profile: no batch or graph timing";
    if (c.l->observe != nullptr) r.measured = c.l->observe(ctx);
    derive(r, roof, s.dev, ctx.plan.working_set);
    return r;
  }
  measure_options cold_opt = cold_options(req.max_time_s), hot_opt = hot_options(req.max_time_s);
  cold_opt.hold_stream = hot_opt.hold_stream = !ctx.plan.host_waits;
  const cold_summary cold = s.t->cold(launch, cold_opt);
  r.cold = cold.time;
  r.sm_clock_mhz = cold.sm_clock_mhz;
  r.throttled_samples = cold.throttled;
  r.batch = s.t->batch(launch, hot_opt, r.cold.median_ms);
  if (ctx.plan.host_waits) {
    r.graph_note = "the launch waits on the host (host_waits): timed without the blocking kernel, not captured";
  } else {
    r.graph = s.t->graph(launch, hot_opt, r.cold.median_ms, r.graph_note);
  }
  if (c.l->observe != nullptr) r.measured = c.l->observe(ctx);
  derive(r, roof, s.dev, ctx.plan.working_set);
  if (r.throttled_samples > 0) {
    r.note = fmt::format("{} cold sample(s) dropped: SM clock under 75% of the default", r.throttled_samples);
  }
  return r;
}

}  // namespace memlab
