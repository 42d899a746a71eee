#include "harness/gpu_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/text.hpp"
#include "harness/timing.hpp"
#include "harness/world.hpp"

namespace memlab {

// One GPU of the run: its properties, stream, L2 flusher and timer.
struct gpu_state {
  device_info dev;
  std::unique_ptr<cuda_stream> stream;
  std::unique_ptr<l2_flusher> flusher;
  std::unique_ptr<timer> t;
};

struct gpu_runner::state {
  std::vector<gpu_state> gpus;  // in the run's order; the first is the report's device
  gpu_state& on(int ordinal) {
    if (ordinal < 0) return gpus.front();
    for (auto& g : gpus)
      if (g.dev.ordinal == ordinal) {
        MEMLAB_CUDA_CHECK(cudaSetDevice(ordinal));
        return g;
      }
    throw std::logic_error(fmt::format("GPU {} was not opened", ordinal));
  }
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
  t.l2_flush_bytes = s_->gpus.empty() ? 0 : 2 * s_->gpus.front().dev.l2_bytes;
  t.batch_target_ms = o.batch_target_ms;
  t.max_queued_launches = o.max_queued_launches;
  t.blocking_timeout_s = o.blocking_timeout_s;
  t.nccl_tests_warmup = o.loop_warmup;
  t.nccl_tests_iters = o.loop_iters;
  t.nccl_tests_graph_launches = req.nccl_tests_graph_launches;
  return t;
}

world_info gpu_runner::world() const {
  const memlab::world& w = this_world();
  world_info out;
  out.launcher = w.env().launcher_name();
  out.size = w.size();
  out.root = w.env().root;
  out.root_from = w.env().root_from;
  out.nccl_version = memlab::world::nccl_version();
  out.rank_timeout_s = w.timeout_s();
  out.ranks = w.ranks();
  return out;
}

std::vector<device_info> gpu_runner::devices() const {
  std::vector<device_info> out;
  for (const auto& g : s_->gpus) out.push_back(g.dev);
  return out;
}

device_info gpu_runner::open(const run_request& req, std::span<const lab* const> labs, std::ostream& progress) {
  auto& s = *s_;
  const bool l2_roof = std::any_of(labs.begin(), labs.end(), [](const lab* l) { return l->roof == roof_kind::l2; });
  if (req.profile && req.progress) {
    progress << "--profile: one launch per case, no blocking kernel, no batch or graph timing\n";
  }
  const std::vector<int> ordinals = req.devices.empty() ? std::vector<int>{0} : req.devices;
  for (const int ordinal : ordinals) {
    if (std::any_of(s.gpus.begin(), s.gpus.end(), [&](const gpu_state& g) { return g.dev.ordinal == ordinal; })) continue;
    gpu_state& g = s.gpus.emplace_back();
    g.dev = open_device(ordinal);
    g.stream = std::make_unique<cuda_stream>();
    g.flusher = std::make_unique<l2_flusher>(g.dev.l2_bytes);
    g.t = std::make_unique<timer>(g.stream->get(), *g.flusher, g.dev.sm_count, g.dev.sm_default_clock_khz, !req.profile,
                                  this_world());
    if (req.measure_ceiling && !req.profile) g.dev.measured_peak_gbps = measure_copy_ceiling_gbps(g.dev, *g.t, 0.5);
    if (l2_roof && !req.profile) g.dev.measured_l2_gbps = measure_l2_ceiling_gbps(g.dev, *g.t, 0.5);
    if (req.progress) {
      std::string line = fmt::format("device {}: {}, sm_{}{}, {} SMs, theoretical {:.1f} GB/s", g.dev.ordinal,
                                     g.dev.name, g.dev.cc_major, g.dev.cc_minor, g.dev.sm_count, g.dev.peak_gbps);
      if (g.dev.measured_peak_gbps > 0) line += fmt::format(", cudaMemcpy ceiling {:.1f} GB/s", g.dev.measured_peak_gbps);
      if (g.dev.measured_l2_gbps > 0) line += fmt::format(", L2 ceiling {:.1f} GB/s", g.dev.measured_l2_gbps);
      progress << line << " (bytes = read + written)\n";
    }
  }
  return s.gpus.front().dev;
}

result gpu_runner::run(const planned_case& c, const run_request& req) {
  gpu_state& s = s_->on(c.device);
  const memlab::world& w = this_world();
  result r;
  r.device = c.device;
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
  // A distributed run: every rank runs the case or none does (a rank alone in a collective would
  // wait for the others forever). Rank 0's reason is the one its results record.
  const auto agreed = [&](std::optional<std::string> why) -> std::optional<std::string> {
    if (!w.distributed()) return why;
    if (w.all(!why.has_value())) return std::nullopt;
    return why ? *why : std::string("another rank cannot run it (its stderr says why)");
  };
  std::optional<std::string> refused;
  if (w.distributed() && !c.v->all_ranks) {
    refused = std::string(c.v->name) +
              " runs in one process (start memlab without a launcher); a run of one process per GPU runs the rungs "
              "that span every rank";
  } else {
    refused = c.l->why_not(*c.v, c.p, s.dev);
  }
  if (auto why = agreed(refused)) return skip(*why);
  const case_plan plan = c.l->plan(*c.v, c.p, s.dev);
  std::size_t free_bytes = 0, total_bytes = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t need = plan.device_bytes();
  std::optional<std::string> too_big;
  if (need > free_bytes) {
    too_big = "needs " + format_bytes(need) + " of device memory, " + format_bytes(free_bytes) + " free";
  }
  if (auto why = agreed(too_big)) return skip(*why);
  case_ctx ctx;
  std::optional<std::string> no_memory;
  try {
    ctx = prepare_case(*c.l, *c.v, c.p, s.dev, plan);
  } catch (const cuda_error& e) {
    if (e.code() != cudaErrorMemoryAllocation) throw;
    (void)cudaGetLastError();
    no_memory = "allocation failed: " + format_bytes(need) + " of device memory";
  }
  if (auto why = agreed(no_memory)) return skip(*why);
  r.policy = ctx.plan.policy;
  r.bytes = ctx.plan.bytes;
  r.hardware_bytes = ctx.plan.hardware_bytes;
  r.flops = ctx.plan.flops;
  r.model = ctx.plan.model;
  r.directions = ctx.plan.directions;
  r.bus_factor = ctx.plan.bus_factor;
  const roof_kind roof = ctx.plan.roof.value_or(rung_roof);
  device_info roof_device = s.dev;  // a case's narrower link, where it has one
  if (ctx.plan.link_gbps > 0) roof_device.nvlink_gbps = ctx.plan.link_gbps;
  r.roof.name = std::string(to_string(roof));
  r.roof.kind = roof;

  // Correct first: one run on fresh random input into a poisoned output, compared with the CPU.
  reset(ctx);
  c.v->launch(ctx, s.stream->get());
  w.wait(s.stream->get());
  if (req.verify) {
    std::string diff = c.l->verify(ctx);
    if (w.distributed() && !w.all(diff.empty()) && diff.empty()) diff = "on another rank (its stderr says where)";
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
    derive(r, roof, roof_device, ctx.plan.working_set);
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
    r.graph_note = "the launch may wait on the host (host_waits): timed without the blocking kernel, not captured";
  } else {
    r.graph = s.t->graph(launch, hot_opt, r.cold.median_ms, r.graph_note);
  }
  if (c.v->loop) {
    const loop_launcher& l = *c.v->loop;
    hot_opt.loop_graph_launches = req.nccl_tests_graph_launches;
    const loop_ops ops{.enqueue = [&](int launches) { l.enqueue(ctx, launches); },
                       .wait = [&] { l.wait(ctx); },
                       .streams = l.streams(ctx)};
    std::string why_not;
    r.nccl_tests = s.t->loop(ops, hot_opt, why_not);
    if (!why_not.empty()) r.note = "nccl-tests' method " + why_not;
  }
  if (c.l->observe != nullptr) r.measured = c.l->observe(ctx);
  derive(r, roof, roof_device, ctx.plan.working_set);
  if (r.throttled_samples > 0) {
    r.note = fmt::format("{}{} cold sample(s) dropped: SM clock under 75% of the default",
                         r.note.empty() ? "" : r.note + "; ", r.throttled_samples);
  }
  return r;
}

}  // namespace memlab
